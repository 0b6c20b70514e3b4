// Opening the store and the read path. Every query runs in one short read transaction: a
// consistent snapshot that never waits for the writer (LMDB MVCC).
#include "store/encoding.h"
#include "store/names_table.h"
#include "store/snapshot_view.h"
#include "store/store_check.h"
#include "store/store_impl.h"
#include "store/symbol_blocks.h"
#include "store/usrs_table.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <numeric>
#include <optional>
#include <ranges>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

#ifndef MADV_POPULATE_READ // glibc before 2.35; the kernel's since 5.14
#define MADV_POPULATE_READ 22
#endif

namespace symdex {

namespace {

constexpr unsigned kMaxDbs = std::size(SymbolStore::Impl::kTables) + 1;
constexpr unsigned kMaxReaders = 512;

int acquireWriterLock(const std::filesystem::path& dir) {
    const std::string path = (dir / "writer.lock").string();
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
        throw StoreError("the store '" + dir.string() + "' is not writable (cannot create '" +
                         path + "': " + std::strerror(errno) +
                         "); indexing needs write access, queries do not");
    if (fd < 0)
        throw StoreError("cannot create '" + path + "': " + std::strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = {};
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        ::close(fd);
        std::string owner = n > 0 ? " (pid " + std::string(pid, size_t(n)) + ")" : "";
        throw StoreError("another symdex process is writing to the store '" + dir.string() + "'" +
                         owner + "; wait for it to finish");
    }
    std::string pid = std::to_string(getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The pid is only informative; the lock is what matters.
    }
    return fd;
}

} // namespace

OpenLock::OpenLock(const std::filesystem::path& dir, int operation) {
    const std::string path = (dir / "open.lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); // a store of another user
    // No lock file and no right to create one: nobody with that right compacts meanwhile
    // either, but a writer of the store's owner could; opening goes on unguarded, as before.
    if (fd_ >= 0)
        while (flock(fd_, operation) != 0 && errno == EINTR) {
        }
}

OpenLock::~OpenLock() {
    if (fd_ >= 0)
        ::close(fd_);
}

namespace {

/// Removes the LMDB files under the writer lock. A process that has them open keeps reading the
/// old contents: unlinking does not touch its map, and the new lock file is not the one whose
/// reader table protects its snapshot.
void removeStoreFiles(const std::filesystem::path& dir) {
    for (const char* name : {"data.mdb", "lock.mdb", "verified"}) {
        std::error_code ec;
        std::filesystem::remove(dir / name, ec);
        if (ec)
            throw StoreError("cannot remove '" + (dir / name).string() + "': " + ec.message());
    }
}

/// Opens the environment. A reader that may not write lock.mdb (a store of another user, a
/// read-only mount) opens it without the lock file (MDB_NOLOCK): its read transactions are then
/// not registered, so a writer running meanwhile could reuse pages a long query still reads
/// (lmdb.h, MDB_NOLOCK); with no write access to the store, such a writer is another user's.
lmdb::Env openEnv(const StoreOptions& options) {
    // MDB_NOSYNC: commits are not fsync'ed one by one; flush() syncs once at the end of a run.
    // A crash of the process loses nothing, a crash of the OS can lose the last commits but
    // keeps the database consistent.
    const unsigned flags = MDB_NOTLS | MDB_NOSYNC | (options.readOnly ? MDB_RDONLY : 0u);
    try {
        return lmdb::Env::open(options.directory, options.initialMapSize, kMaxDbs, kMaxReaders,
                               flags);
    } catch (const StoreError& e) {
        const bool noLockAccess = e.lmdbCode() == EACCES || e.lmdbCode() == EROFS;
        if (!options.readOnly || !noLockAccess)
            throw;
    }
    return lmdb::Env::open(options.directory, options.initialMapSize, kMaxDbs, kMaxReaders,
                           flags | MDB_NOLOCK);
}

/// Reads rows of one snapshot, caching file paths by id.
class SnapshotReader {
public:
    SnapshotReader(const SymbolStore::Impl& s, const lmdb::Txn& txn) : s_(s), txn_(txn) {}

    const std::string& path(uint32_t id) {
        auto it = paths_.find(id);
        if (it != paths_.end())
            return it->second;
        std::string path;
        if (auto bytes = txn_.get(s_.files, fileIdKey(id)))
            if (auto record = decodeFileRecord(*bytes))
                path = std::move(record->path);
        return paths_.emplace(id, std::move(path)).first->second;
    }

    uint32_t fileId(const std::string& path) const {
        auto found = txn_.get(s_.paths, path);
        return found ? uint32_t(readBigEndian(*found, 4)) : 0;
    }

    /// The declaration at row `seq` of file `id`. The block it is in stays decompressed for the
    /// next call (a file's declarations of one name or USR are often neighbours), and in the
    /// store's cache for later requests (store/block_cache.h).
    ///
    /// Only the block's rows up to `seq` are expanded: a search shows one declaration of each
    /// block it reads, and expanding the rest of its rows cost as much as decompressing it.
    std::optional<Symbol> symbol(uint32_t id, uint32_t seq) {
        const uint32_t block = seq / uint32_t(kSymbolsPerBlock);
        const uint32_t index = seq % uint32_t(kSymbolsPerBlock);
        if (!cachedBlock_ || cachedBlockKey_ != std::pair(id, block) ||
            (index >= cachedBlock_->size() && !cachedBlock_->complete())) {
            cachedBlock_.reset();
            auto bytes = txn_.get(s_.symbols, rowKey(id, block));
            if (!bytes)
                return std::nullopt;
            cachedBlock_ = symbolBlock(id, block, *bytes, index + 1);
            cachedBlockKey_ = {id, block};
        }
        if (index >= cachedBlock_->size())
            return std::nullopt;
        return decodeSymbol(cachedBlock_->row(index));
    }

    /// Whether `summaries` were all read from this reader's snapshot.
    bool sameSnapshot(const SymbolSummaries& summaries) const {
        return summaries.ofSnapshot(s_.environmentGeneration.load(std::memory_order_acquire),
                                    mdb_txn_id(txn_.get()));
    }

    /// path(), from `summaries` when they are of this snapshot.
    const std::string& path(uint32_t id, const SymbolSummaries* summaries) {
        if (summaries && sameSnapshot(*summaries))
            if (const std::string* known = summaries->path(id))
                return *known;
        return path(id);
    }

    /// The summary of row `seq` of file `id`, if `summaries` hold its block as this snapshot's
    /// bytes have it (else null: the row is decoded).
    const SymbolSummary* summary(const SymbolSummaries& summaries, uint32_t id, uint32_t seq) {
        const uint32_t block = seq / uint32_t(kSymbolsPerBlock);
        SymbolSummaries::Rows rows;
        if (sameSnapshot(summaries)) {
            rows = summaries.find(id, block); // made from this snapshot's bytes
        } else {
            const std::optional<std::string_view> bytes = txn_.get(s_.symbols, rowKey(id, block));
            if (!bytes)
                return nullptr;
            rows = summaries.find(id, block, *bytes);
        }
        const uint32_t index = seq % uint32_t(kSymbolsPerBlock);
        return index < rows.size ? rows.begin + index : nullptr;
    }

    /// The store's own dictionary when declaration block `bytes` names it (read once per
    /// reader), else null: the built-in one.
    const ZstdDictionary* dictionaryOf(std::string_view bytes) {
        const uint32_t dictionary = symbolBlockDictionaryId(bytes);
        if (dictionary != ZstdDictionary::builtInSymbols().id() &&
            (!ownDictionary_ || ownDictionary_->id() != dictionary))
            ownDictionary_ = s_.ownDictionary(dictionary, txn_);
        return ownDictionary_.get();
    }

    /// Every declaration of a block, decoded from `bytes` without the store's block cache (a
    /// pass over all blocks would only push out what requests keep there); nullopt if corrupt.
    std::optional<std::vector<Symbol>> blockSymbols(std::string_view bytes) {
        std::optional<SymbolBlock> block = SymbolBlock::decode(bytes, dictionaryOf(bytes));
        if (!block || !block->complete())
            return std::nullopt;
        std::vector<Symbol> symbols;
        symbols.reserve(block->size());
        for (size_t i = 0; i < block->size(); ++i) {
            std::optional<Symbol> symbol = decodeSymbol(block->row(i));
            if (!symbol)
                return std::nullopt;
            symbols.push_back(std::move(*symbol));
        }
        return symbols;
    }

    /// Calls fn(block number, bytes) for file `id`'s blocks in `dbi`, in order, from
    /// `firstBlock` on, while it returns true.
    template <typename Fn>
    void forEachBlock(uint32_t id, MDB_dbi dbi, uint32_t firstBlock, Fn&& fn) {
        const std::string prefix = fileIdKey(id);
        const std::string start = rowKey(id, firstBlock);
        lmdb::Cursor cursor(txn_, dbi);
        std::string_view k = start, v;
        for (bool more = cursor.seek(MDB_SET_RANGE, k, v); more && k.substr(0, 4) == prefix;
             more = cursor.get(MDB_NEXT, k, v))
            if (!fn(uint32_t(readBigEndian(k.substr(4), 4)), v))
                return;
    }

    /// Declaration block `block` of file `id`, decoded from `bytes` or kept by the store's cache:
    /// its first `rows` rows at least, or all.
    std::shared_ptr<const SymbolBlock> symbolBlock(uint32_t id, uint32_t block,
                                                   std::string_view bytes,
                                                   size_t rows = kSymbolsPerBlock) {
        if (std::shared_ptr<const SymbolBlock> kept = s_.symbolBlocks.find(id, block, bytes))
            if (kept->complete() || kept->size() >= rows)
                return kept;
        std::optional<SymbolBlock> decoded = SymbolBlock::decode(bytes, dictionaryOf(bytes), rows);
        if (!decoded)
            throw damagedStore(s_.options.directory, "corrupt symbol block in '" + path(id) + "'");
        auto shared = std::make_shared<const SymbolBlock>(std::move(*decoded));
        s_.symbolBlocks.keep(id, block, bytes, shared);
        return shared;
    }

    /// The rows of reference block `block` of file `id`, decoded from `bytes` or kept.
    std::shared_ptr<const std::vector<RefRow>> refBlock(uint32_t id, uint32_t block,
                                                        std::string_view bytes) {
        if (std::shared_ptr<const std::vector<RefRow>> kept = s_.refBlocks.find(id, block, bytes))
            return kept;
        std::optional<std::vector<RefRow>> rows = decodeRefBlockRows(bytes);
        if (!rows)
            throw damagedStore(s_.options.directory,
                               "corrupt reference block in '" + path(id) + "'");
        auto shared = std::make_shared<const std::vector<RefRow>>(std::move(*rows));
        s_.refBlocks.keep(id, block, bytes, shared);
        return shared;
    }

    /// Appends the declarations of file `id` from block `firstBlock` on while `keep()` holds
    /// after a block.
    template <typename Keep>
    void fileSymbolRows(uint32_t id, uint32_t firstBlock, std::vector<Symbol>& out, Keep&& keep) {
        forEachBlock(id, s_.symbols, firstBlock, [&](uint32_t number, std::string_view bytes) {
            const std::shared_ptr<const SymbolBlock> block = symbolBlock(id, number, bytes);
            for (size_t i = 0; i < block->size(); ++i) {
                std::optional<Symbol> symbol = decodeSymbol(block->row(i));
                if (!symbol)
                    throw damagedStore(s_.options.directory,
                                       "corrupt symbol record in '" + path(id) + "'");
                out.push_back(std::move(*symbol));
            }
            return keep();
        });
    }

    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) {
        const uint32_t id = fileId(path);
        if (!id)
            return std::nullopt;
        std::vector<Symbol> out;
        fileSymbolRows(id, 0, out, [] { return true; });
        return out;
    }

    std::optional<std::vector<Symbol>> fileSymbolsInLines(const std::string& path, uint32_t first,
                                                          uint32_t last) {
        const uint32_t id = fileId(path);
        if (!id)
            return std::nullopt;
        std::vector<Symbol> symbols;
        const uint32_t lo = firstBlockReaching(id, s_.symbols, first, symbolBlockFirstLine, path);
        // Rows are in source order: each row's line is read first, and only the rows on the
        // lines decoded (a definition's cursor line holds one or two of a block's 16).
        forEachBlock(
            id, s_.symbols, lo == 0 ? 0 : lo - 1, [&](uint32_t number, std::string_view bytes) {
                const std::shared_ptr<const SymbolBlock> block = symbolBlock(id, number, bytes);
                uint32_t line = 0;
                for (size_t i = 0; i < block->size(); ++i) {
                    const std::optional<uint32_t> at = encodedSymbolLine(block->row(i));
                    line = at.value_or(0);
                    if (at && (*at < first || *at > last))
                        continue;
                    std::optional<Symbol> symbol = decodeSymbol(block->row(i)); // fails if !at
                    if (!symbol)
                        throw damagedStore(s_.options.directory,
                                           "corrupt symbol record in '" + path + "'");
                    symbols.push_back(std::move(*symbol));
                }
                return line <= last;
            });
        return symbols;
    }

    /// A file's USR table, its targets' hashes read from their `usrs` buckets as they are asked
    /// for: a bucket read resolves every target of the file it holds.
    struct FileTable {
        uint32_t file = 0;
        UsrTable table;
        std::vector<uint64_t> hashes; ///< by target index, 0 until resolved; empty until one is
    };

    /// The USR table of file `id`'s references; nullopt if it has none.
    std::optional<FileTable> refTable(uint32_t id) {
        auto bytes = txn_.get(s_.refUsrs, fileIdKey(id));
        if (!bytes)
            return std::nullopt;
        std::optional<UsrTable> table = UsrTable::parse(*bytes);
        if (!table)
            throw damagedStore(s_.options.directory,
                               "corrupt reference table in '" + path(id) + "'");
        return FileTable{id, *table, {}};
    }

    /// The hash of the USR at `index` of `t`; nullopt if the store does not hold it (damage).
    std::optional<uint64_t> usrAt(FileTable& t, uint32_t index) {
        const UsrTable& table = t.table;
        if (index >= table.targets())
            return index < table.size() ? std::optional(table.container(index)) : std::nullopt;
        if (t.hashes.empty())
            t.hashes.assign(table.targets(), 0);
        if (!t.hashes[index]) {
            if (!resolveTargetsInRun(txn_, s_.usrs, table.bucket(index), t.file, table, t.hashes))
                return std::nullopt;
        }
        if (!t.hashes[index])
            return std::nullopt;
        return t.hashes[index];
    }

    /// Appends the references of file `id` from its block `firstBlock` on (all of them, or with
    /// `only` those to that index of its table) while `keep()` holds after a block; only those on
    /// lines [first, last].
    template <typename Keep>
    void fileRefs(FileTable& t, uint32_t firstBlock, std::optional<uint32_t> only,
                  std::vector<Reference>& out, Keep&& keep, uint32_t first = 0,
                  uint32_t last = UINT32_MAX) {
        const UsrAt at = [&](uint32_t index) { return usrAt(t, index); };
        forEachBlock(t.file, s_.refs, firstBlock, [&](uint32_t number, std::string_view bytes) {
            const std::shared_ptr<const std::vector<RefRow>> rows = refBlock(t.file, number, bytes);
            if (!appendRefs(*rows, t.table.size(), t.table.targets(), at, out, only, first, last))
                throw damagedStore(s_.options.directory,
                                   "corrupt reference block in '" + path(t.file) + "'");
            return keep(*rows);
        });
    }

    /// The references of file `id` to the USR `usrHash`, at `index` of its table.
    std::vector<Reference> refsTo(uint32_t id, uint32_t index, uint64_t usrHash) {
        std::vector<Reference> out;
        if (std::optional<FileTable> table = refTable(id))
            if (index < table->table.targets()) {
                table->hashes.assign(table->table.targets(), 0);
                table->hashes[index] = usrHash; // no bucket read for the USR asked about
                fileRefs(*table, 0, index, out, [](const auto&) { return true; });
            }
        return out;
    }

    std::optional<std::vector<Reference>> fileReferences(const std::string& path) {
        const uint32_t id = fileId(path);
        if (!id)
            return std::nullopt;
        std::vector<Reference> out;
        if (std::optional<FileTable> table = refTable(id))
            fileRefs(*table, 0, std::nullopt, out, [](const auto&) { return true; });
        return out;
    }

    /// The first of file `id`'s blocks in `dbi` whose first line (`firstLine` reads it) is at
    /// or after `line`, or the number of blocks: blocks are in source order, so a binary search
    /// finds it; the block before may hold rows on `line` too.
    template <typename FirstLine>
    uint32_t firstBlockReaching(uint32_t id, MDB_dbi dbi, uint32_t line, FirstLine&& firstLine,
                                const std::string& path) {
        auto damaged = [&] {
            return damagedStore(s_.options.directory, "corrupt block in '" + path + "'");
        };
        lmdb::Cursor cursor(txn_, dbi);
        const std::string prefix = fileIdKey(id);
        const std::string next = rowKey(id + 1, 0);
        std::string_view k = next, v;
        bool found = cursor.seek(MDB_SET_RANGE, k, v) ? cursor.get(MDB_PREV, k, v)
                                                      : cursor.get(MDB_LAST, k, v);
        if (!found || k.substr(0, 4) != prefix)
            return 0;
        uint32_t lo = 0, hi = rowSeq(k) + 1;
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            const std::string key = rowKey(id, mid);
            k = key;
            if (!cursor.seek(MDB_SET_KEY, k, v))
                throw damaged(); // blocks are numbered from 0 without gaps
            std::optional<uint32_t> at = firstLine(v);
            if (!at)
                throw damaged();
            if (*at < line)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

    /// The references of `path` on lines [first, last].
    std::optional<std::vector<Reference>> fileReferencesInLines(const std::string& path,
                                                                uint32_t first, uint32_t last) {
        const uint32_t id = fileId(path);
        if (!id)
            return std::nullopt;
        std::vector<Reference> out;
        std::optional<FileTable> table = refTable(id);
        if (!table)
            return out;
        const uint32_t lo = firstBlockReaching(id, s_.refs, first, refBlockFirstLine, path);
        // Only the rows on the lines are resolved (a block holds 128).
        fileRefs(
            *table, lo == 0 ? 0 : lo - 1, std::nullopt, out,
            [&](const std::vector<RefRow>& rows) {
                return rows.empty() || rows.back().line <= last;
            },
            first, last);
        return out;
    }

    /// The `usrs` entries of a USR: its declarations and the files whose references name it.
    const std::vector<UsrEntry>& usrEntries(uint64_t usrHash) {
        usrEntries_.clear();
        const std::optional<UsrRunAt> run = usrRunAt(txn_, s_.usrs, usrBucketOf(usrHash));
        if (!run)
            throw damagedStore(s_.options.directory, "corrupt usrs key");
        if (!run->bytes)
            return usrEntries_;
        bool damaged = false;
        const std::optional<std::string_view> row =
            findUsrRow(*run->bytes, run->first, usrHash, damaged);
        if (damaged || (row && !decodeUsrRow(*row, usrEntries_)))
            throw damagedStore(s_.options.directory, "corrupt usrs row");
        return usrEntries_;
    }

    /// Calls fn(entry) for every index entry of a USR.
    template <typename Fn> void forEachUsrEntry(uint64_t usrHash, Fn&& fn) {
        const std::vector<UsrEntry> entries = usrEntries(usrHash);
        for (const UsrEntry& entry : entries)
            fn(entry);
    }

    /// The first usrs-index entry of `usrHash` (fileId, seq) that `wanted(fileId, tag)` accepts.
    template <typename Wanted>
    std::optional<std::pair<uint32_t, uint32_t>> firstUsrEntry(uint64_t usrHash, Wanted&& wanted) {
        for (const UsrEntry& entry : usrEntries(usrHash))
            if (wanted(entry.fileId, entry.tag))
                return std::pair(entry.fileId, entry.seq);
        return std::nullopt;
    }

    /// Calls fn(entry) for every declaration under the `names` key `key`.
    template <typename Fn> void forEachNameEntry(std::string_view key, Fn&& fn) const {
        std::optional<std::string_view> row;
        try {
            row = findNamesRow(txn_, s_.names, key);
        } catch (const CorruptNamesBlock&) {
            throw damagedStore(s_.options.directory, "corrupt names block");
        }
        if (!row)
            return;
        std::vector<NameVariant> variants;
        if (!decodeNameRow(*row, variants))
            throw damagedStore(s_.options.directory, "corrupt names row");
        for (const NameVariant& variant : variants)
            for (const NameEntry& entry : variant.declarations)
                fn(entry);
    }

    /// The best EntryRank of the declarations under the `names` key `key`.
    std::optional<EntryRank> bestEntryRank(std::string_view key) const {
        std::optional<EntryRank> best;
        forEachNameEntry(key, [&](const NameEntry& entry) {
            if (const EntryRank rank = EntryRank::unpack(entry.rank); !best || rank < *best)
                best = rank;
        });
        return best;
    }

private:
    const SymbolStore::Impl& s_;
    const lmdb::Txn& txn_;
    std::unordered_map<uint32_t, std::string> paths_;
    std::vector<UsrEntry> usrEntries_;                    ///< usrEntries()' answer
    std::shared_ptr<const SymbolBlock> cachedBlock_;      ///< symbol()'s last block
    std::shared_ptr<const ZstdDictionary> ownDictionary_; ///< the store's, once a block names it
    std::pair<uint32_t, uint32_t> cachedBlockKey_;
};

std::shared_lock<CountedSharedMutex> globalReadLock(const SymbolStore::Impl& s) {
    if (s.options.lockMode == LockMode::Global)
        return std::shared_lock(s.globalMu);
    return {};
}

} // namespace

namespace {

Symbol stagedSymbol(const EncodedFile& file, uint32_t seq) {
    std::optional<Symbol> symbol = decodeSymbol(file.symbols[seq].value);
    if (!symbol)
        throw StoreError("corrupt staged symbol in '" + file.record.path + "'");
    return std::move(*symbol);
}

Reference stagedReference(const EncodedFile& file, uint32_t seq) {
    std::optional<Reference> ref = decodeReference(file.references[seq].value);
    if (!ref)
        throw StoreError("corrupt staged reference in '" + file.record.path + "'");
    return *ref;
}

/// The staged rows (in source order) whose location is on lines [first, last].
template <typename Row, typename Rows, typename LineOf, typename Decode>
std::vector<Row> stagedInLines(const Rows& rows, uint32_t first, uint32_t last, LineOf&& lineOf,
                               Decode&& decode) {
    auto lineAt = [&](size_t seq) { return lineOf(rows[seq].value).value_or(0); };
    size_t lo = 0, hi = rows.size();
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (lineAt(mid) < first)
            lo = mid + 1;
        else
            hi = mid;
    }
    std::vector<Row> out;
    for (size_t seq = lo; seq < rows.size() && lineAt(seq) <= last; ++seq)
        out.push_back(decode(uint32_t(seq)));
    return out;
}

} // namespace

std::string_view lockModeName(LockMode mode) {
    return mode == LockMode::Global ? "global" : "per-file";
}

std::optional<LockMode> parseLockMode(std::string_view name) {
    if (name == "per-file")
        return LockMode::PerFile;
    if (name == "global")
        return LockMode::Global;
    return std::nullopt;
}

SymbolStore::Impl::ReadTxn SymbolStore::Impl::beginRead() const {
    for (;;) {
        ReadTxn read{std::shared_lock(mapResizeMu), {}};
        try {
            read.txn = lmdb::Txn::begin(env, /*readOnly=*/true);
            return read;
        } catch (const StoreError& e) {
            if (e.lmdbCode() != MDB_MAP_RESIZED)
                throw;
        }
        read.guard.unlock();
        resizeMap(0);
    }
}

lmdb::Txn SymbolStore::Impl::beginTxn(bool readOnly) const {
    for (;;) {
        try {
            return lmdb::Txn::begin(env, readOnly);
        } catch (const StoreError& e) {
            if (e.lmdbCode() != MDB_MAP_RESIZED)
                throw;
        }
        resizeMap(0);
    }
}

std::shared_ptr<const SymbolStore::Impl::Vocabulary>
SymbolStore::Impl::vocabularyOf(const lmdb::Txn& read) const {
    const uint64_t environment = environmentGeneration.load(std::memory_order_acquire);
    const uint64_t txnId = mdb_txn_id(read.get());
    {
        std::lock_guard lock(vocabularyMu);
        if (vocabulary && vocabulary->environment == environment && vocabulary->txnId == txnId)
            return vocabulary;
    }
    auto fresh = std::make_shared<Vocabulary>();
    fresh->environment = environment;
    fresh->txnId = txnId;
    lmdb::Cursor cursor(read, words);
    std::string_view k, v;
    fresh->namesBefore.push_back(0);
    for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
        fresh->text.append(k);
        fresh->ends.push_back(uint32_t(fresh->text.size()));
        fresh->namesBefore.push_back(fresh->namesBefore.back() + readBigEndian(v, 4));
        fresh->longest = std::max(fresh->longest, k.size());
    }
    std::lock_guard lock(vocabularyMu);
    // Another reader of the same snapshot may have kept one meanwhile: that one is shared, so
    // that what SymbolStore::prepareNameSearch() loads into it serves every search of the
    // snapshot. An older snapshot's reader does not replace a newer snapshot's vocabulary.
    if (vocabulary && vocabulary->environment == environment && vocabulary->txnId == txnId)
        return vocabulary;
    if (!vocabulary || vocabulary->environment != environment || vocabulary->txnId < txnId)
        vocabulary = fresh;
    return fresh;
}

std::optional<size_t> SymbolStore::Impl::Vocabulary::initialsSlot(char a, char b, char c) {
    auto digit = [](char x) -> std::optional<size_t> {
        if (x >= 'a' && x <= 'z')
            return size_t(x - 'a');
        if (x >= '0' && x <= '9')
            return size_t(26 + x - '0');
        return std::nullopt;
    };
    const std::optional<size_t> da = digit(a), db = digit(b), dc = digit(c);
    if (!da || !db || !dc)
        return std::nullopt;
    return (*da * 36 + *db) * 36 + *dc;
}

const SymbolStore::Impl::Vocabulary::Tails& SymbolStore::Impl::Vocabulary::tails() const {
    std::call_once(tailsOnce_, [this] {
        // A counting sort: count each bucket, make the counts starts, place the words in order.
        auto build = [this](size_t buckets, auto bucketOf, std::vector<uint32_t>& start,
                            std::vector<uint32_t>& out) {
            start.assign(buckets + 1, 0);
            for (size_t i = 0; i < ends.size(); ++i)
                if (const std::optional<size_t> b = bucketOf(word(i)))
                    ++start[*b + 1];
            std::partial_sum(start.begin(), start.end(), start.begin());
            out.resize(start.back());
            std::vector<uint32_t> next(start.begin(), start.end() - 1);
            for (size_t i = 0; i < ends.size(); ++i)
                if (const std::optional<size_t> b = bucketOf(word(i)))
                    out[next[*b]++] = uint32_t(i);
        };
        build(
            256,
            [](std::string_view w) -> std::optional<size_t> {
                if (w.empty())
                    return std::nullopt;
                return uint8_t(w.back());
            },
            tails_.lastStart, tails_.last);
        build(
            Tails::kLastTwoBuckets,
            [](std::string_view w) -> std::optional<size_t> {
                if (w.size() < 2)
                    return std::nullopt;
                return Tails::lastTwoBucket(w[w.size() - 2], w.back());
            },
            tails_.lastTwoStart, tails_.lastTwo);
    });
    return tails_;
}

void SymbolStore::Impl::resizeMap(size_t bytes) const {
    // Another process grew the map (0: adopt its size, lmdb.h MDB_MAP_RESIZED), or a commit found
    // it full: either way no read transaction of this process may be active meanwhile.
    std::unique_lock resize(mapResizeMu);
    env.setMapSize(bytes);
}

SymbolStore::SymbolStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SymbolStore::~SymbolStore() {
    impl_->stopWriter();
}

SymbolStore::Impl::~Impl() {
    if (writerLockFd >= 0)
        ::close(writerLockFd);
}

void SymbolStore::Impl::openEnvironment() {
    const std::filesystem::path& dir = options.directory;
    // Checked before LMDB maps the file: a file shorter than its used pages raises SIGBUS.
    if (std::string problem = checkDataFileHeader(dir / "data.mdb"); !problem.empty())
        throw damagedStore(dir, problem);
    env = openEnv(options);
    environmentGeneration.fetch_add(1, std::memory_order_acq_rel);
    {
        // Every page this snapshot reaches, before any query follows one: LMDB trusts its file
        // and crashes on a scribbled page. A writer's later snapshots are its own commits.
        lmdb::Txn check = beginTxn(/*readOnly=*/true);
        const size_t txnId = mdb_txn_id(check.get());
        if (!verifiedStampMatches(dir, txnId)) {
            if (std::string problem = checkSnapshotTrees(env, check); !problem.empty())
                throw damagedStore(dir, problem);
            writeVerifiedStamp(dir, txnId);
        }
    }

    lmdb::Txn txn = beginTxn(options.readOnly);
    const unsigned create = options.readOnly ? 0u : unsigned(MDB_CREATE);
    auto notAStore = [&](const StoreError& e) {
        return StoreError("'" + dir.string() + "' is not a symdex store (" + e.what() +
                              "); rebuild it with: " + rebuildCommand(dir),
                          e.lmdbCode(), StoreError::Kind::WrongVersion);
    };
    try {
        meta = txn.openDb("meta", create);
    } catch (const StoreError& e) {
        throw notAStore(e);
    }
    // The version first: another version's tables may have other flags (LMDB refuses to open
    // them), and its message says what to do.
    std::string version;
    appendBigEndian(version, kStoreFormatVersion, 4);
    if (auto stored = txn.get(meta, "format")) {
        if (*stored != version) {
            uint32_t found = stored->size() == 4 ? uint32_t(readBigEndian(*stored, 4)) : 0;
            throw StoreError("the store '" + dir.string() + "' has format version " +
                                 std::to_string(found) + ", this symdex reads version " +
                                 std::to_string(kStoreFormatVersion) +
                                 "; rebuild it with: " + rebuildCommand(dir),
                             0, StoreError::Kind::WrongVersion);
        }
    } else if (options.readOnly) {
        throw StoreError("the store '" + dir.string() + "' is empty: run `symdex index` first");
    } else {
        txn.put(meta, "format", version);
    }
    try {
        for (const Table& table : kTables)
            this->*table.dbi = txn.openDb(table.name, create | table.flags);
    } catch (const StoreError& e) {
        throw notAStore(e);
    }
    std::shared_ptr<const ZstdDictionary> own;
    if (auto bytes = txn.get(meta, kOwnDictionaryKey)) {
        own = ZstdDictionary::fromBytes(std::string(*bytes));
        if (!own)
            throw damagedStore(dir, "corrupt dictionary of declarations in the meta table");
    }
    {
        std::lock_guard lock(dictionaryMu);
        dictionary = own;
    }
    dictionaryDecided = own != nullptr;
    dictionarySamples = {};
    dictionarySampleBytes = 0;
    // Committed even when read-only: handles opened in an aborted transaction are closed.
    txn.commit();
}

std::shared_ptr<const ZstdDictionary> SymbolStore::Impl::encodingDictionary() const {
    std::lock_guard lock(dictionaryMu);
    return dictionary;
}

std::shared_ptr<const ZstdDictionary>
SymbolStore::Impl::ownDictionary(uint32_t id, const lmdb::Txn& read) const {
    {
        std::lock_guard lock(dictionaryMu);
        if (dictionary && dictionary->id() == id)
            return dictionary;
    }
    auto bytes = read.get(meta, kOwnDictionaryKey);
    std::shared_ptr<const ZstdDictionary> own =
        bytes ? ZstdDictionary::fromBytes(std::string(*bytes)) : nullptr;
    if (!own || own->id() != id)
        return nullptr;
    std::lock_guard lock(dictionaryMu);
    dictionary = own;
    return own;
}

std::unique_ptr<SymbolStore> SymbolStore::open(const StoreOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    const std::filesystem::path& dir = options.directory;
    std::error_code ec;
    if (options.readOnly) {
        if (!std::filesystem::exists(dir / "data.mdb", ec))
            throw StoreError("no symbol store at '" + dir.string() +
                             "': run `symdex index` first (or pass --store DIR)");
    } else {
        std::filesystem::create_directories(dir, ec);
        if (ec)
            throw StoreError("cannot create store directory '" + dir.string() +
                             "': " + ec.message());
        impl->writerLockFd = acquireWriterLock(dir);
        if (options.startEmpty)
            removeStoreFiles(dir);
    }
    {
        // A compaction swaps data.mdb and lock.mdb while it holds this lock exclusively: the
        // pair an open maps is always the old one or the new one.
        OpenLock shared(dir, LOCK_SH);
        impl->openEnvironment();
    }
    if (!options.readOnly)
        impl->startWriter();
    return std::unique_ptr<SymbolStore>(new SymbolStore(std::move(impl)));
}

const std::filesystem::path& SymbolStore::directory() const {
    return impl_->options.directory;
}

void SymbolStore::publish(IndexedTu tu) {
    if (impl_->options.readOnly)
        throw StoreError("the store is open read-only");
    tu.includedHashes.resize(tu.includedFiles.size(), 0);
    if (tu.includedFiles.empty() || tu.includedFiles.front() != tu.mainFile) {
        tu.includedFiles.insert(tu.includedFiles.begin(), tu.mainFile);
        tu.includedHashes.insert(tu.includedHashes.begin(), 0);
    }
    const std::shared_ptr<const ZstdDictionary> dictionary = impl_->encodingDictionary();
    PendingTu pending = encodeTu(std::move(tu), dictionary.get()); // no lock held
    {
        std::unique_lock<CountedSharedMutex> global;
        if (impl_->options.lockMode == LockMode::Global)
            global = std::unique_lock(impl_->globalMu);
        for (PendingFile& file : pending.files)
            file.version = impl_->overlay.stage(file.file, pending.generation);
    }
    // A file this generation already holds with a lower priority number is not written.
    std::erase_if(pending.files, [](const PendingFile& file) { return file.version == 0; });
    impl_->push(std::move(pending));
}

void SymbolStore::apply(StoreEdit edit) {
    if (impl_->options.readOnly)
        throw StoreError("the store is open read-only");
    impl_->push(std::move(edit));
}

void SymbolStore::flush() {
    if (impl_->options.readOnly)
        return;
    impl_->flush();
    impl_->overlay.endGeneration();
}

CommitStats SymbolStore::commitStats() const {
    std::lock_guard lock(impl_->queueMu);
    return impl_->commitStats;
}

size_t SymbolStore::stagedFiles() const {
    return impl_->overlay.stagedCount();
}

LockMode SymbolStore::lockMode() const {
    return impl_->options.lockMode;
}

CountedSharedMutex& SymbolStore::globalLock() const {
    return impl_->globalMu;
}

namespace {

/// What a snapshot of the LMDB store reads: the files staged in the overlay, taken first, then an
/// LMDB read transaction taken after. A file staged at the first step shadows its committed rows;
/// a file committed and unstaged before the first step is in the transaction. Either way each file
/// is seen whole, and every query of the snapshot sees the same files.
class LmdbView final : public StoreSnapshot::View {
public:
    explicit LmdbView(const SymbolStore::Impl& s)
        : s_(s), global_(globalReadLock(s)), staged_(s.overlay.staged()), read_(s.beginRead()),
          reader_(s, read_.txn) {
        for (const auto& file : staged_)
            stagedByPath_.emplace(file->record.path, file.get());
    }

    std::optional<FileRecord> file(const std::string& path) override {
        if (const EncodedFile* staged = stagedFile(path))
            return staged->record;
        uint32_t id = reader_.fileId(path);
        if (!id)
            return std::nullopt;
        auto bytes = txn().get(s_.files, fileIdKey(id));
        return bytes ? decodeFileRecord(*bytes) : std::nullopt;
    }

    std::optional<bool> indexedAscii(const std::string& path) override {
        if (stagedFile(path))
            return std::nullopt; // an open document's bytes, not those the summaries saw
        const SymbolSummaries* summaries = ownSummaries();
        return summaries ? summaries->asciiOnly(path) : std::nullopt;
    }

    void forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) override {
        std::unordered_map<std::string, const EncodedFile*> staged = stagedByPath_;
        lmdb::Cursor cursor(txn(), s_.files);
        std::string_view k, v;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
            auto record = decodeFileRecord(v);
            if (!record)
                throw damagedStore(s_.options.directory, "corrupt file record");
            auto it = staged.find(record->path);
            if (it == staged.end()) {
                fn(uint32_t(readBigEndian(k, 4)), *record);
                continue;
            }
            fn(uint32_t(readBigEndian(k, 4)), it->second->record);
            staged.erase(it);
        }
        for (const auto& [path, file] : staged)
            fn(0, file->record); // not committed yet: no id
    }

    /// The path of a file id, for the namespace starts of a TU's record.
    FilePathOf pathOf() {
        return [this](uint32_t id) { return reader_.path(id); };
    }

    std::optional<TuRecord> tu(const std::string& mainFile) override {
        uint32_t id = reader_.fileId(mainFile);
        if (!id)
            return std::nullopt;
        auto bytes = txn().get(s_.tus, fileIdKey(id));
        return bytes ? decodeTuRecord(*bytes, pathOf()) : std::nullopt;
    }

    void forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) override {
        lmdb::Cursor cursor(txn(), s_.tus);
        std::string_view k, v;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
            auto record = decodeTuRecord(v, pathOf());
            if (!record)
                throw damagedStore(s_.options.directory, "corrupt translation unit record");
            fn(reader_.path(uint32_t(readBigEndian(k, 4))), *record);
        }
    }

    std::optional<std::string> metaValue(const std::string& key) override {
        auto bytes = txn().get(s_.meta, key);
        return bytes ? std::optional<std::string>(*bytes) : std::nullopt;
    }

    void forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) override {
        lmdb::Cursor cursor(txn(), s_.absent);
        std::string_view k, v;
        std::vector<std::string> slots;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
            if (k.size() != 4 || !decodeAbsentBucket(v, slots))
                throw damagedStore(s_.options.directory, "corrupt bucket of absent paths");
            const uint32_t first = uint32_t(readBigEndian(k, 4)) * kAbsentPerBucket;
            for (uint32_t i = 0; i < slots.size(); ++i)
                if (!slots[i].empty())
                    fn(first + i, slots[i]);
        }
    }

    void forEachNameKey(std::string_view prefix,
                        const std::function<bool(std::string_view)>& fn) override {
        bool more = true;
        try {
            forEachNamesRow(txn(), s_.names, prefix,
                            [&](std::string_view key, std::string_view) { return more = fn(key); });
        } catch (const CorruptNamesBlock&) {
            throw damagedStore(s_.options.directory, "corrupt names block");
        }
        if (!more)
            return;
        for (const auto& file : staged_)
            for (uint32_t seq : file->symbolsByName) {
                std::string_view k = file->symbols[seq].nameKey;
                if (k.starts_with(prefix) && !fn(k))
                    return;
            }
    }

    bool hasNameIndex() override { return true; }

    void forEachUnindexedName(const std::function<void(std::string_view)>& fn) override {
        for (const auto& file : staged_)
            for (uint32_t seq : file->symbolsByName)
                fn(file->symbols[seq].name);
    }

    void forEachWord(std::string_view prefix,
                     const std::function<bool(std::string_view, uint32_t)>& fn) override {
        const WordSpan span = wordsStarting(prefix);
        const SymbolStore::Impl::Vocabulary& v = vocabulary();
        for (size_t i = span.begin; i < span.end; ++i)
            if (!fn(v.word(i), v.names(i)))
                return;
    }

    WordSpan wordsStarting(std::string_view prefix) override {
        const SymbolStore::Impl::Vocabulary& v = vocabulary();
        // Words are in key order: those starting with `prefix` are the run from the first word
        // not before it.
        const auto positions = std::views::iota(size_t(0), v.ends.size());
        const auto begin =
            std::ranges::partition_point(positions, [&](size_t i) { return v.word(i) < prefix; });
        const auto end =
            std::ranges::partition_point(std::ranges::subrange(begin, positions.end()),
                                         [&](size_t i) { return v.word(i).starts_with(prefix); });
        return {size_t(begin - positions.begin()), size_t(end - positions.begin())};
    }

    size_t longestWordStart(std::string_view text) override {
        // The words sharing the longest start with `text` are next to where it would go in
        // key order: one binary search.
        const SymbolStore::Impl::Vocabulary& v = vocabulary();
        const auto positions = std::views::iota(size_t(0), v.ends.size());
        const size_t at = size_t(
            std::ranges::partition_point(positions, [&](size_t i) { return v.word(i) < text; }) -
            positions.begin());
        auto common = [&](size_t i) {
            const std::string_view word = v.word(i);
            return size_t(std::ranges::mismatch(word, text).in2 - text.begin());
        };
        size_t longest = at < v.ends.size() ? common(at) : 0;
        if (at > 0)
            longest = std::max(longest, common(at - 1));
        return longest;
    }

    std::string_view wordAt(size_t i) override { return vocabulary().word(i); }

    std::vector<size_t> wordsEnding(std::string_view suffix) override {
        const SymbolStore::Impl::Vocabulary& v = vocabulary();
        std::vector<size_t> positions;
        if (suffix.empty())
            return positions;
        using Tails = SymbolStore::Impl::Vocabulary::Tails;
        const Tails& tails = v.tails();
        const bool one = suffix.size() == 1;
        const size_t b = one ? uint8_t(suffix.back())
                             : Tails::lastTwoBucket(suffix[suffix.size() - 2], suffix.back());
        const std::vector<uint32_t>& words = one ? tails.last : tails.lastTwo;
        const std::vector<uint32_t>& starts = one ? tails.lastStart : tails.lastTwoStart;
        for (uint32_t k = starts[b]; k < starts[b + 1]; ++k)
            if (v.word(words[k]).ends_with(suffix)) // in key order: the bucket keeps it
                positions.push_back(words[k]);
        return positions;
    }

    std::vector<size_t> wordsHolding(std::string_view inner) override {
        // One search through the words' text (a call per word was 56K instructions a
        // substring query at 300k names): a hit is kept when it lies inside one word, past its
        // first letter.
        const SymbolStore::Impl::Vocabulary& v = vocabulary();
        std::vector<size_t> positions;
        if (inner.empty())
            return positions;
        const std::string_view text = v.text;
        size_t word = 0;
        for (size_t from = 1, at; (at = text.find(inner, from)) != std::string_view::npos;) {
            word = size_t(
                std::upper_bound(v.ends.begin() + ptrdiff_t(word), v.ends.end(), uint32_t(at)) -
                v.ends.begin());
            const size_t begin = word ? v.ends[word - 1] : 0;
            if (at > begin && at + inner.size() <= v.ends[word]) {
                positions.push_back(word);
                from = v.ends[word] + 1; // not the next word's first letter
            } else {
                from = at + 1;
            }
        }
        return positions;
    }

    size_t longestWord() override { return vocabulary().longest; }

    uint64_t namesOfWords(WordSpan span) override {
        const SymbolStore::Impl::Vocabulary& v = vocabulary();
        return v.namesBefore[span.end] - v.namesBefore[span.begin];
    }

    /// SymbolStore::prepareNameSearch() on this view's snapshot; returns the snapshot's LMDB
    /// transaction id.
    uint64_t prepareNameSearch() {
        using Vocabulary = SymbolStore::Impl::Vocabulary;
        const Vocabulary& v = vocabulary();
        v.tails();
        v.loadInitials([&](std::vector<uint32_t>& counts) {
            forEachTokenStarting(
                std::string(1, kInitialsToken), [&](std::string_view token, size_t count) {
                    if (token.size() != 4)
                        throw damagedPostings();
                    if (const std::optional<size_t> slot =
                            Vocabulary::initialsSlot(token[1], token[2], token[3]))
                        counts[*slot] = uint32_t(std::min<size_t>(count, UINT32_MAX));
                    return true;
                });
        });
        return mdb_txn_id(read_.txn.get());
    }

    const SymbolStore::Impl::Vocabulary& vocabulary() {
        if (!vocabulary_)
            vocabulary_ = s_.vocabularyOf(txn());
        return *vocabulary_;
    }

    /// Where a token's postings begin: its first chunk and the one after it (views into the
    /// read transaction's pages), read once per view. A search opens hundreds of streams on a
    /// few dozen tokens (775 on 97 for a rare name of 19 letters at 2M names), most of them one
    /// chunk long: from here such a stream needs no cursor, and no B-tree descent.
    struct TokenStart {
        std::string_view firstValue;
        bool hasSecond = false;
        std::string_view secondKey, secondValue;
    };
    const TokenStart* tokenStart(std::string_view token) {
        std::string prefix = postingPrefix(token);
        if (auto it = tokenStarts_.find(prefix); it != tokenStarts_.end())
            return it->second ? &*it->second : nullptr;
        lmdb::Cursor cursor = takePostingCursor();
        std::optional<TokenStart> start;
        std::string_view k = prefix, v;
        const bool landed = cursor.seek(MDB_SET_RANGE, k, v);
        if (landed && k.starts_with(prefix) && !isPostingGroupKey(k)) {
            start.emplace();
            start->firstValue = v;
            start->hasSecond = cursor.get(MDB_NEXT, k, v) && k.starts_with(prefix);
            if (start->hasSecond) {
                start->secondKey = k;
                start->secondValue = v;
            }
        } else {
            // In the group its key starts, or else the one right before it, if any.
            if ((landed && k == prefix) ||
                ((landed ? cursor.get(MDB_PREV, k, v) : cursor.get(MDB_LAST, k, v)) &&
                 isPostingGroupKey(k))) {
                bool damaged = false;
                if (const auto chunk = findInPostingGroup(k, v, token, damaged)) {
                    start.emplace();
                    start->firstValue = *chunk;
                } else if (damaged) {
                    throw damagedPostings();
                }
            }
        }
        postingCursors_.push_back(std::move(cursor));
        auto [it, inserted] = tokenStarts_.emplace(std::move(prefix), start);
        return it->second ? &*it->second : nullptr;
    }
    lmdb::Cursor takePostingCursor() {
        if (postingCursors_.empty())
            return lmdb::Cursor(txn(), s_.postings);
        lmdb::Cursor cursor = std::move(postingCursors_.back());
        postingCursors_.pop_back();
        return cursor;
    }

    /// A token's postings, chunk by chunk (lmdb_layout.h). Its first two chunks come from
    /// tokenStart(); a cursor is taken only to go further, or to seek.
    class LmdbPostings final : public Postings {
    public:
        explicit LmdbPostings(LmdbView& view) : view_(view) {}
        ~LmdbPostings() override {
            if (cursor_)
                view_.postingCursors_.push_back(std::move(*cursor_));
        }
        /// Finds the token's first chunk, decoded by the first next(): a caller that only asks
        /// size() (most pairs and initials of a word-start search) decodes nothing.
        bool find(std::string_view token) {
            token_ = token;
            start_ = view_.tokenStart(token);
            if (!start_)
                return false;
            prefix_ = postingPrefix(token);
            first_ = start_->firstValue;
            onFirst_ = true;
            return true;
        }
        bool next(uint32_t& length, uint32_t& id) override {
            if (!first_.empty()) {
                begin(first_);
                first_ = {};
            }
            if (reader_.done() && !toNextChunk())
                return false;
            return take(length, id);
        }
        /// A chunk is read only as far as the target when the target is in it (the next
        /// chunk's key, its first posting, says so); chunks wholly before the target are passed
        /// over by a seek, not decoded: an intersection with a rare stream reads a few chunks of
        /// a common token, and of each only the postings up to the ones it asks for.
        bool skipTo(uint32_t& length, uint32_t& id) override {
            const Posting target{length, id};
            if (!first_.empty()) {
                begin(first_);
                first_ = {};
            }
            if (!(nextFirst() <= target)) // in the chunk at hand, or the next one's first
                return readTo(target, length, id);
            lmdb::Cursor& cursor = this->cursor();
            onFirst_ = false;
            afterSecond_ = false;
            const std::string seek = postingKey(token_, target);
            std::string_view k = seek, v;
            const bool landed = cursor.seek(MDB_SET_RANGE, k, v);
            ahead_ = false;
            if (!landed || k != seek) {
                // The chunk before the one landed on (or the last) may hold the target.
                std::string_view pk, pv;
                const bool before =
                    landed ? cursor.get(MDB_PREV, pk, pv) : cursor.get(MDB_LAST, pk, pv);
                if (before && pk.starts_with(prefix_)) {
                    begin(pv);
                    return readTo(target, length, id); // goes on to the next chunk if need be
                }
                if (!landed)
                    return false; // no chunk after it
                k = seek;         // back to the chunk landed on: the first past the target
                if (!cursor.seek(MDB_SET_RANGE, k, v))
                    return false;
            }
            if (!k.starts_with(prefix_))
                return false;
            begin(v);
            return take(length, id);
        }
        size_t size() override {
            if (!size_)
                size_ = view_.postingCount(token_);
            return *size_;
        }

    private:
        /// The cursor, taken when first needed.
        lmdb::Cursor& cursor() {
            if (!cursor_)
                cursor_.emplace(view_.takePostingCursor());
            return *cursor_;
        }
        /// Starts reading the chunk `v`, the one the cursor is on.
        void begin(std::string_view v) {
            if (!reader_.start(v))
                throw damaged();
            ahead_ = false;
        }
        /// The next posting of the chunk at hand, which is not done.
        bool take(uint32_t& length, uint32_t& id) {
            Posting posting;
            if (!reader_.next(posting))
                throw damaged();
            length = posting.length;
            id = posting.id;
            return true;
        }
        /// The first posting not before `target` from the one at hand on, which the next
        /// chunk's first posting is past (or there is no next chunk).
        bool readTo(const Posting& target, uint32_t& length, uint32_t& id) {
            for (;;) {
                if (reader_.done() && !toNextChunk())
                    return false;
                take(length, id);
                if (!(Posting{length, id} < target))
                    return true;
            }
        }
        /// The next chunk's first posting, from its key; the largest posting if there is none.
        /// Leaves the cursor on the next chunk (ahead_), which toNextChunk() then starts.
        Posting nextFirst() {
            if (!ahead_) {
                if (onFirst_) { // the second chunk, from tokenStart()
                    hasNext_ = start_->hasSecond;
                    next_ = start_->secondValue;
                    if (hasNext_)
                        nextFirstPosting_ = postingKeyFirst(start_->secondKey);
                } else {
                    lmdb::Cursor& cursor = this->cursor();
                    std::string_view k;
                    if (afterSecond_) { // on the second chunk without the cursor: put it there
                        afterSecond_ = false;
                        k = start_->secondKey;
                        std::string_view v;
                        if (!cursor.seek(MDB_SET_KEY, k, v))
                            throw damaged();
                    }
                    hasNext_ = cursor.get(MDB_NEXT, k, next_) && k.starts_with(prefix_);
                    if (hasNext_)
                        nextFirstPosting_ = postingKeyFirst(k);
                }
                ahead_ = true;
            }
            return hasNext_ ? nextFirstPosting_ : Posting{UINT32_MAX, UINT32_MAX};
        }
        /// Starts the next chunk of the token; false if there is none.
        bool toNextChunk() {
            nextFirst();
            if (!hasNext_)
                return false;
            begin(next_);
            if (onFirst_) {
                onFirst_ = false;
                afterSecond_ = true;
            }
            return true;
        }
        StoreError damaged() const {
            return damagedStore(view_.s_.options.directory, "corrupt postings chunk");
        }
        LmdbView& view_;
        std::optional<lmdb::Cursor> cursor_;
        const TokenStart* start_ = nullptr;
        std::string token_, prefix_;
        std::string_view first_; ///< the first chunk until next() starts it
        /// Reading the first chunk, the cursor not taken or not on it: the second is start_'s.
        bool onFirst_ = false;
        /// Reading the second chunk (from start_), the cursor not on it.
        bool afterSecond_ = false;
        PostingChunkReader reader_;
        /// The cursor is on the chunk after the one read (next_, hasNext_, nextFirstPosting_).
        bool ahead_ = false;
        bool hasNext_ = false;
        std::string_view next_;
        Posting nextFirstPosting_;
        std::optional<size_t> size_;
    };

    std::unique_ptr<Postings> postings(std::string_view token) override {
        // Cursors come back when the postings go: a search opens hundreds of streams.
        auto postings = std::make_unique<LmdbPostings>(*this);
        if (!postings->find(token))
            return nullptr;
        return postings;
    }

    StoreError damagedPostings() const {
        return damagedStore(s_.options.directory, "corrupt postings chunk");
    }
    /// Calls fn(token, chunk) for the tokens of the group row `k`, `v` in order, until it
    /// returns false.
    template <typename Fn> void forEachInGroup(std::string_view k, std::string_view v, Fn&& fn) {
        PostingGroupReader reader;
        std::string_view token, chunk;
        if (!reader.start(k, v))
            throw damagedPostings();
        while (!reader.done()) {
            if (!reader.next(token, chunk))
                throw damagedPostings();
            if (!fn(token, chunk))
                return;
        }
    }

    size_t postingCount(std::string_view token) override {
        if (token.size() == 4 && token[0] == kInitialsToken)
            if (const std::vector<uint32_t>* counts = vocabulary().initials()) {
                const std::optional<size_t> slot =
                    SymbolStore::Impl::Vocabulary::initialsSlot(token[1], token[2], token[3]);
                return slot ? (*counts)[*slot] : 0;
            }
        const TokenStart* start = tokenStart(token);
        if (!start)
            return 0;
        if (!start->hasSecond) { // one chunk: a grouped token's, or one row's
            const std::optional<size_t> n = postingChunkSize(start->firstValue);
            if (!n)
                throw damagedPostings();
            return *n;
        }
        if (!postingsCursor_)
            postingsCursor_.emplace(txn(), s_.postings);
        const std::string prefix = postingPrefix(token);
        size_t count = 0;
        std::string_view k = prefix, v;
        for (bool more = postingsCursor_->seek(MDB_SET_RANGE, k, v); more && k.starts_with(prefix);
             more = postingsCursor_->get(MDB_NEXT, k, v)) {
            std::optional<size_t> n = postingChunkSize(v);
            if (!n)
                throw damagedStore(s_.options.directory, "corrupt postings chunk");
            count += *n;
        }
        return count;
    }

    /// Calls fn(token, chunk) for each chunk of each token that starts with `prefix`, tokens
    /// in order, a token's chunks in order; false when fn does (and stops). `token` is valid
    /// during the call.
    template <typename Fn>
    bool forEachChunkStarting(lmdb::Cursor& cursor, std::string_view prefix, Fn&& fn) {
        enum class Group { Go, Stopped, Past };
        // Of a group row, the tokens from `prefix` on that start with it.
        const auto eachInGroup = [&](std::string_view k, std::string_view v) {
            Group result = Group::Go;
            forEachInGroup(k, v, [&](std::string_view token, std::string_view chunk) {
                if (token < prefix)
                    return true;
                if (!token.starts_with(prefix))
                    result = Group::Past;
                else if (!fn(token, chunk))
                    result = Group::Stopped;
                return result == Group::Go;
            });
            return result;
        };
        std::string_view k = prefix, v;
        bool more = cursor.seek(MDB_SET_RANGE, k, v);
        // The group row before the first key from `prefix` on may hold tokens that start
        // with it.
        std::string_view pk, pv;
        const bool before = more ? cursor.get(MDB_PREV, pk, pv) : cursor.get(MDB_LAST, pk, pv);
        if (before && isPostingGroupKey(pk)) {
            if (const Group g = eachInGroup(pk, pv); g != Group::Go)
                return g == Group::Past;
        }
        if (more && before) // back to the row from `prefix` on
            more = cursor.get(MDB_NEXT, k, v);
        else if (more) // it is the table's first row
            more = cursor.seek(MDB_SET_RANGE, k = prefix, v);
        for (; more && k.starts_with(prefix); more = cursor.get(MDB_NEXT, k, v)) {
            if (isPostingGroupKey(k)) {
                if (const Group g = eachInGroup(k, v); g != Group::Go)
                    return g == Group::Past;
                continue;
            }
            const size_t end = k.find('\0');
            if (end == std::string_view::npos || end + 7 != k.size())
                throw damagedPostings();
            if (!fn(k.substr(0, end), v))
                return false;
        }
        return true;
    }

    void forEachTokenStarting(std::string_view prefix,
                              const std::function<bool(std::string_view, size_t)>& fn) override {
        // A cursor of its own: fn may ask other questions of the postings.
        if (!tokensCursor_)
            tokensCursor_.emplace(txn(), s_.postings);
        std::string token;
        size_t count = 0;
        const bool all = forEachChunkStarting(
            *tokensCursor_, prefix, [&](std::string_view chunkToken, std::string_view chunk) {
                const std::optional<size_t> n = postingChunkSize(chunk);
                if (!n)
                    throw damagedPostings();
                if (chunkToken != token) {
                    if (!token.empty() && !fn(token, count))
                        return false;
                    token.assign(chunkToken);
                    count = 0;
                }
                count += *n;
                return true;
            });
        if (all && !token.empty())
            fn(token, count);
    }

    bool namesOfTokensStarting(std::string_view prefix, std::vector<NameRef>& out,
                               size_t cap) override {
        if (!tokensCursor_)
            tokensCursor_.emplace(txn(), s_.postings);
        const size_t was = out.size();
        return forEachChunkStarting(*tokensCursor_, prefix,
                                    [&](std::string_view, std::string_view chunk) {
                                        if (!decodePostingChunk(chunk, namesChunk_))
                                            throw damagedPostings();
                                        if (out.size() - was + namesChunk_.size() > cap) {
                                            out.resize(was);
                                            return false;
                                        }
                                        for (const Posting& p : namesChunk_)
                                            out.emplace_back(p.length, p.id);
                                        return true;
                                    });
    }

    bool hasPosting(std::string_view token, uint32_t length, uint32_t id) override {
        const Posting target{length, id};
        // A search asks a few tokens in turn about names in increasing order: mostly inside
        // the chunks it asked last, one per token, answered without a seek.
        for (AskedChunk& chunk : askedChunks_)
            if (chunk.covers(token, target))
                return holds(chunk, target);
        const TokenStart* start = tokenStart(token);
        if (!start)
            return false;
        if (!start->hasSecond) { // one chunk (a grouped token's, or one row's):
                                 // no seek
            AskedChunk& chunk = askedChunks_[nextAskedChunk_++ % askedChunks_.size()];
            chunk.token.assign(token);
            chunk.first = Posting{};
            chunk.next.reset();
            chunk.read.clear();
            if (!chunk.reader.start(start->firstValue)) {
                chunk.token.clear();
                throw damagedPostings();
            }
            return holds(chunk, target);
        }
        if (!postingsCursor_)
            postingsCursor_.emplace(txn(), s_.postings);
        const auto ofToken = [&](std::string_view key) {
            return key.size() > token.size() && key.starts_with(token) && key[token.size()] == 0;
        };
        const std::string seek = postingKey(token, target);
        std::string_view k = seek, v;
        std::optional<Posting> next; // the first posting of the token's chunk after k's
        const bool landed = postingsCursor_->seek(MDB_SET_RANGE, k, v);
        if (landed && k == seek) {
            std::string_view nk, nv;
            if (postingsCursor_->get(MDB_NEXT, nk, nv) && ofToken(nk))
                next = postingKeyFirst(nk);
        } else {
            // The chunk before the one landed on (or the last) is the one that may hold it.
            if (landed && ofToken(k))
                next = postingKeyFirst(k);
            if (!(landed ? postingsCursor_->get(MDB_PREV, k, v)
                         : postingsCursor_->get(MDB_LAST, k, v)) ||
                !ofToken(k))
                return false;
        }
        AskedChunk& chunk = askedChunks_[nextAskedChunk_++ % askedChunks_.size()];
        chunk.token.assign(token);
        chunk.first = postingKeyFirst(k);
        chunk.next = next;
        chunk.read.clear();
        if (!chunk.reader.start(v)) {
            chunk.token.clear();
            throw damagedStore(s_.options.directory, "corrupt postings chunk");
        }
        return holds(chunk, target);
    }

    std::optional<std::string_view> indexedName(uint32_t id) override {
        // From the summaries when they are of this snapshot (symdexd), which the View holds;
        // else from the map, which stays while the View's read transaction does.
        if (const SymbolSummaries* summaries = ownSummaries())
            return summaries->indexedName(id);
        auto bucket = txn().get(s_.nameText, nameBucketKey(id));
        if (!bucket)
            return std::nullopt;
        return nameInBucket(*bucket, id);
    }

    bool namesInMemory() override { return ownSummaries() != nullptr; }

    std::optional<EntryRank> bestEntryRank(std::string_view key, uint32_t nameId) override {
        // Declarations of files shadowed by the overlay count too: a bound, never too high.
        std::optional<EntryRank> best;
        const SymbolSummaries* summaries = nameId != kNoNameId ? ownSummaries() : nullptr;
        if (!summaries ||
            !summaries->forEachDeclarationOfName(nameId, [&](const SymbolSummary& row) {
                if (const EntryRank rank = summaries->rankOf(row, key); !best || rank < *best)
                    best = rank;
            }))
            best = reader_.bestEntryRank(key);
        for (const auto& file : staged_) {
            auto [begin, end] = file->symbolsNamed(key);
            for (const uint32_t* seq = begin; seq != end; ++seq)
                if (const EntryRank rank = EntryRank::unpack(file->symbols[*seq].nameRank);
                    !best || rank < *best)
                    best = rank;
        }
        return best;
    }

    void forEachSymbolNamed(
        std::string_view key,
        const std::function<void(uint64_t, Symbol&&, const std::string&)>& fn) override {
        reader_.forEachNameEntry(key, [&](const NameEntry& entry) {
            if (shadowed(entry.fileId))
                return;
            if (auto symbol = reader_.symbol(entry.fileId, entry.seq)) {
                const uint64_t usrHash = symbol->usrHash();
                fn(usrHash, std::move(*symbol), reader_.path(entry.fileId));
            }
        });
        for (const auto& file : staged_) {
            auto [begin, end] = file->symbolsNamed(key);
            for (const uint32_t* seq = begin; seq != end; ++seq)
                fn(file->symbols[*seq].usrHash, stagedSymbol(*file, *seq), file->record.path);
        }
    }

    void forEachUsrNamed(std::string_view key, uint32_t nameId, NameDetail detail,
                         const std::function<void(NamedUsr&&)>& fn) override {
        // Brief, with the summaries of this very snapshot: the name's declarations by its id,
        // as summaries, in the order its `names` row lists them (the row is not read).
        if (const SymbolSummaries* own =
                detail == NameDetail::Brief && nameId != kNoNameId ? ownSummaries() : nullptr) {
            if (staged_.empty()) {
                if (forEachBestSummary(*own, nameId, key, fn))
                    return;
            } else {
                NamedUsrs groups;
                if (own->forEachDeclarationOfName(nameId, [&](const SymbolSummary& row) {
                        if (!shadowed(row.file))
                            groups.add(row.usrHash, own->symbol(row, key),
                                       reader_.path(row.file, own));
                    })) {
                    addStagedNamed(key, groups);
                    for (NamedUsr& named : groups.all())
                        fn(std::move(named));
                    return;
                }
            }
        }
        // Brief: rows from the summaries where they hold the row's block as this snapshot has it.
        const std::shared_ptr<const SymbolSummaries> summaries =
            detail == NameDetail::Brief ? s_.currentSummaries() : nullptr;
        // Definitions first: once a USR shows a definition, its declarations (whose rows its
        // `usrs` entry lists) cannot show it better, and are counted without being decoded. A
        // function declared in a header and defined in a source file costs one block, not two.
        std::vector<NameEntry> entries;
        reader_.forEachNameEntry(key, [&](const NameEntry& entry) {
            if (!shadowed(entry.fileId))
                entries.push_back(entry);
        });
        auto declaration = [](const NameEntry& e) { return EntryRank::unpack(e.rank).declaration; };
        // With the summaries of this very snapshot a declaration costs a lookup, less than
        // reading its USR's rows to pass over it (5.3K instructions a definition at 300k
        // names): each is taken, and counted under its USR as groups.add() does.
        bool ownersRead = summaries && reader_.sameSnapshot(*summaries);
        if (!ownersRead)
            std::stable_partition(entries.begin(), entries.end(),
                                  [&](const NameEntry& e) { return !declaration(e); });
        NamedUsrs groups;
        std::vector<NamedUsr>& usrs = groups.all();
        std::unordered_map<uint64_t, size_t> owners; // (file, seq) of a declaration -> usrs
        auto row = [](uint32_t fileId, uint32_t seq) { return uint64_t(fileId) << 32 | seq; };
        for (const NameEntry& entry : entries) {
            if (declaration(entry) && !ownersRead) {
                // The definitions are done: which of the rest are their USRs' declarations.
                ownersRead = true;
                for (size_t u = 0; u < usrs.size(); ++u)
                    if (usrs[u].best.symbol.isDefinition())
                        reader_.forEachUsrEntry(usrs[u].usrHash, [&](const UsrEntry& e) {
                            if (e.tag == kDeclTag)
                                owners.emplace(row(e.fileId, e.seq), u);
                        });
            }
            if (declaration(entry))
                if (auto owner = owners.find(row(entry.fileId, entry.seq)); owner != owners.end()) {
                    ++usrs[owner->second].count;
                    continue;
                }
            if (summaries)
                if (const SymbolSummary* row =
                        reader_.summary(*summaries, entry.fileId, entry.seq)) {
                    groups.add(row->usrHash, summaries->symbol(*row, key),
                               reader_.path(entry.fileId, summaries.get()));
                    continue;
                }
            if (auto symbol = reader_.symbol(entry.fileId, entry.seq)) {
                const uint64_t usrHash = symbol->usrHash();
                groups.add(usrHash, std::move(*symbol), reader_.path(entry.fileId));
            }
        }
        addStagedNamed(key, groups);
        for (NamedUsr& named : usrs)
            fn(std::move(named));
    }

    /// forEachUsrNamed() of name `nameId` (under `key`) from the summaries `own` of this
    /// snapshot, nothing staged: each USR's best row is chosen among its rows (betterOccurrence's
    /// order) and only that one made a Symbol. False, calling nothing, when `own` does not keep
    /// the name's rows.
    bool forEachBestSummary(const SymbolSummaries& own, uint32_t nameId, std::string_view key,
                            const std::function<void(NamedUsr&&)>& fn) {
        struct Best {
            uint64_t usrHash;
            const SymbolSummary* row;
            uint32_t count;
        };
        std::vector<Best> best;
        UsrSlots slots;
        auto better = [&](const SymbolSummary& a, const SymbolSummary& b) {
            const bool definition = a.flags & kDefinition;
            if (definition != bool(b.flags & kDefinition))
                return definition;
            if (a.file != b.file)
                return reader_.path(a.file, &own) < reader_.path(b.file, &own);
            return std::tie(a.line, a.column) < std::tie(b.line, b.column);
        };
        const bool kept = own.forEachDeclarationOfName(nameId, [&](const SymbolSummary& row) {
            const auto [at, added] = slots.slot(row.usrHash);
            if (added) {
                best.push_back({row.usrHash, &row, 1});
                return;
            }
            ++best[at].count;
            if (better(row, *best[at].row))
                best[at].row = &row;
        });
        if (!kept)
            return false;
        for (const Best& b : best)
            fn(NamedUsr{b.usrHash,
                        SymbolHit{own.symbol(*b.row, key), reader_.path(b.row->file, &own)},
                        b.count});
        return true;
    }

    /// The staged files' declarations under `key`, into `groups`.
    void addStagedNamed(std::string_view key, NamedUsrs& groups) {
        for (const auto& file : staged_) {
            auto [begin, end] = file->symbolsNamed(key);
            for (const uint32_t* seq = begin; seq != end; ++seq)
                groups.add(file->symbols[*seq].usrHash, stagedSymbol(*file, *seq),
                           file->record.path);
        }
    }

    void forEachOccurrence(uint64_t usrHash,
                           const std::function<void(Symbol&&, const std::string&)>& fn) override {
        reader_.forEachUsrEntry(usrHash, [&](const UsrEntry& entry) {
            if (entry.tag != kDeclTag || shadowed(entry.fileId))
                return;
            if (auto symbol = reader_.symbol(entry.fileId, entry.seq))
                fn(std::move(*symbol), reader_.path(entry.fileId));
        });
        for (const auto& file : staged_)
            for (uint32_t seq : EncodedFile::withUsr(file->symbolsByUsr, usrHash))
                fn(stagedSymbol(*file, seq), file->record.path);
    }

    std::optional<std::string> nameOf(uint64_t usrHash) override {
        if (std::optional<std::pair<uint32_t, uint32_t>> row = reader_.firstUsrEntry(
                usrHash, [&](uint32_t id, char tag) { return tag == kDeclTag && !shadowed(id); }))
            if (auto symbol = reader_.symbol(row->first, row->second))
                return std::move(symbol->name);
        for (const auto& file : staged_)
            for (uint32_t seq : EncodedFile::withUsr(file->symbolsByUsr, usrHash))
                return stagedSymbol(*file, seq).name;
        return std::nullopt;
    }

    void
    forEachReference(uint64_t usrHash,
                     const std::function<void(const Reference&, const std::string&)>& fn) override {
        forEachReferenceIn(usrHash, fn, /*relationsOnly=*/false);
    }

    void forEachRelationReference(
        uint64_t usrHash,
        const std::function<void(const Reference&, const std::string&)>& fn) override {
        forEachReferenceIn(usrHash, fn, /*relationsOnly=*/true);
    }

    /// forEachReference; with `relationsOnly`, only in the stored files whose `usrs` entry says
    /// some reference there is a base-specifier or an override.
    void forEachReferenceIn(uint64_t usrHash,
                            const std::function<void(const Reference&, const std::string&)>& fn,
                            bool relationsOnly) {
        reader_.forEachUsrEntry(usrHash, [&](const UsrEntry& entry) {
            if (entry.tag != kRefTag || (relationsOnly && !entry.relation) ||
                shadowed(entry.fileId))
                return;
            for (const Reference& ref : reader_.refsTo(entry.fileId, entry.seq, usrHash))
                fn(ref, reader_.path(entry.fileId));
        });
        for (const auto& file : staged_)
            for (uint32_t seq : EncodedFile::withUsr(file->refsByUsr, usrHash))
                fn(stagedReference(*file, seq), file->record.path);
    }

    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) override {
        if (const EncodedFile* staged = stagedFile(path)) {
            std::vector<Symbol> symbols;
            symbols.reserve(staged->symbols.size());
            for (uint32_t seq = 0; seq < staged->symbols.size(); ++seq)
                symbols.push_back(stagedSymbol(*staged, seq));
            return symbols;
        }
        return reader_.fileSymbols(path);
    }

    std::optional<std::vector<Reference>> fileReferences(const std::string& path) override {
        if (const EncodedFile* staged = stagedFile(path)) {
            std::vector<Reference> refs;
            refs.reserve(staged->references.size());
            for (uint32_t seq = 0; seq < staged->references.size(); ++seq)
                refs.push_back(stagedReference(*staged, seq));
            return refs;
        }
        return reader_.fileReferences(path);
    }

    std::optional<std::vector<Symbol>> fileSymbolsInLines(const std::string& path, uint32_t first,
                                                          uint32_t last) override {
        if (const EncodedFile* staged = stagedFile(path))
            return stagedInLines<Symbol>(staged->symbols, first, last, encodedSymbolLine,
                                         [&](uint32_t seq) { return stagedSymbol(*staged, seq); });
        return reader_.fileSymbolsInLines(path, first, last);
    }

    std::optional<std::vector<Reference>>
    fileReferencesInLines(const std::string& path, uint32_t first, uint32_t last) override {
        if (const EncodedFile* staged = stagedFile(path))
            return stagedInLines<Reference>(
                staged->references, first, last, encodedReferenceLine,
                [&](uint32_t seq) { return stagedReference(*staged, seq); });
        return reader_.fileReferencesInLines(path, first, last);
    }

    StoreStats stats() override {
        StoreStats st;
        st.formatVersion = kStoreFormatVersion;
        st.files = txn().entries(s_.files);
        st.tus = txn().entries(s_.tus);
        {
            // What is committed: staged files are not counted until they are.
            lmdb::Cursor cursor(txn(), s_.files);
            std::string_view k, v;
            for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v))
                if (std::optional<FileRecord> file = decodeFileRecord(v)) {
                    st.symbols += file->symbolCount;
                    st.references += file->referenceCount;
                }
        }
        st.distinctNames = 0;
        {
            lmdb::Cursor cursor(txn(), s_.nameText);
            std::string_view k, v;
            std::vector<std::string_view> slots;
            for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
                if (!decodeNameBucket(v, slots))
                    throw damagedStore(s_.options.directory, "corrupt name bucket");
                for (std::string_view name : slots)
                    st.distinctNames += !name.empty();
            }
        }
        forEachTu([&](const std::string&, const TuRecord& record) {
            st.tusWithErrors += record.status == TuStatus::Errors;
            st.tusFailed += record.status == TuStatus::Failed || record.status == TuStatus::Crashed;
        });
        st.mapSize = s_.env.mapSize();
        std::error_code ec;
        st.diskBytes = std::filesystem::file_size(s_.options.directory / "data.mdb", ec);
        return st;
    }

private:
    const lmdb::Txn& txn() const { return read_.txn; }
    /// The staged contents of `path`, if it was staged when the snapshot was taken.
    const EncodedFile* stagedFile(const std::string& path) const {
        auto it = stagedByPath_.find(path);
        return it == stagedByPath_.end() ? nullptr : it->second;
    }

    /// Whether the committed rows of file `id` are replaced by staged contents.
    bool shadowed(uint32_t id) {
        if (staged_.empty())
            return false;
        auto [it, inserted] = shadowed_.try_emplace(id, false);
        if (inserted)
            it->second = stagedFile(reader_.path(id)) != nullptr;
        return it->second;
    }

    /// The store's summaries if they are of this View's snapshot (every file's path, ASCII
    /// flag and the index's names then hold for it), else null; looked up once per View.
    const SymbolSummaries* ownSummaries() {
        if (!ownSummariesTaken_) {
            ownSummariesTaken_ = true;
            if (std::shared_ptr<const SymbolSummaries> summaries = s_.currentSummaries();
                summaries && reader_.sameSnapshot(*summaries))
                ownSummaries_ = std::move(summaries);
        }
        return ownSummaries_.get();
    }

    const SymbolStore::Impl& s_;
    std::shared_ptr<const SymbolSummaries> ownSummaries_; ///< ownSummaries()'s
    bool ownSummariesTaken_ = false;
    std::shared_lock<CountedSharedMutex> global_;
    std::vector<std::shared_ptr<const EncodedFile>> staged_;
    std::unordered_map<std::string, const EncodedFile*> stagedByPath_;
    SymbolStore::Impl::ReadTxn read_;
    SnapshotReader reader_;
    std::unordered_map<uint32_t, bool> shadowed_;
    std::optional<lmdb::Cursor> postingsCursor_; ///< hasPosting()'s, opened on first use
    std::optional<lmdb::Cursor> tokensCursor_;   ///< forEachTokenStarting()'s
    std::vector<lmdb::Cursor> postingCursors_;   ///< postings()' cursors no stream holds now
    /// tokenStart()'s, by postingPrefix(); nullopt: no such token.
    std::unordered_map<std::string, std::optional<TokenStart>> tokenStarts_;
    /// hasPosting()'s last chunks: as many as the tokens a search asks about together
    /// (name_search.cpp's Asked, at most 4), and a few more. Each is read as far as it was
    /// asked; the next chunk's first posting bounds the names it can answer for.
    struct AskedChunk {
        std::string token; ///< empty: no chunk
        Posting first;
        std::optional<Posting> next; ///< none: the token's last chunk
        PostingChunkReader reader;   ///< where reading stopped
        std::vector<Posting> read;   ///< the postings read so far
        bool covers(std::string_view t, const Posting& p) const {
            return !token.empty() && token == t && first <= p && (!next || p < *next);
        }
    };
    /// Whether `chunk`, which covers `target`, holds it: read on from where it stopped, no
    /// further than the target.
    bool holds(AskedChunk& chunk, const Posting& target) {
        if (!chunk.read.empty() && target <= chunk.read.back())
            return std::binary_search(chunk.read.begin(), chunk.read.end(), target);
        Posting posting;
        while (!chunk.reader.done()) {
            if (!chunk.reader.next(posting)) {
                chunk.token.clear();
                throw damagedStore(s_.options.directory, "corrupt postings chunk");
            }
            chunk.read.push_back(posting);
            if (target <= posting)
                return posting == target;
        }
        return false;
    }
    std::array<AskedChunk, 8> askedChunks_;
    size_t nextAskedChunk_ = 0;
    std::vector<Posting> namesChunk_;                                 ///< namesOfTokensStarting()'s
    std::shared_ptr<const SymbolStore::Impl::Vocabulary> vocabulary_; ///< on first use
};

} // namespace

StoreSnapshot SymbolStore::snapshot() const {
    return StoreSnapshot(std::make_unique<LmdbView>(*impl_));
}

uint64_t SymbolStore::prepareNameSearch() const {
    return LmdbView(*impl_).prepareNameSearch();
}

std::optional<SummaryStats> SymbolStore::prepareSummaries(const std::function<bool()>& goOn,
                                                          size_t blocksAPiece) const {
    std::lock_guard building(impl_->summariesBuildMu);
    SymbolSummaries::Builder builder(impl_->currentSummaries());
    // In pieces (1,024 blocks), each in a read transaction of its own: a summary holds for
    // the bytes it was made from, whatever snapshot they were read in, and a transaction held
    // for the whole pass (seconds at 2M names) would keep the writer from growing the map
    // that long.
    const size_t piece = std::max<size_t>(blocksAPiece, 1);
    std::string resume;
    for (bool more = true; more;) {
        if (goOn && !goOn())
            return std::nullopt;
        Impl::ReadTxn read = impl_->beginRead();
        builder.readFrom(impl_->environmentGeneration.load(std::memory_order_acquire),
                         mdb_txn_id(read.txn.get()));
        SnapshotReader reader(*impl_, read.txn);
        std::string_view k = resume, v;
        if (resume.empty()) {
            // The files' paths and whether their bytes were ASCII, for the answers'
            // places (one per answer was a whole FileRecord decoded, and a stat).
            lmdb::Cursor files(read.txn, impl_->files);
            for (bool f = files.get(MDB_FIRST, k, v); f; f = files.get(MDB_NEXT, k, v))
                if (const std::optional<FileRecord> record = decodeFileRecord(v))
                    builder.addFile(uint32_t(readBigEndian(k, 4)), *record);
            lmdb::Cursor names(read.txn, impl_->nameText);
            size_t bytes = 0, buckets = 0; // sized first: tens of MiB at 2M names, grown not
            for (bool f = names.get(MDB_FIRST, k, v); f; f = names.get(MDB_NEXT, k, v))
                if (k.size() == 4) {
                    bytes += v.size();
                    buckets = readBigEndian(k, 4) + 1;
                }
            builder.reserveNames(buckets, bytes);
            for (bool f = names.get(MDB_FIRST, k, v); f; f = names.get(MDB_NEXT, k, v))
                if (k.size() == 4)
                    builder.addNameBucket(uint32_t(readBigEndian(k, 4)), v);
            k = {};
        }
        lmdb::Cursor cursor(read.txn, impl_->symbols);
        more = resume.empty() ? cursor.get(MDB_FIRST, k, v) : cursor.seek(MDB_SET_RANGE, k, v);
        for (size_t n = 0; more && n < piece; ++n, more = cursor.get(MDB_NEXT, k, v)) {
            if (k.size() != 8)
                continue;
            builder.add(uint32_t(readBigEndian(k, 4)), uint32_t(readBigEndian(k.substr(4), 4)), v,
                        [&] { return reader.blockSymbols(v); });
        }
        if (more) {
            resume.assign(k);
        } else if (builder.oneSnapshot()) {
            // The declarations of each name, by its id, as rows of the summaries: read in the
            // snapshot of every block, so only for readers of that snapshot.
            std::vector<NameVariant> variants;
            try {
                forEachNamesRow(read.txn, impl_->names, "",
                                [&](std::string_view, std::string_view row) {
                                    if (decodeNameRow(row, variants))
                                        builder.addNamesRow(variants);
                                    return true;
                                });
            } catch (const CorruptNamesBlock&) {
                // The rest are read from the store, which reports the damage to the search.
            }
        }
    }
    SummaryStats stats;
    stats.copied = builder.copied();
    stats.decoded = builder.decoded();
    std::shared_ptr<const SymbolSummaries> next = builder.finish();
    stats.blocks = next->blocks();
    stats.rows = next->rows();
    stats.bytes = next->bytes();
    stats.names = next->namesKept();
    {
        // The previous summaries (tens of MiB) are freed after the lock, not under it.
        std::lock_guard lock(impl_->summariesMu);
        impl_->summaries.swap(next);
    }
    return stats;
}

uint64_t SymbolStore::lastCommitId() const {
    // The meta pages, under the shared lock that keeps the map from being remapped: no read
    // transaction, which would wait for every reader when another process grew the map (the
    // daemon asks from its event loop).
    std::shared_lock mapped(impl_->mapResizeMu);
    MDB_envinfo info;
    return mdb_env_info(impl_->env.get(), &info) == MDB_SUCCESS ? info.me_last_txnid : 0;
}

size_t SymbolStore::prefaultMap() const {
    // The read transaction's shared lock keeps the map where it is (resizeMap remaps it), and a
    // value it reads points into the map: the mapping of /proc/self/maps that holds it is
    // LMDB's (it does not say where its map is, store_check.cpp). Found by address, not by
    // device and inode: on btrfs stat's device is the subvolume's, not the one maps shows.
    Impl::ReadTxn read = impl_->beginRead();
    const std::optional<std::string_view> format = read.txn.get(impl_->meta, "format");
    int fd = -1;
    struct stat file {};
    if (!format || mdb_env_get_fd(impl_->env.get(), &fd) != MDB_SUCCESS || fstat(fd, &file) != 0)
        return 0;
    // mincore tells which pages the page cache holds only to a process that owns the file or
    // may write it (Linux 5.0 on); to others it says all of them, and mapping "all" would read
    // the store from the disk ahead of requests: a read-only daemon serving another user's
    // store does not prefault.
    const std::filesystem::path data = impl_->options.directory / "data.mdb";
    if (geteuid() != 0 && geteuid() != file.st_uid &&
        faccessat(AT_FDCWD, data.c_str(), W_OK, AT_EACCESS) != 0)
        return 0;
    const auto inside = reinterpret_cast<uintptr_t>(format->data());
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        unsigned long start = 0, end = 0, offset = 0, inode = 0;
        char perms[5] = {}, device[32] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %4s %lx %31s %lu", &start, &end, perms, &offset,
                        device, &inode) != 6 ||
            inside < start || inside >= end)
            continue;
        if (inode != file.st_ino || offset != 0)
            return 0;
        const size_t page = size_t(sysconf(_SC_PAGESIZE));
        const size_t pages = std::min<size_t>(end - start, size_t(file.st_size)) / page;
        // Only the pages the page cache holds: mapping the others would read them from the
        // disk, which PageCacheWarmer does at idle priority and only while no request waits.
        std::vector<unsigned char> cached(pages);
        char* const base = reinterpret_cast<char*>(start);
        if (pages == 0 || mincore(base, pages * page, cached.data()) != 0)
            return 0;
        // In pieces: each madvise holds the process's mmap lock, which malloc's mmap and munmap
        // of other threads wait for.
        const size_t piece = (size_t(8) << 20) / page;
        size_t mapped = 0;
        for (size_t first = 0; first < pages;) {
            if (!(cached[first] & 1)) {
                ++first;
                continue;
            }
            size_t last = first;
            while (last < pages && last - first < piece && (cached[last] & 1))
                ++last;
            if (madvise(base + first * page, (last - first) * page, MADV_POPULATE_READ) != 0)
                return mapped;
            mapped += (last - first) * page;
            first = last;
        }
        return mapped;
    }
    return 0;
}
} // namespace symdex
