// The write path: publishers encode their TU on their own thread and push it on a bounded queue;
// one `store-writer` thread drains the queue in batches, one LMDB write transaction per batch.
// Nothing but the queue hand-off is done under queueMu.
#include "store/encoding.h"
#include "store/name_index.h"
#include "store/name_search.h"
#include "store/names_table.h"
#include "store/store_check.h"
#include "store/store_impl.h"
#include "store/symbol_blocks.h"
#include "store/usrs_table.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <pthread.h>
#include <set>
#include <tuple>
#include <unordered_map>

namespace symdex {

std::pair<const uint32_t*, const uint32_t*> EncodedFile::symbolsNamed(std::string_view key) const {
    auto range = std::equal_range(
        symbolsByName.begin(), symbolsByName.end(), key, [&](const auto& a, const auto& b) {
            if constexpr (std::is_same_v<std::decay_t<decltype(a)>, uint32_t>)
                return std::string_view(symbols[a].nameKey) < b;
            else
                return a < std::string_view(symbols[b].nameKey);
        });
    return {symbolsByName.data() + (range.first - symbolsByName.begin()),
            symbolsByName.data() + (range.second - symbolsByName.begin())};
}

std::vector<uint32_t> EncodedFile::withUsr(const std::vector<std::pair<uint64_t, uint32_t>>& index,
                                           uint64_t usrHash) {
    std::vector<uint32_t> seqs;
    auto it = std::lower_bound(index.begin(), index.end(), std::pair(usrHash, uint32_t(0)));
    for (; it != index.end() && it->first == usrHash; ++it)
        seqs.push_back(it->second);
    return seqs;
}

namespace {

std::shared_ptr<const EncodedFile> encodeFile(IndexedFile& file, const std::string& owner,
                                              const ZstdDictionary* dictionary) {
    auto encoded = std::make_shared<EncodedFile>();
    encoded->ownerPath = owner;
    encoded->priority = file.priority;
    encoded->record = std::move(file.file);
    encoded->record.symbolCount = uint32_t(file.symbols.size());
    encoded->record.referenceCount = uint32_t(file.references.size());
    encoded->symbols.reserve(file.symbols.size());
    for (uint32_t seq = 0; seq < file.symbols.size(); ++seq) {
        const Symbol& symbol = file.symbols[seq];
        const uint64_t usrHash = symbol.usrHash();
        // A local has no name key: name search never finds it.
        encoded->symbols.push_back({encodeSymbol(symbol),
                                    symbol.isLocal() ? std::string() : nameKey(symbol.name),
                                    symbol.isLocal() ? std::string() : indexedName(symbol.name),
                                    usrHash, EntryRank::of(symbol).packed()});
        encoded->symbolsByUsr.emplace_back(usrHash, seq);
        if (!symbol.isLocal())
            encoded->symbolsByName.push_back(seq);
    }
    encoded->references.reserve(file.references.size());
    for (uint32_t seq = 0; seq < file.references.size(); ++seq) {
        const Reference& ref = file.references[seq];
        encoded->references.push_back({encodeReference(ref), ref.usrHash});
        encoded->refsByUsr.emplace_back(ref.usrHash, seq);
    }
    encoded->refBlocks = encodeRefBlocks(file.references);
    for (size_t begin = 0; begin < file.symbols.size(); begin += kSymbolsPerBlock) {
        const size_t end = std::min(file.symbols.size(), begin + kSymbolsPerBlock);
        std::vector<std::string_view> rows;
        for (size_t seq = begin; seq < end; ++seq)
            rows.push_back(encoded->symbols[seq].value);
        encoded->symbolBlocks.push_back(
            encodeSymbolBlock(rows, file.symbols[begin].location.line, dictionary));
    }
    const auto& symbols = encoded->symbols;
    std::sort(encoded->symbolsByName.begin(), encoded->symbolsByName.end(),
              [&](uint32_t a, uint32_t b) {
                  return std::tie(symbols[a].nameKey, a) < std::tie(symbols[b].nameKey, b);
              });
    std::sort(encoded->symbolsByUsr.begin(), encoded->symbolsByUsr.end());
    std::sort(encoded->refsByUsr.begin(), encoded->refsByUsr.end());
    return encoded;
}

} // namespace

PendingTu encodeTu(IndexedTu tu, const ZstdDictionary* dictionary) {
    PendingTu pending;
    pending.mainFile = std::move(tu.mainFile);
    pending.generation = tu.generation;
    pending.record = std::move(tu.record);
    pending.record.filesDigest = filesDigestOf(tu);
    pending.includedFiles = std::move(tu.includedFiles);
    pending.absentPaths = std::move(tu.absentPaths);
    pending.aliases = std::move(tu.aliases);
    pending.files.reserve(tu.files.size());
    for (IndexedFile& file : tu.files)
        pending.files.push_back({encodeFile(file, pending.mainFile, dictionary), 0});
    return pending;
}

size_t fileCount(const WriteOp& op) {
    if (const auto* tu = std::get_if<PendingTu>(&op))
        return std::max<size_t>(1, tu->files.size());
    const auto& edit = std::get<StoreEdit>(op);
    return std::max<size_t>(1, edit.removeFiles.size() + edit.clearFiles.size() +
                                   edit.touchFiles.size() + edit.removeAbsentPaths.size() / 64);
}

namespace {

/// Adds `value` to the sorted vector `sorted` (add) or removes it, unless it is already there
/// (or not there): how every row the writer rewrites at finish() takes an edit.
template <typename T> void applyEdit(std::vector<T>& sorted, const T& value, bool add) {
    auto at = std::lower_bound(sorted.begin(), sorted.end(), value);
    const bool present = at != sorted.end() && *at == value;
    if (add && !present)
        sorted.insert(at, value);
    else if (!add && present)
        sorted.erase(at);
}

/// applyEdit for a `usrs` row: a removal names the entry's place only (removeContents reads the
/// file's UsrTable, which does not say which targets were relations).
void editUsrEntry(std::vector<UsrEntry>& sorted, const UsrEntry& entry, bool add) {
    if (add)
        return applyEdit(sorted, entry, true);
    UsrEntry first = entry;
    first.relation = false;
    auto at = std::lower_bound(sorted.begin(), sorted.end(), first);
    if (at != sorted.end() && at->samePlace(entry))
        sorted.erase(at);
}

/// applyEdit for a `names` row's declarations, sorted by place: a removal names the place only.
void editNameEntry(std::vector<NameEntry>& sorted, const NameEntry& entry, bool add) {
    auto at = std::lower_bound(sorted.begin(), sorted.end(), entry,
                               [](const NameEntry& a, const NameEntry& b) {
                                   return std::tie(a.fileId, a.seq) < std::tie(b.fileId, b.seq);
                               });
    const bool present = at != sorted.end() && at->samePlace(entry);
    if (add && !present)
        sorted.insert(at, entry);
    else if (add)
        *at = entry;
    else if (present)
        sorted.erase(at);
}

/// The edits of one write transaction.
class WriteContext {
public:
    WriteContext(lmdb::Txn& txn, SymbolStore::Impl& store) : txn_(txn), s_(store) {
        lmdb::Cursor cursor(txn_, s_.files);
        std::string_view key, value;
        nextFileId_ = cursor.get(MDB_LAST, key, value) ? uint32_t(readBigEndian(key, 4)) + 1 : 1;
        lmdb::Cursor absent(txn_, s_.absent);
        if (absent.get(MDB_LAST, key, value)) {
            const uint32_t bucket = uint32_t(readBigEndian(key, 4));
            nextAbsentId_ = bucket * kAbsentPerBucket + uint32_t(absentBucket(bucket).size());
        }
        lmdb::Cursor names(txn_, s_.nameText);
        std::vector<std::string_view> slots;
        if (names.get(MDB_LAST, key, value)) {
            if (!decodeNameBucket(value, slots))
                throw damagedStore(s_.options.directory, "corrupt name bucket");
            nextNameId_ =
                uint32_t(readBigEndian(key, 4)) * kNamesPerBucket + uint32_t(slots.size());
        }
    }

    /// Writes the `names` and `usrs` rows this transaction changed, and the name index entries of
    /// the names that gained their first declaration or lost their last. Called once before the
    /// commit, so that a file written again in the same transaction (every re-index) keeps its
    /// names' entries rather than deleting and adding them back, and a row is written once
    /// however many files of the batch change it.
    void finish() {
        writeNameRows();
        writeNameText();
        writePostings();
        writeUsrRows();
        writeAbsentBuckets();
    }

    void writeTu(const PendingTu& tu) {
        for (const PendingFile& pending : tu.files)
            writeNewest(pending.file->record.path);
        TuRecord record = tu.record;
        record.fileIds.clear();
        record.fileIds.reserve(tu.includedFiles.size());
        for (const std::string& path : tu.includedFiles) {
            uint32_t id = fileId(path, /*create=*/false);
            if (!id) {
                // A file new to the store that another TU extracts: write its contents now if
                // that TU has published them, rather than an empty record first.
                writeNewest(path);
                id = fileId(path, /*create=*/true);
            }
            record.fileIds.push_back(id);
        }
        record.absentIds.clear();
        for (const std::string& path : tu.absentPaths)
            record.absentIds.push_back(absentId(path));
        std::sort(record.absentIds.begin(), record.absentIds.end());
        record.absentIds.erase(std::unique(record.absentIds.begin(), record.absentIds.end()),
                               record.absentIds.end());
        record.aliases.clear();
        for (const auto& [name, real] : tu.aliases) {
            auto target = std::find(tu.includedFiles.begin(), tu.includedFiles.end(), real);
            if (target != tu.includedFiles.end())
                record.aliases.push_back(
                    {absentId(name), uint32_t(target - tu.includedFiles.begin())});
        }
        txn_.put(s_.tus, fileIdKey(record.fileIds.front()),
                 encodeTuRecord(record, tu.includedFiles));
    }

    void apply(const StoreEdit& edit) {
        for (const std::string& path : edit.removeTus)
            if (uint32_t id = fileId(path, false))
                txn_.del(s_.tus, fileIdKey(id));
        for (const std::string& path : edit.removeFiles) {
            if (uint32_t id = fileId(path, false)) {
                removeContents(id);
                written_.erase(path);
                txn_.del(s_.tus, fileIdKey(id));
                txn_.del(s_.files, fileIdKey(id));
                txn_.del(s_.paths, path);
            }
            committed_.emplace_back(path, kRemoved);
        }
        for (const std::string& path : edit.clearFiles) {
            if (uint32_t id = fileId(path, false)) {
                removeContents(id);
                written_.erase(path);
                FileRecord empty;
                empty.path = path;
                txn_.put(s_.files, fileIdKey(id), encodeFileRecord(empty));
            }
            committed_.emplace_back(path, kRemoved);
        }
        for (const FileRecord& stamp : edit.touchFiles) {
            uint32_t id = fileId(stamp.path, false);
            if (!id)
                continue;
            FileRecord record = readFile(id);
            record.mtimeNs = stamp.mtimeNs;
            record.size = stamp.size;
            record.ctimeNs = stamp.ctimeNs;
            record.inode = stamp.inode;
            txn_.put(s_.files, fileIdKey(id), encodeFileRecord(record));
        }
        for (const std::string& path : edit.removeAbsentPaths)
            removeAbsentPath(path);
        for (const auto& [key, value] : edit.setMeta)
            if (key != "format" && key != SymbolStore::Impl::kOwnDictionaryKey)
                txn_.put(s_.meta, key, value);
    }

    /// Plain blocks of declarations this transaction wrote while the store had no dictionary of
    /// its own, for training one (up to what the writer still needs).
    const std::vector<std::string>& samples() const { return samples_; }
    size_t sampleBytes() const { return sampleBytes_; }

    static constexpr uint64_t kRemoved = 0;
    /// The staged versions written by this transaction, in order (kRemoved: a removal): they leave
    /// the overlay once it commits.
    std::vector<std::pair<std::string, uint64_t>>& committed() { return committed_; }

private:
    uint32_t fileId(const std::string& path, bool create) {
        if (auto found = txn_.get(s_.paths, path))
            return uint32_t(readBigEndian(*found, 4));
        if (!create)
            return 0;
        uint32_t id = nextFileId_++;
        txn_.put(s_.paths, path, fileIdKey(id));
        FileRecord record;
        record.path = path;
        txn_.put(s_.files, fileIdKey(id), encodeFileRecord(record));
        return id;
    }

    /// `absentPaths` is keyed by the path's hash (8 bytes, where the path took 60 on LevelDB),
    /// its value the ids of the paths of that hash, 4 bytes each: the one whose `absent` entry
    /// is the path is its id (format 27).
    static std::string absentPathKey(const std::string& path) {
        std::string key;
        Writer(key).fixed64(hash64(path));
        return key;
    }

    /// The ids `absentPaths` holds for the paths of `key`'s hash, and which of them is `path`'s
    /// (its index; `ids.size()`: none).
    size_t findAbsentPath(const std::string& key, const std::string& path,
                          std::vector<uint32_t>& ids) {
        ids.clear();
        if (auto found = txn_.get(s_.absentPaths, key))
            for (size_t at = 0; at + 4 <= found->size(); at += 4)
                ids.push_back(uint32_t(readBigEndian(found->substr(at, 4), 4)));
        for (size_t i = 0; i < ids.size(); ++i)
            if (absentSlot(ids[i]) == path)
                return i;
        return ids.size();
    }

    /// The slots of `absent` bucket `bucket` as this transaction has them: read and decoded once,
    /// edited in memory, written back at finish() (a TU names hundreds of absent paths, most of
    /// them in the buckets the TUs before it filled).
    std::vector<std::string>& absentBucket(uint32_t bucket) {
        auto [it, fresh] = absentBuckets_.try_emplace(bucket);
        if (fresh)
            if (auto bytes = txn_.get(s_.absent, fileIdKey(bucket)))
                if (!decodeAbsentBucket(*bytes, it->second))
                    throw damagedStore(s_.options.directory, "corrupt bucket of absent paths");
        return it->second;
    }

    /// The path of absent id `id`; "" for a free slot.
    std::string_view absentSlot(uint32_t id) {
        const std::vector<std::string>& slots = absentBucket(id / kAbsentPerBucket);
        if (id % kAbsentPerBucket >= slots.size())
            return {};
        return slots[id % kAbsentPerBucket];
    }

    void setAbsentSlot(uint32_t id, std::string path) {
        std::vector<std::string>& slots = absentBucket(id / kAbsentPerBucket);
        if (slots.size() <= id % kAbsentPerBucket)
            slots.resize(id % kAbsentPerBucket + 1);
        slots[id % kAbsentPerBucket] = std::move(path);
        absentDirty_.insert(id / kAbsentPerBucket);
    }

    void writeAbsentBuckets() {
        for (uint32_t bucket : absentDirty_) {
            const std::string value = encodeAbsentBucket(absentBuckets_.at(bucket));
            if (value.empty())
                txn_.del(s_.absent, fileIdKey(bucket));
            else
                txn_.put(s_.absent, fileIdKey(bucket), value);
        }
        absentDirty_.clear();
    }

    void putAbsentIds(const std::string& key, const std::vector<uint32_t>& ids) {
        if (ids.empty()) {
            txn_.del(s_.absentPaths, key);
            return;
        }
        std::string value;
        for (uint32_t id : ids)
            value += fileIdKey(id);
        txn_.put(s_.absentPaths, key, value);
    }

    /// The id of `path` in the table of absent paths, added if new.
    uint32_t absentId(const std::string& path) {
        const std::string key = absentPathKey(path);
        std::vector<uint32_t> ids;
        if (const size_t i = findAbsentPath(key, path, ids); i < ids.size())
            return ids[i];
        const uint32_t id = nextAbsentId_++;
        ids.push_back(id);
        putAbsentIds(key, ids);
        setAbsentSlot(id, path);
        return id;
    }

    void removeAbsentPath(const std::string& path) {
        const std::string key = absentPathKey(path);
        std::vector<uint32_t> ids;
        const size_t i = findAbsentPath(key, path, ids);
        if (i == ids.size())
            return;
        setAbsentSlot(ids[i], std::string());
        ids.erase(ids.begin() + ptrdiff_t(i));
        putAbsentIds(key, ids);
    }

    /// Writes the newest staged version of `path`, unless it is committed already or this
    /// transaction wrote it. That may be newer than the version the publication being written
    /// carried: then the newer one goes in now, and is found written when its own publication
    /// comes (Overlay::newest says why).
    void writeNewest(const std::string& path) {
        Overlay::Newest newest = s_.overlay.newest(path);
        if (!newest.staged)
            return;
        auto [it, inserted] = written_.try_emplace(path, newest.version);
        if (!inserted && it->second == newest.version)
            return;
        it->second = newest.version;
        writeFile(*newest.staged);
        committed_.emplace_back(path, newest.version);
    }

    FileRecord readFile(uint32_t id) {
        auto bytes = txn_.get(s_.files, fileIdKey(id));
        std::optional<FileRecord> record = bytes ? decodeFileRecord(*bytes) : std::nullopt;
        if (!record)
            throw damagedStore(s_.options.directory, "corrupt file record " + std::to_string(id));
        return *record;
    }

    void writeFile(const EncodedFile& file) {
        uint32_t id = fileId(file.record.path, true);
        removeContents(id);
        for (uint32_t block = 0; block < file.symbolBlocks.size(); ++block) {
            txn_.put(s_.symbols, rowKey(id, block), file.symbolBlocks[block]);
            if (!s_.dictionaryDecided && s_.dictionarySampleBytes + sampleBytes_ <
                                             SymbolStore::Impl::kDictionaryTrainingBytes) {
                std::optional<std::string> plain = SymbolBlock::decompressed(
                    file.symbolBlocks[block], dictionaryOf(file.symbolBlocks[block]));
                if (!plain)
                    throw std::logic_error("a block of declarations that does not decode");
                samples_.push_back(std::move(*plain));
                sampleBytes_ += samples_.back().size();
            }
        }
        for (uint32_t seq = 0; seq < file.symbols.size(); ++seq) {
            const EncodedSymbol& symbol = file.symbols[seq];
            if (!symbol.nameKey.empty()) // a local (kLocal) has none
                editName(symbol.nameKey, symbol.name, {id, seq, symbol.nameRank}, true);
            editUsr(symbol.usrHash, {id, kDeclTag, seq}, true);
        }
        const RefBlocks& refs = file.refBlocks;
        if (!refs.blocks.empty()) {
            txn_.put(s_.refUsrs, fileIdKey(id), refs.usrTable);
            for (uint32_t block = 0; block < refs.blocks.size(); ++block)
                txn_.put(s_.refs, rowKey(id, block), refs.blocks[block]);
            for (uint32_t index = 0; index < refs.targets; ++index)
                editUsr(refs.usrs[index], {id, kRefTag, index, refs.relation.at(index) != 0}, true);
            tablesWritten_[id] = &refs;
        }
        FileRecord record = file.record;
        record.ownerFileId = file.ownerPath.empty() ? 0 : fileId(file.ownerPath, true);
        txn_.put(s_.files, fileIdKey(id), encodeFileRecord(record));
    }

    /// A block of declarations of this transaction's snapshot, against whichever dictionary it
    /// names; nullopt if it does not decode.
    std::optional<SymbolBlock> decodeBlock(std::string_view bytes) {
        return SymbolBlock::decode(bytes, dictionaryOf(bytes));
    }

    /// The store dictionary a block of declarations names, if it names one of this snapshot.
    const ZstdDictionary* dictionaryOf(std::string_view block) {
        const uint32_t id = symbolBlockDictionaryId(block);
        if (id != ZstdDictionary::builtInSymbols().id() && (!own_ || own_->id() != id))
            own_ = s_.ownDictionary(id, txn_);
        return own_.get();
    }

    /// Deletes every symbol and reference of a file together with their index entries.
    void removeContents(uint32_t id) {
        const std::string prefix = fileIdKey(id);
        {
            lmdb::Cursor cursor(txn_, s_.symbols);
            std::string start = rowKey(id, 0);
            std::string_view key = start, value;
            for (bool more = cursor.seek(MDB_SET_RANGE, key, value);
                 more && key.substr(0, 4) == prefix; more = cursor.get(MDB_NEXT, key, value)) {
                auto damaged = [&] {
                    return damagedStore(s_.options.directory,
                                        "corrupt symbol block in file " + std::to_string(id));
                };
                std::optional<SymbolBlock> block = decodeBlock(value);
                if (!block)
                    throw damaged();
                const uint32_t first = rowSeq(key) * uint32_t(kSymbolsPerBlock);
                for (uint32_t i = 0; i < block->size(); ++i) {
                    std::optional<Symbol> symbol = decodeSymbol(block->row(i));
                    if (!symbol)
                        throw damaged();
                    const uint32_t seq = first + i;
                    uint64_t usrHash = symbol->usrHash();
                    if (!symbol->isLocal())
                        editName(nameKey(symbol->name), indexedName(symbol->name), {id, seq},
                                 false);
                    editUsr(usrHash, {id, kDeclTag, seq}, false);
                }
                cursor.del();
            }
        }
        if (auto written = tablesWritten_.find(id); written != tablesWritten_.end()) {
            // Written by this transaction: its `usrs` entries are still edits, not rows to read
            // the hashes back from.
            const RefBlocks& refs = *written->second;
            for (uint32_t index = 0; index < refs.targets; ++index)
                editUsr(refs.usrs[index], {id, kRefTag, index}, false);
            tablesWritten_.erase(written);
            txn_.del(s_.refUsrs, prefix);
        } else if (auto found = txn_.get(s_.refUsrs, prefix)) {
            const std::string bytes(*found); // the page changes under the deletes below
            for (uint32_t index = 0; const uint64_t usr : committedTargets(id, bytes))
                editUsr(usr, {id, kRefTag, index++}, false);
            txn_.del(s_.refUsrs, prefix);
        }
        lmdb::Cursor cursor(txn_, s_.refs);
        std::string start = rowKey(id, 0);
        std::string_view key = start, value;
        for (bool more = cursor.seek(MDB_SET_RANGE, key, value); more && key.substr(0, 4) == prefix;
             more = cursor.get(MDB_NEXT, key, value))
            cursor.del();
    }

    /// The hashes of the targets of file `id`'s committed UsrTable (`bytes`), read from the
    /// `usrs` buckets it names: the rows as the transaction began, as finish() changes them.
    std::vector<uint64_t> committedTargets(uint32_t id, std::string_view bytes) {
        auto damaged = [&] {
            return damagedStore(s_.options.directory,
                                "corrupt reference table of file " + std::to_string(id));
        };
        const std::optional<UsrTable> table = UsrTable::parse(bytes);
        if (!table)
            throw damaged();
        std::vector<uint64_t> hashes(table->targets(), 0);
        std::vector<uint32_t> buckets;
        for (uint32_t index = 0; index < table->targets(); ++index)
            buckets.push_back(table->bucket(index));
        std::sort(buckets.begin(), buckets.end());
        buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
        // Each row once: it gives the file's USRs of all its buckets.
        for (size_t at = 0; at < buckets.size();) {
            const std::optional<UsrRunAt> run =
                resolveTargetsInRun(txn_, s_.usrs, buckets[at], id, *table, hashes, true);
            if (!run)
                throw damaged();
            while (at < buckets.size() && buckets[at] < run->end)
                ++at;
        }
        if (std::find(hashes.begin(), hashes.end(), 0) != hashes.end())
            throw damaged();
        return hashes;
    }

    /// Adds (or removes) `entry` to the `usrs` row of `usrHash`, at finish(), in call order.
    void editUsr(uint64_t usrHash, UsrEntry entry, bool add) {
        usrEdits_[usrHash].emplace_back(entry, add);
    }

    /// Applies the USR entries added and removed this transaction, row by row in key order: each
    /// `usrs` row the USRs fall in is read once, changed, and written back (cut as it grows past
    /// kUsrRunSplit, joined to the row before as it shrinks under kUsrRunJoin, deleted once empty).
    void writeUsrRows() {
        std::vector<uint64_t> hashes;
        hashes.reserve(usrEdits_.size());
        for (const auto& [usrHash, edits] : usrEdits_)
            hashes.push_back(usrHash);
        std::sort(hashes.begin(), hashes.end());
        auto damaged = [&] { return damagedStore(s_.options.directory, "corrupt usrs row"); };
        std::vector<UsrRunRow> rows;
        std::vector<UsrEntry> entries;
        for (size_t next = 0; next < hashes.size();) {
            const std::optional<UsrRunAt> run =
                usrRunAt(txn_, s_.usrs, usrBucketOf(hashes[next]), true);
            if (!run)
                throw damaged();
            const uint32_t first = run->first, end = run->end;
            rows.clear();
            if (run->bytes && (!decodeUsrRun(*run->bytes, first, rows) ||
                               (!rows.empty() && usrBucketOf(rows.back().hash) >= end)))
                throw damaged();
            const bool existed = run->bytes.has_value();
            for (; next < hashes.size() && usrBucketOf(hashes[next]) < end; ++next) {
                const uint64_t usrHash = hashes[next];
                auto at =
                    std::lower_bound(rows.begin(), rows.end(), usrHash,
                                     [](const UsrRunRow& row, uint64_t h) { return row.hash < h; });
                const bool present = at != rows.end() && at->hash == usrHash;
                entries.clear();
                if (present && !decodeUsrRow(at->row, entries))
                    throw damaged();
                for (const auto& [entry, add] : usrEdits_.at(usrHash))
                    editUsrEntry(entries, entry, add);
                if (entries.empty()) {
                    if (present)
                        rows.erase(at);
                } else if (present) {
                    at->row = encodeUsrRow(entries);
                } else {
                    rows.insert(at, {usrHash, encodeUsrRow(entries)});
                }
            }
            putUsrRun(first, existed, rows);
        }
        usrEdits_.clear();
    }

    /// Writes `rows` as the `usrs` row keyed `first` (which `existed` or not): deleted if empty,
    /// cut if too big, joined to the row before if small enough.
    void putUsrRun(uint32_t first, bool existed, const std::vector<UsrRunRow>& rows) {
        if (rows.empty()) {
            if (existed)
                txn_.del(s_.usrs, usrRunKey(first));
            return;
        }
        const std::vector<size_t> cuts = usrRunCuts(rows, first);
        if (cuts.empty() && first > 0) {
            std::string bytes = encodeUsrRun(rows, first);
            if (bytes.size() < kUsrRunJoin) {
                const std::optional<UsrRunAt> before = usrRunAt(txn_, s_.usrs, first - 1);
                if (!before)
                    throw damagedStore(s_.options.directory, "corrupt usrs key");
                if (before->bytes && before->bytes->size() + bytes.size() <= kUsrRunSplit) {
                    std::vector<UsrRunRow> joined;
                    if (!decodeUsrRun(*before->bytes, before->first, joined))
                        throw damagedStore(s_.options.directory, "corrupt usrs row");
                    joined.insert(joined.end(), rows.begin(), rows.end());
                    txn_.put(s_.usrs, usrRunKey(before->first),
                             encodeUsrRun(joined, before->first));
                    if (existed)
                        txn_.del(s_.usrs, usrRunKey(first));
                    return;
                }
            }
            txn_.put(s_.usrs, usrRunKey(first), bytes);
            return;
        }
        // The first part keeps the row's key (its range starts there); each other part is keyed by
        // its first USR's bucket.
        size_t begin = 0;
        for (size_t part = 0; part <= cuts.size(); ++part) {
            const size_t end = part < cuts.size() ? cuts[part] : rows.size();
            const uint32_t key = part == 0 ? first : usrBucketOf(rows[begin].hash);
            txn_.put(s_.usrs, usrRunKey(key),
                     encodeUsrRun(std::span(rows).subspan(begin, end - begin), key));
            begin = end;
        }
    }

    /// Adds (or removes) declaration `entry` of `name` (indexedName()) to the `names` row of
    /// `key` (nameKey()), at finish(), in call order.
    void editName(const std::string& key, const std::string& name, NameEntry entry, bool add) {
        nameEdits_[key].push_back({name, entry, add});
    }

    /// Applies the declarations added and removed this transaction, in key order, block by
    /// block: each `names` block the keys fall in is read once, changed, and written back
    /// (split as it fills, deleted once empty; names_table.h).
    void writeNameRows() {
        std::vector<std::pair<const std::string, std::vector<NameEdit>>*> edited;
        edited.reserve(nameEdits_.size());
        for (auto& entry : nameEdits_)
            edited.push_back(&entry);
        std::sort(edited.begin(), edited.end(),
                  [](const auto* a, const auto* b) { return a->first < b->first; });
        auto damaged = [&] { return damagedStore(s_.options.directory, "corrupt names block"); };
        std::vector<std::pair<std::string, std::string>> rows; // the blocks', by key
        std::vector<std::string> blockKeys;                    // the blocks read
        std::optional<std::string> nextBlockKey;               // the block after them
        // Reads the block at the cursor into rows, and the next block's key.
        auto take = [&](lmdb::Cursor& cursor, std::string_view k, std::string_view v) {
            blockKeys.emplace_back(k);
            NamesBlockReader block;
            if (!block.start(k, v))
                throw damaged();
            while (!block.done()) {
                if (!block.next())
                    throw damaged();
                rows.emplace_back(block.key(), std::string(block.row()));
            }
            nextBlockKey.reset();
            if (cursor.get(MDB_NEXT, k, v))
                nextBlockKey.emplace(k);
        };
        for (size_t i = 0; i < edited.size();) {
            rows.clear();
            blockKeys.clear();
            nextBlockKey.reset();
            {
                lmdb::Cursor cursor(txn_, s_.names);
                std::string_view k = edited[i]->first, v;
                // Before every block, the key goes in the first one.
                if (seekNamesBlock(cursor, edited[i]->first, k, v) ||
                    cursor.seek(MDB_SET_RANGE, k, v))
                    take(cursor, k, v);
            }
            for (;;) {
                for (; i < edited.size() && (!nextBlockKey || edited[i]->first < *nextBlockKey);
                     ++i)
                    editNameRow(edited[i]->first, edited[i]->second, rows);
                // Left with less than half a block: the next block joins it (and the edits that
                // fall in it), so that blocks emptied by removals do not stay small.
                size_t bytes = 0;
                for (const auto& [key, row] : rows)
                    bytes += key.size() + row.size();
                if (!nextBlockKey || bytes >= kNamesBlockBytes / 2)
                    break;
                lmdb::Cursor cursor(txn_, s_.names);
                std::string_view k = *nextBlockKey, v;
                if (!cursor.seek(MDB_SET_KEY, k, v))
                    throw damaged();
                take(cursor, k, v);
            }
            for (const std::string& key : blockKeys)
                txn_.del(s_.names, key);
            for (const auto& [key, value] : encodeNamesBlocks(rows))
                txn_.put(s_.names, key, value);
        }
        nameEdits_.clear();
    }

    /// Applies `edits` to the row of `key` among `rows` (sorted by key): adds, changes or
    /// removes it.
    /// (Edits: a vector of NameEdit, which is declared below.)
    template <typename Edits>
    void editNameRow(const std::string& key, const Edits& edits,
                     std::vector<std::pair<std::string, std::string>>& rows) {
        auto at =
            std::lower_bound(rows.begin(), rows.end(), key,
                             [](const auto& row, const std::string& k) { return row.first < k; });
        const bool stored = at != rows.end() && at->first == key;
        std::vector<NameVariant> variants;
        std::vector<std::string> spellings; // of variants, in order
        if (stored && !decodeNameRow(at->second, variants))
            throw damagedStore(s_.options.directory, "corrupt names row");
        for (const NameVariant& variant : variants) {
            auto bucket = txn_.get(s_.nameText, nameBucketKey(variant.nameId));
            const std::optional<std::string_view> text =
                bucket ? nameInBucket(*bucket, variant.nameId) : std::nullopt;
            if (!text)
                throw damagedStore(s_.options.directory, "name " + std::to_string(variant.nameId) +
                                                             " missing from the name index");
            spellings.emplace_back(*text);
        }
        for (const auto& edit : edits) {
            auto spelled = std::find(spellings.begin(), spellings.end(), edit.name);
            if (spelled == spellings.end()) {
                if (!edit.add)
                    throw damagedStore(s_.options.directory,
                                       "name missing from the name index: " + edit.name);
                spellings.push_back(edit.name);
                variants.push_back({}); // its id comes below, if it keeps a declaration
                spelled = spellings.end() - 1;
            }
            editNameEntry(variants[size_t(spelled - spellings.begin())].declarations, edit.entry,
                          edit.add);
        }
        size_t kept = 0;
        for (size_t i = 0; i < variants.size(); ++i) {
            NameVariant& variant = variants[i];
            if (variant.declarations.empty()) {
                if (variant.nameId)
                    unindexName(spellings[i], variant.nameId);
                continue;
            }
            if (!variant.nameId)
                variant.nameId = indexName(spellings[i]);
            if (kept != i)
                variants[kept] = std::move(variant); // not onto itself: that empties it
            ++kept;
        }
        variants.resize(kept);
        if (variants.empty()) {
            if (stored)
                rows.erase(at);
        } else if (stored) {
            at->second = encodeNameRow(variants);
        } else {
            rows.emplace(at, key, encodeNameRow(variants));
        }
    }

    /// Gives a name its first declaration: an id, its text and its postings.
    uint32_t indexName(const std::string& name) {
        const uint32_t id = nextNameId_++;
        nameTextEdits_[id] = name;
        editPostings(name, id, true);
        return id;
    }

    /// Drops a name whose last declaration left from the name index.
    void unindexName(const std::string& name, uint32_t id) {
        editPostings(name, id, false);
        nameTextEdits_[id].clear();
    }

    /// Writes the names given an id and those dropped (an empty text) this transaction, a
    /// `nameText` bucket at a time.
    void writeNameText() {
        std::vector<std::string_view> stored;
        std::vector<std::string> slots;
        for (auto it = nameTextEdits_.begin(); it != nameTextEdits_.end();) {
            const uint32_t bucket = it->first / kNamesPerBucket;
            const std::string key = nameBucketKey(it->first);
            slots.assign(kNamesPerBucket, std::string());
            if (auto bytes = txn_.get(s_.nameText, key)) {
                if (!decodeNameBucket(*bytes, stored))
                    throw damagedStore(s_.options.directory, "corrupt name bucket");
                for (size_t i = 0; i < stored.size(); ++i)
                    slots[i] = std::string(stored[i]);
            }
            for (; it != nameTextEdits_.end() && it->first / kNamesPerBucket == bucket; ++it)
                slots[it->first % kNamesPerBucket] = std::move(it->second);
            const std::string value = encodeNameBucket(slots);
            if (value.empty())
                txn_.del(s_.nameText, key);
            else
                txn_.put(s_.nameText, key, value);
        }
        nameTextEdits_.clear();
    }

    void editPostings(const std::string& name, uint32_t id, bool add) {
        const Posting posting{uint32_t(std::min<size_t>(name.size(), 0xffff)), id};
        for (const std::string& token : nameTokens(nameWords(name))) {
            postingEdits_[token].emplace_back(posting, add);
            if (token[0] == kWordToken)
                countWord(token.substr(1), add ? +1 : -1);
        }
    }

    /// Applies the postings added and removed this transaction: a token without chunk rows in
    /// the group rows that hold it (writeGroups), a token that has them (one that outgrew its
    /// group) in its own chunks (writeChunks).
    void writePostings() {
        std::vector<std::string> grouped;
        for (auto& [token, edits] : postingEdits_) {
            std::sort(edits.begin(), edits.end());
            if (!hasChunkRows(token))
                grouped.push_back(token);
            else
                writeChunks(token, edits);
        }
        std::sort(grouped.begin(), grouped.end());
        writeGroups(grouped);
        postingEdits_.clear();
    }

    /// Whether `token` has chunk rows of its own.
    bool hasChunkRows(const std::string& token) {
        lmdb::Cursor cursor(txn_, s_.postings);
        const std::string prefix = postingPrefix(token);
        std::string_view k = prefix, v;
        return cursor.seek(MDB_SET_RANGE, k, v) && k.starts_with(prefix) && !isPostingGroupKey(k);
    }

    /// `token`'s chunk rows: each chunk they fall in is read, changed, and written back under
    /// the key of its first posting (split in two when it grows past twice kPostingsPerChunk,
    /// deleted when it empties).
    void writeChunks(const std::string& token, const std::vector<std::pair<Posting, bool>>& edits) {
        std::vector<Posting> chunk;
        const std::string prefix = postingPrefix(token);
        for (size_t i = 0; i < edits.size();) {
            // The chunk edits[i] falls in: the last one starting at or before it, else the
            // token's first; and where the next chunk starts.
            std::string oldKey;
            std::optional<Posting> bound;
            chunk.clear();
            {
                lmdb::Cursor cursor(txn_, s_.postings);
                const std::string seek = postingKey(token, edits[i].first);
                std::string_view k = seek, v;
                const bool landed = cursor.seek(MDB_SET_RANGE, k, v);
                if (landed && k == seek) {
                    oldKey = seek;
                } else {
                    const std::string after = landed ? std::string(k) : std::string();
                    if ((landed ? cursor.get(MDB_PREV, k, v) : cursor.get(MDB_LAST, k, v)) &&
                        k.starts_with(prefix))
                        oldKey = std::string(k);
                    else if (after.starts_with(prefix))
                        oldKey = after;
                }
                if (!oldKey.empty()) {
                    k = oldKey;
                    if (!cursor.seek(MDB_SET_KEY, k, v) || !decodePostingChunk(v, chunk))
                        throw damagedStore(s_.options.directory,
                                           "corrupt postings chunk of token " + token);
                    if (cursor.get(MDB_NEXT, k, v) && k.starts_with(prefix))
                        bound = postingKeyFirst(k);
                }
            }
            for (; i < edits.size() && (!bound || edits[i].first < *bound); ++i)
                applyEdit(chunk, edits[i].first, edits[i].second);
            if (!oldKey.empty())
                txn_.del(s_.postings, oldKey);
            putChunks(token, chunk);
        }
    }

    /// Writes `postings` (sorted) as chunks of `token`: one, or kPostingsPerChunk each when
    /// there are more than twice that.
    void putChunks(const std::string& token, const std::vector<Posting>& postings) {
        const size_t pieces =
            postings.size() > 2 * kPostingsPerChunk ? postings.size() / kPostingsPerChunk : 1;
        for (size_t piece = 0, begin = 0; piece < pieces && begin < postings.size(); ++piece) {
            const size_t end = piece + 1 == pieces ? postings.size() : begin + kPostingsPerChunk;
            const std::vector<Posting> part(postings.begin() + begin, postings.begin() + end);
            txn_.put(s_.postings, postingKey(token, part.front()), encodePostingChunk(part));
            begin = end;
        }
    }

    /// The edits of tokens without chunk rows, `tokens` in order: each group row they fall
    /// in is read once, changed, and written back, cut where it grows past kPostingGroupBytes
    /// and where a token outgrows it (that token's postings go to chunk rows of its own).
    void writeGroups(const std::vector<std::string>& tokens) {
        std::map<std::string, std::vector<Posting>> entries; // the group's, by token
        PostingGroup group;
        for (size_t i = 0; i < tokens.size();) {
            // The group tokens[i] falls in: the one its key starts, else the one right before
            // it, else the one right after it (which it will start); and the key of the row
            // after that group, which no token of the group reaches.
            const std::string prefix = postingPrefix(tokens[i]);
            std::string oldKey;
            std::optional<std::string> bound;
            entries.clear();
            {
                lmdb::Cursor cursor(txn_, s_.postings);
                std::string_view k = prefix, v;
                const bool landed = cursor.seek(MDB_SET_RANGE, k, v);
                const std::string after = landed ? std::string(k) : std::string();
                if (landed && k == prefix) {
                    oldKey = prefix;
                } else if ((landed ? cursor.get(MDB_PREV, k, v) : cursor.get(MDB_LAST, k, v)) &&
                           isPostingGroupKey(k)) {
                    oldKey = std::string(k);
                } else if (landed && isPostingGroupKey(after)) {
                    oldKey = after;
                } else if (landed) {
                    bound = after;
                }
                if (!oldKey.empty()) {
                    k = oldKey;
                    if (!cursor.seek(MDB_SET_KEY, k, v) || !decodePostingGroup(k, v, group))
                        throw damagedStore(s_.options.directory,
                                           "corrupt postings group at token " + tokens[i]);
                    for (const auto& [token, bytes] : group)
                        if (!decodePostingChunk(bytes, entries[token]))
                            throw damagedStore(s_.options.directory,
                                               "corrupt postings chunk of token " + token);
                    if (cursor.get(MDB_NEXT, k, v))
                        bound = std::string(k);
                }
            }
            for (; i < tokens.size() && (!bound || postingPrefix(tokens[i]) < *bound); ++i) {
                std::vector<Posting>& postings = entries[tokens[i]];
                for (const auto& [posting, add] : postingEdits_.at(tokens[i]))
                    applyEdit(postings, posting, add);
            }
            if (!oldKey.empty())
                txn_.del(s_.postings, oldKey);
            // Written back as rows of about equal size, each at most kPostingGroupBytes: a row cut
            // only where it overflows would leave a sliver at each cut, and rows of a few tokens.
            std::vector<std::pair<const std::string*, std::string>> run; // up to an outgrown one
            const auto putRun = [&] {
                size_t total = 0;
                for (const auto& [token, bytes] : run)
                    total += token->size() + bytes.size() + 3;
                const size_t rows = (total + kPostingGroupBytes - 1) / kPostingGroupBytes;
                const size_t target = rows ? (total + rows - 1) / rows : 0;
                size_t size = 0;
                group.clear();
                for (auto& [token, bytes] : run) {
                    const size_t entry = token->size() + bytes.size() + 3;
                    if (!group.empty() &&
                        (size + entry > kPostingGroupBytes || size + entry / 2 > target)) {
                        txn_.put(s_.postings, postingPrefix(group.front().first),
                                 encodePostingGroup(group));
                        group.clear();
                        size = 0;
                    }
                    group.emplace_back(*token, std::move(bytes));
                    size += entry;
                }
                if (!group.empty())
                    txn_.put(s_.postings, postingPrefix(group.front().first),
                             encodePostingGroup(group));
                run.clear();
            };
            for (const auto& [token, postings] : entries) {
                if (postings.empty())
                    continue;
                if (postings.size() > kPostingsPerChunk) {
                    putRun();
                    putChunks(token, postings);
                    continue;
                }
                run.emplace_back(&token, encodePostingChunk(postings));
            }
            putRun();
        }
    }

    /// The number of names holding `word`, in the vocabulary name search cuts queries with.
    void countWord(std::string_view word, int delta) {
        uint64_t count = 0;
        if (auto found = txn_.get(s_.words, word))
            count = readBigEndian(*found, 4);
        if (delta < 0 && count <= 1) {
            txn_.del(s_.words, word);
            return;
        }
        std::string value;
        appendBigEndian(value, count + delta, 4);
        txn_.put(s_.words, word, value);
    }

    lmdb::Txn& txn_;
    SymbolStore::Impl& s_;
    uint32_t nextFileId_ = 1;
    uint32_t nextAbsentId_ = 1;
    uint32_t nextNameId_ = 1;
    /// One declaration entering or leaving a `names` row.
    struct NameEdit {
        std::string name; ///< indexedName()
        NameEntry entry;  ///< a removal names its place only
        bool add;
    };
    std::shared_ptr<const ZstdDictionary> own_; ///< decodeBlock()'s store dictionary
    /// The references this transaction wrote, by file id, while they are the file's.
    std::unordered_map<uint32_t, const RefBlocks*> tablesWritten_;
    std::vector<std::string> samples_;
    size_t sampleBytes_ = 0;
    /// The names to write at finish() by id (an empty one: the id is dropped), in id order.
    std::map<uint32_t, std::string> nameTextEdits_;
    /// `absent` buckets this transaction read (absentBucket()), and those it changed.
    std::unordered_map<uint32_t, std::vector<std::string>> absentBuckets_;
    std::set<uint32_t> absentDirty_;
    /// The postings to add (true) or remove at finish(), per token.
    std::unordered_map<std::string, std::vector<std::pair<Posting, bool>>> postingEdits_;
    /// The `names` rows to change at finish(): per key, the edits in order.
    std::unordered_map<std::string, std::vector<NameEdit>> nameEdits_;
    /// The `usrs` rows to change at finish(): per USR, entries added (true) or removed, in order.
    std::unordered_map<uint64_t, std::vector<std::pair<UsrEntry, bool>>> usrEdits_;
    std::vector<std::pair<std::string, uint64_t>> committed_;
    std::unordered_map<std::string, uint64_t> written_; ///< path -> staged version written
};

} // namespace

void SymbolStore::Impl::startWriter() {
    writer = std::thread([this] {
        pthread_setname_np(pthread_self(), "store-writer");
        writerLoop();
    });
}

void SymbolStore::Impl::stopWriter() {
    if (!writer.joinable())
        return;
    {
        std::lock_guard lock(queueMu);
        stopping = true;
    }
    queueChanged.notify_all();
    writer.join();
}

void SymbolStore::Impl::push(WriteOp op) {
    const size_t files = fileCount(op);
    std::unique_lock lock(queueMu, std::defer_lock);
    lockCounted(lock, LockClass::CommitQueue);
    if (stopping)
        throw StoreError("the store is closing");
    auto hasRoom = [&] { return queuedFiles < options.queueCapacity || stopping; };
    if (!hasRoom()) {
        // Back-pressure: the publisher waits for the writer. Counted as commit-queue wait.
        const auto start = std::chrono::steady_clock::now();
        queueChanged.wait(lock, hasRoom);
        LockTelemetry::record(LockClass::CommitQueue, true,
                              uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - start)
                                           .count()));
    }
    queue.push_back(std::move(op));
    queuedFiles += files;
    ++opsPushed;
    lock.unlock();
    queueChanged.notify_all();
}

void SymbolStore::Impl::flush() {
    std::unique_lock lock(queueMu);
    const uint64_t target = opsPushed;
    ++flushWaiters;
    queueChanged.notify_all();
    queueChanged.wait(lock, [&] { return opsCommitted >= target || writeError; });
    --flushWaiters;
    // Reported once: the failed batch is gone (its TUs stay out of date in the store), and the
    // next commit starts afresh, so that a disk that was full and has room again works again.
    if (std::exception_ptr error = std::exchange(writeError, nullptr))
        std::rethrow_exception(error);
    lock.unlock();
    env.sync(true);
}

void SymbolStore::Impl::writerLoop() {
    using Clock = std::chrono::steady_clock;
    std::unique_lock lock(queueMu, std::defer_lock);
    lockCounted(lock, LockClass::CommitQueue);
    for (;;) {
        queueChanged.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty())
            return; // stopping, and everything is committed
        // Gather a batch: wait a little for more TUs unless someone is waiting for a flush.
        const auto deadline = Clock::now() + options.batchMaxDelay;
        queueChanged.wait_until(lock, deadline, [&] {
            return stopping || flushWaiters > 0 || queuedFiles >= options.batchMaxFiles;
        });
        std::vector<WriteOp> batch;
        size_t files = 0, tus = 0;
        while (!queue.empty() && files < options.batchMaxFiles) {
            files += fileCount(queue.front());
            tus += std::holds_alternative<PendingTu>(queue.front());
            batch.push_back(std::move(queue.front()));
            queue.pop_front();
        }
        queuedFiles -= files;
        lock.unlock();
        queueChanged.notify_all(); // room for blocked publishers

        std::exception_ptr error;
        const auto start = Clock::now();
        try {
            // Committed files leave the overlay only now: until this point queries found them
            // there, from now on in any read transaction that begins.
            for (const auto& [path, version] : commitBatch(batch)) {
                if (version == WriteContext::kRemoved)
                    overlay.forget(path);
                else
                    overlay.committed(path, version);
            }
        } catch (...) {
            error = std::current_exception();
            // Nothing of the batch was written: its files leave the overlay rather than stay
            // visible as if stored.
            for (const WriteOp& op : batch)
                if (const auto* tu = std::get_if<PendingTu>(&op))
                    for (const PendingFile& file : tu->files)
                        overlay.failed(file.file->record.path, file.version);
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

        lockCounted(lock, LockClass::CommitQueue);
        if (error && !writeError)
            writeError = error;
        opsCommitted += batch.size();
        commitStats.commits += !error;
        commitStats.tusCommitted += error ? 0 : tus;
        commitStats.commitSeconds += seconds;
        queueChanged.notify_all();
    }
}

std::shared_ptr<const ZstdDictionary>
SymbolStore::Impl::trainOwnDictionary(const std::vector<std::string>& more) {
    // Every fifth block is held out: a dictionary is judged on blocks it was not trained on.
    std::vector<std::string> training, heldOut;
    size_t n = 0;
    const std::vector<std::string>* both[] = {&dictionarySamples, &more};
    for (const std::vector<std::string>* samples : both)
        for (const std::string& sample : *samples)
            (n++ % 5 == 4 ? heldOut : training).push_back(sample);
    std::optional<std::string> bytes = trainDictionary(training, kOwnDictionaryBytes);
    std::shared_ptr<const ZstdDictionary> trained =
        bytes ? ZstdDictionary::fromBytes(std::move(*bytes)) : nullptr;
    const ZstdDictionary& builtIn = ZstdDictionary::builtInSymbols();
    if (!trained || trained->id() == builtIn.id())
        return nullptr;
    size_t ownBytes = 0, builtInBytes = 0;
    std::string frame;
    for (const std::string& sample : heldOut) {
        frame.clear();
        appendCompressed(frame, sample, trained.get());
        ownBytes += frame.size();
        frame.clear();
        appendCompressed(frame, sample, &builtIn);
        builtInBytes += frame.size();
    }
    // Kept if clearly smaller: a tree like the built-in dictionary's own (LevelDB, fmtlib) gains
    // nothing from a dictionary of its own. And only if it pays for its own bytes in the blocks
    // seen so far (the held-out fifth's saving times five). LevelDB's: 94.1% of the built-in
    // one's bytes in one run (97.8% in another), 36 KB saved on those blocks for its 64 KiB;
    // the 300k tree's: 76%, 196 KB saved.
    if (ownBytes * 100 > builtInBytes * kOwnDictionaryMaxPercent || heldOut.empty() ||
        (builtInBytes - ownBytes) * n / heldOut.size() < trained->bytes().size())
        return nullptr;
    return trained;
}

std::vector<std::pair<std::string, uint64_t>>
SymbolStore::Impl::commitBatch(std::vector<WriteOp>& batch) {
    for (int attempt = 0;; ++attempt) {
        try {
            lmdb::Txn txn = beginTxn(/*readOnly=*/false);
            WriteContext context(txn, *this);
            for (const WriteOp& op : batch) {
                if (const auto* tu = std::get_if<PendingTu>(&op))
                    context.writeTu(*tu);
                else
                    context.apply(std::get<StoreEdit>(op));
            }
            context.finish();
            // Enough of the store's own declarations seen: a dictionary trained on them, if it
            // beats the built-in one, is stored with this commit and used from then on.
            const bool train =
                !dictionaryDecided &&
                dictionarySampleBytes + context.sampleBytes() >= kDictionaryTrainingBytes;
            std::shared_ptr<const ZstdDictionary> trained;
            if (train && (trained = trainOwnDictionary(context.samples())))
                txn.put(meta, kOwnDictionaryKey, trained->bytes());
            txn.commit();
            if (train) {
                dictionaryDecided = true;
                dictionarySamples = {};
                dictionarySampleBytes = 0;
                if (trained) {
                    std::lock_guard lock(dictionaryMu);
                    dictionary = trained;
                }
            } else {
                for (const std::string& sample : context.samples())
                    dictionarySamples.push_back(sample);
                dictionarySampleBytes += context.sampleBytes();
            }
            // Our own commit: the next open need not walk the trees (store_check.h). The id is
            // the last LMDB committed: a transaction that changed nothing writes no new one.
            MDB_envinfo info;
            if (mdb_env_info(env.get(), &info) == MDB_SUCCESS)
                writeVerifiedStamp(options.directory, info.me_last_txnid);
            return std::move(context.committed());
        } catch (const StoreError& e) {
            if (e.lmdbCode() != MDB_MAP_FULL || attempt >= 16)
                throw;
        }
        // The transaction is gone (aborted by ~Txn or by the failed commit); grow the map while no
        // reader of this process is inside a transaction, then redo the whole batch.
        resizeMap(env.mapSize() * 2);
        std::unique_lock lock(queueMu, std::defer_lock);
        lockCounted(lock, LockClass::CommitQueue);
        ++commitStats.mapGrowths;
    }
}

} // namespace symdex
