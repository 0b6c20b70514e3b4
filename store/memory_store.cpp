#include "store/memory_store.h"

#include "store/name_index.h"
#include "store/name_search.h"
#include "store/snapshot_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace symdex {

namespace {

struct MemoryFile {
    FileRecord record;
    std::vector<Symbol> symbols;
    std::vector<Reference> references;
};

/// An entry of an index: a row (file id, seq) of the symbols (decl) or the references.
struct Row {
    uint64_t usrHash;
    uint32_t fileId;
    uint32_t seq;
    bool decl;
    friend auto operator<=>(const Row&, const Row&) = default;
};

} // namespace

struct MemoryStore::State {
    std::map<std::string, uint32_t> ids; ///< path -> file id
    std::map<uint32_t, std::shared_ptr<const MemoryFile>> files;
    std::map<uint32_t, TuRecord> tus; ///< by the main file's id
    std::map<uint32_t, std::string> absent;
    std::map<std::string, std::string> meta; ///< StoreEdit::setMeta
    std::map<std::string, uint32_t> absentIds;
    uint32_t nextFileId = 1;
    uint32_t nextAbsentId = 1;
    /// Name key -> declarations; USR -> declarations and references. Rows sorted, as LMDB keeps
    /// its duplicates, so both stores meet them in the same order.
    std::map<std::string, std::vector<Row>> names;
    std::unordered_map<uint64_t, std::vector<Row>> usrs;

    uint32_t fileId(const std::string& path, bool create) {
        if (auto it = ids.find(path); it != ids.end())
            return it->second;
        if (!create)
            return 0;
        const uint32_t id = nextFileId++;
        ids.emplace(path, id);
        auto file = std::make_shared<MemoryFile>();
        file->record.path = path;
        files.emplace(id, std::move(file));
        return id;
    }

    uint32_t absentId(const std::string& path) {
        if (auto it = absentIds.find(path); it != absentIds.end())
            return it->second;
        const uint32_t id = nextAbsentId++;
        absentIds.emplace(path, id);
        absent.emplace(id, path);
        return id;
    }

    static void insertRow(std::vector<Row>& rows, const Row& row) {
        rows.insert(std::upper_bound(rows.begin(), rows.end(), row), row);
    }

    static void eraseRows(std::vector<Row>& rows, uint32_t id) {
        std::erase_if(rows, [&](const Row& row) { return row.fileId == id; });
    }

    /// Drops a file's rows from the indexes (its record stays).
    void removeContents(uint32_t id) {
        auto it = files.find(id);
        if (it == files.end())
            return;
        for (const Symbol& symbol : it->second->symbols) {
            auto named = symbol.isLocal() ? names.end() : names.find(nameKey(symbol.name));
            if (named != names.end()) {
                eraseRows(named->second, id);
                if (named->second.empty())
                    names.erase(named);
            }
            eraseUsrRows(symbol.usrHash(), id);
        }
        for (const Reference& ref : it->second->references)
            eraseUsrRows(ref.usrHash, id);
    }

    void eraseUsrRows(uint64_t usrHash, uint32_t id) {
        auto found = usrs.find(usrHash);
        if (found == usrs.end())
            return;
        eraseRows(found->second, id);
        if (found->second.empty())
            usrs.erase(found);
    }

    void writeFile(IndexedFile&& indexed, const std::string& owner) {
        const uint32_t id = fileId(indexed.file.path, true);
        removeContents(id);
        auto file = std::make_shared<MemoryFile>();
        file->record = std::move(indexed.file);
        file->record.symbolCount = uint32_t(indexed.symbols.size());
        file->record.referenceCount = uint32_t(indexed.references.size());
        file->record.ownerFileId = fileId(owner, true);
        file->symbols = std::move(indexed.symbols);
        file->references = std::move(indexed.references);
        for (uint32_t seq = 0; seq < file->symbols.size(); ++seq) {
            const Symbol& symbol = file->symbols[seq];
            const Row row{symbol.usrHash(), id, seq, true};
            if (!symbol.isLocal())
                insertRow(names[nameKey(symbol.name)], row);
            insertRow(usrs[row.usrHash], row);
        }
        for (uint32_t seq = 0; seq < file->references.size(); ++seq)
            insertRow(usrs[file->references[seq].usrHash],
                      {file->references[seq].usrHash, id, seq, false});
        files[id] = std::move(file);
    }

    void writeTu(const IndexedTu& tu) {
        TuRecord record = tu.record;
        record.fileIds.clear();
        for (const std::string& path : tu.includedFiles)
            record.fileIds.push_back(fileId(path, true));
        record.filesDigest = filesDigestOf(tu);
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
        tus[record.fileIds.front()] = std::move(record);
    }

    void apply(const StoreEdit& edit) {
        for (const std::string& path : edit.removeTus)
            if (uint32_t id = fileId(path, false))
                tus.erase(id);
        for (const std::string& path : edit.removeFiles) {
            if (uint32_t id = fileId(path, false)) {
                removeContents(id);
                tus.erase(id);
                files.erase(id);
                ids.erase(path);
            }
        }
        for (const std::string& path : edit.clearFiles) {
            if (uint32_t id = fileId(path, false)) {
                removeContents(id);
                auto empty = std::make_shared<MemoryFile>();
                empty->record.path = path;
                files[id] = std::move(empty);
            }
        }
        for (const auto& [key, value] : edit.setMeta)
            meta[key] = value;
        for (const FileRecord& stamp : edit.touchFiles) {
            const uint32_t id = fileId(stamp.path, false);
            if (!id)
                continue;
            auto file = std::make_shared<MemoryFile>(*files.at(id));
            file->record.mtimeNs = stamp.mtimeNs;
            file->record.size = stamp.size;
            file->record.ctimeNs = stamp.ctimeNs;
            file->record.inode = stamp.inode;
            files[id] = std::move(file);
        }
        for (const std::string& path : edit.removeAbsentPaths) {
            if (auto it = absentIds.find(path); it != absentIds.end()) {
                absent.erase(it->second);
                absentIds.erase(it);
            }
        }
    }
};

namespace {

/// The rows of a file (in source order) whose location is on lines [first, last].
template <typename Row>
std::vector<Row> inLines(const std::vector<Row>& rows, uint32_t first, uint32_t last) {
    auto begin = std::partition_point(rows.begin(), rows.end(),
                                      [&](const Row& row) { return row.location.line < first; });
    auto end = std::partition_point(begin, rows.end(),
                                    [&](const Row& row) { return row.location.line <= last; });
    return std::vector<Row>(begin, end);
}

class MemoryView final : public StoreSnapshot::View {
public:
    explicit MemoryView(std::shared_ptr<const MemoryStore::State> state) : s_(std::move(state)) {}

    std::optional<FileRecord> file(const std::string& path) override {
        const MemoryFile* f = find(path);
        return f ? std::optional(f->record) : std::nullopt;
    }

    void forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) override {
        for (const auto& [id, file] : s_->files)
            fn(id, file->record);
    }

    std::optional<TuRecord> tu(const std::string& mainFile) override {
        auto id = s_->ids.find(mainFile);
        if (id == s_->ids.end())
            return std::nullopt;
        auto it = s_->tus.find(id->second);
        return it == s_->tus.end() ? std::nullopt : std::optional(it->second);
    }

    void forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) override {
        for (const auto& [id, record] : s_->tus)
            fn(s_->files.at(id)->record.path, record);
    }

    void forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) override {
        for (const auto& [id, path] : s_->absent)
            fn(id, path);
    }

    std::optional<std::string> metaValue(const std::string& key) override {
        auto found = s_->meta.find(key);
        return found == s_->meta.end() ? std::nullopt : std::optional(found->second);
    }

    void forEachNameKey(std::string_view prefix,
                        const std::function<bool(std::string_view)>& fn) override {
        for (auto it = s_->names.lower_bound(std::string(prefix));
             it != s_->names.end() && it->first.starts_with(prefix); ++it)
            if (!fn(it->first))
                return;
    }

    // No name index: name search checks every name.
    bool hasNameIndex() override { return false; }
    void forEachUnindexedName(const std::function<void(std::string_view)>& fn) override {
        for (const auto& [key, rows] : s_->names)
            for (const Row& row : rows)
                fn(s_->files.at(row.fileId)->symbols[row.seq].name);
    }
    void forEachWord(std::string_view,
                     const std::function<bool(std::string_view, uint32_t)>&) override {}
    std::unique_ptr<Postings> postings(std::string_view) override { return nullptr; }
    bool hasPosting(std::string_view, uint32_t, uint32_t) override { return false; }
    std::optional<std::string_view> indexedName(uint32_t) override { return std::nullopt; }

    void forEachSymbolNamed(
        std::string_view key,
        const std::function<void(uint64_t, Symbol&&, const std::string&)>& fn) override {
        auto it = s_->names.find(std::string(key));
        if (it == s_->names.end())
            return;
        for (const Row& row : it->second) {
            const MemoryFile& file = *s_->files.at(row.fileId);
            fn(row.usrHash, Symbol(file.symbols[row.seq]), file.record.path);
        }
    }

    void forEachOccurrence(uint64_t usrHash,
                           const std::function<void(Symbol&&, const std::string&)>& fn) override {
        forEachRow(usrHash, true, [&](const MemoryFile& file, uint32_t seq) {
            fn(Symbol(file.symbols[seq]), file.record.path);
        });
    }

    std::optional<std::string> nameOf(uint64_t usrHash) override {
        std::optional<std::string> name;
        forEachRow(usrHash, true, [&](const MemoryFile& file, uint32_t seq) {
            if (!name)
                name = file.symbols[seq].name;
        });
        return name;
    }

    void
    forEachReference(uint64_t usrHash,
                     const std::function<void(const Reference&, const std::string&)>& fn) override {
        forEachRow(usrHash, false, [&](const MemoryFile& file, uint32_t seq) {
            fn(file.references[seq], file.record.path);
        });
    }

    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) override {
        const MemoryFile* f = find(path);
        return f ? std::optional(f->symbols) : std::nullopt;
    }

    std::optional<std::vector<Reference>> fileReferences(const std::string& path) override {
        const MemoryFile* f = find(path);
        return f ? std::optional(f->references) : std::nullopt;
    }

    std::optional<std::vector<Symbol>> fileSymbolsInLines(const std::string& path, uint32_t first,
                                                          uint32_t last) override {
        const MemoryFile* f = find(path);
        return f ? std::optional(inLines(f->symbols, first, last)) : std::nullopt;
    }

    std::optional<std::vector<Reference>>
    fileReferencesInLines(const std::string& path, uint32_t first, uint32_t last) override {
        const MemoryFile* f = find(path);
        return f ? std::optional(inLines(f->references, first, last)) : std::nullopt;
    }

    StoreStats stats() override {
        StoreStats st;
        st.formatVersion = kStoreFormatVersion;
        st.files = s_->files.size();
        st.tus = s_->tus.size();
        for (const auto& [id, file] : s_->files) {
            st.symbols += file->symbols.size();
            st.references += file->references.size();
        }
        std::set<std::string> names;
        forEachUnindexedName(
            [&](std::string_view name) { names.insert(symdex::indexedName(name)); });
        st.distinctNames = names.size();
        for (const auto& [id, record] : s_->tus) {
            st.tusWithErrors += record.status == TuStatus::Errors;
            st.tusFailed += record.status == TuStatus::Failed || record.status == TuStatus::Crashed;
        }
        return st;
    }

private:
    const MemoryFile* find(const std::string& path) const {
        auto id = s_->ids.find(path);
        return id == s_->ids.end() ? nullptr : s_->files.at(id->second).get();
    }

    template <typename Fn> void forEachRow(uint64_t usrHash, bool decl, Fn&& fn) const {
        auto it = s_->usrs.find(usrHash);
        if (it == s_->usrs.end())
            return;
        for (const Row& row : it->second)
            if (row.decl == decl)
                fn(*s_->files.at(row.fileId), row.seq);
    }

    std::shared_ptr<const MemoryStore::State> s_;
};

} // namespace

MemoryStore::MemoryStore() : state_(std::make_shared<const State>()) {}
MemoryStore::~MemoryStore() = default;

template <typename Edit> void MemoryStore::write(Edit&& edit) {
    std::shared_ptr<const State> current;
    {
        std::lock_guard lock(mu_);
        current = state_;
    }
    auto next = std::make_shared<State>(*current);
    edit(*next);
    std::lock_guard lock(mu_);
    state_ = std::move(next);
    ++commitStats_.commits;
}

void MemoryStore::publish(IndexedTu tu) {
    tu.includedHashes.resize(tu.includedFiles.size(), 0);
    if (tu.includedFiles.empty() || tu.includedFiles.front() != tu.mainFile) {
        tu.includedFiles.insert(tu.includedFiles.begin(), tu.mainFile);
        tu.includedHashes.insert(tu.includedHashes.begin(), 0);
    }
    std::lock_guard writing(writeMu_);
    // A file this generation already holds with a lower priority number is not written.
    std::erase_if(tu.files, [&](const IndexedFile& file) {
        auto [it, inserted] = accepted_.try_emplace(file.file.path, tu.generation, file.priority);
        if (!inserted && tu.generation != 0 && it->second.first == tu.generation &&
            file.priority > it->second.second)
            return true;
        it->second = {tu.generation, file.priority};
        return false;
    });
    write([&](State& state) {
        for (IndexedFile& file : tu.files)
            state.writeFile(std::move(file), tu.mainFile);
        state.writeTu(tu);
    });
    std::lock_guard lock(mu_);
    ++commitStats_.tusCommitted;
}

void MemoryStore::apply(StoreEdit edit) {
    std::lock_guard writing(writeMu_);
    for (const std::string& path : edit.removeFiles)
        accepted_.erase(path);
    for (const std::string& path : edit.clearFiles)
        accepted_.erase(path);
    write([&](State& state) { state.apply(edit); });
}

void MemoryStore::flush() {
    std::lock_guard writing(writeMu_);
    accepted_.clear();
}

CommitStats MemoryStore::commitStats() const {
    std::lock_guard lock(mu_);
    return commitStats_;
}

StoreSnapshot MemoryStore::snapshot() const {
    std::lock_guard lock(mu_);
    return StoreSnapshot(std::make_unique<MemoryView>(state_));
}

} // namespace symdex
