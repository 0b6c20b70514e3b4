// What a symbol store is, whoever keeps it: the records it holds, the one consistent view queries
// read (StoreSnapshot), and the interface the indexer writes through and the daemon and the CLI
// read through (Store). Two stores implement it: SymbolStore (store/symbol_store.h), the
// persistent one on LMDB, and MemoryStore (store/memory_store.h), which keeps everything in
// memory for tests and tools. Both give the same answers to the same publications: tests check
// it (tests/store/memory_store_test.cpp).
#pragma once

#include "store/lock_telemetry.h"
#include "store/records.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

/// How writers and readers are kept apart (`--lock-mode`).
enum class LockMode : uint8_t {
    /// Striped per-file reader-writer locks over the staged overlay; queries never wait for the
    /// indexing of other files.
    PerFile,
    /// KDevelop's DUChain design, for comparison: one store-wide reader-writer lock, held
    /// exclusively while a TU's symbols are extracted and published, and shared by each query.
    Global,
};

std::string_view lockModeName(LockMode mode);
std::optional<LockMode> parseLockMode(std::string_view name);

/// The symbols and references of one file, as extracted from one translation unit.
struct IndexedFile {
    FileRecord file; ///< path, contentHash, mtimeNs and size; the counts are filled by the store
    std::vector<Symbol> symbols;
    std::vector<Reference> references;
    /// Within one generation, a file published twice keeps the version with the lower priority
    /// number, whatever order the two arrive in (0: the main file of its TU; headers: 1 + the
    /// claiming TU's rank). This makes a run's result independent of thread timing.
    uint32_t priority = 0;
    /// The parse skipped function bodies in this (non-system) file: its references inside those
    /// bodies are missing. Never expected for an owner in per-thread or no-session mode; reported.
    bool bodiesSkipped = false;
};

/// Everything one parse of a translation unit produced: the unit of publication.
struct IndexedTu {
    std::string mainFile;                   ///< absolute path of the TU's main file
    TuRecord record;                        ///< fileIds are filled by the store from includedFiles
    std::vector<std::string> includedFiles; ///< every file the parse read, main file first
    /// Parallel to includedFiles: each file's content hash as the parse read it (0: unknown;
    /// missing entries count as 0). Their filesDigest() becomes TuRecord::filesDigest.
    std::vector<uint64_t> includedHashes;
    /// Instead of includedHashes' digest: a TU's record copied from another store (a shard),
    /// whose digest is all it holds of them.
    std::optional<uint64_t> filesDigest;
    /// Every path the parse probed and did not find; becomes TuRecord::absentIds.
    std::vector<std::string> absentPaths;
    /// Files reached through a symlink: (the name looked up, absolute but as spelled; the real
    /// path it resolved to, one of includedFiles). Becomes TuRecord::aliases.
    std::vector<std::pair<std::string, std::string>> aliases;
    std::vector<IndexedFile> files; ///< the files this TU extracted (main file + claimed headers)
    /// The indexing run this TU belongs to (see IndexedFile::priority); 0: no run, always written.
    uint64_t generation = 0;
};

/// TuRecord::filesDigest of a publication: its own (a shard's record), else that of its hashes.
inline uint64_t filesDigestOf(const IndexedTu& tu) {
    if (tu.filesDigest)
        return *tu.filesDigest;
    std::vector<uint64_t> hashes = tu.includedHashes;
    hashes.resize(tu.includedFiles.size(), 0);
    return filesDigest(hashes);
}

/// Removals and bookkeeping that are not a parse result.
struct StoreEdit {
    std::vector<std::string> removeTus;   ///< main files that left the compile database
    std::vector<std::string> removeFiles; ///< files to forget entirely (contents and record)
    /// Files whose contents were re-hashed and found unchanged: only the stamps are updated.
    std::vector<FileRecord> touchFiles;
    /// Absent paths no TU refers to any more.
    std::vector<std::string> removeAbsentPaths;
    /// Entries of the store's metadata to write (key, value): what a shard's or a merge's run
    /// records about itself (indexer/shards.h). The key "format" is the store's own.
    std::vector<std::pair<std::string, std::string>> setMeta;
    /// Files whose contents no TU that parsed well extracts any more (their owner failed or
    /// crashed, or stopped including them, and no other TU includes them): emptied, as a clean
    /// index records them, keeping their id, which TU records name.
    std::vector<std::string> clearFiles;
};

/// A symbol occurrence with the file that holds it.
struct SymbolHit {
    Symbol symbol;
    std::string path;
};

struct ReferenceHit {
    Reference reference;
    std::string path;
};

/// How a name matches a query (matchName(), store/name_index.h), best first.
enum class MatchRank : uint8_t { Exact = 0, Prefix = 1, WordStart = 2, Substring = 3 };

/// One symbol matched by name: its best occurrence (a definition if there is one; among equals,
/// the first by path and position).
struct NameMatch {
    MatchRank rank;
    SymbolHit best;
    uint32_t occurrences = 0; ///< declarations and definitions in the store
};

/// What of a NameMatch's symbol a name search gives. Brief is what workspace/symbol shows (name,
/// qualified name, kind, flags, location): a store that keeps summaries of its declarations
/// (SymbolStore::prepareSummaries) then answers without decoding them, and the symbol's usr,
/// extent, signature and comment may be empty. The matches and their order are the same.
enum class NameDetail : uint8_t { Full, Brief };

/// How two symbols relate (StoreSnapshot::related).
enum class Relation : uint8_t {
    Callers,      ///< the functions (and variables' initializers) that use a function
    Callees,      ///< the functions a function's definition uses
    Bases,        ///< a class's direct base classes
    Derived,      ///< the classes that name a class as a direct base
    Overrides,    ///< the methods a method overrides directly
    OverriddenBy, ///< the methods that override a method directly
};

/// "callers", "callees", "bases", "derived", "overrides", "overridden-by".
std::string_view relationName(Relation relation);
std::optional<Relation> parseRelation(std::string_view name);

/// A symbol related to the one asked about, with where the relation is written.
struct Related {
    uint64_t usrHash = 0;
    /// Its definition, else its first declaration by path and position; none when the store
    /// has no declaration of it.
    std::optional<SymbolHit> symbol;
    /// The references that make the relation (the calls in the caller; a base-specifier; the
    /// overriding method's name), sorted by path and position; never empty.
    std::vector<ReferenceHit> sites;
};

struct StoreStats {
    uint32_t formatVersion = 0;
    size_t files = 0;
    size_t tus = 0;
    size_t tusWithErrors = 0;
    size_t tusFailed = 0;
    size_t symbols = 0;
    size_t references = 0;
    size_t distinctNames = 0; ///< distinct names of declarations, as spelled (locals aside)
    size_t mapSize = 0;       ///< current LMDB map size in bytes
    size_t diskBytes = 0;     ///< size of data.mdb
};

/// Counters of the write path, for reports.
struct CommitStats {
    uint64_t commits = 0;
    uint64_t tusCommitted = 0;
    uint64_t mapGrowths = 0;
    double commitSeconds = 0; ///< time spent inside write transactions
};

/// One consistent view of a store, taken once (Store::snapshot): every query on it sees the same
/// state, so a request that asks several questions (the symbol under the cursor, then its
/// definition) gets answers that agree. It never waits for a writer. Use it on one thread at a
/// time and for one request: while it lives it may pin what it sees (SymbolStore: the LMDB pages,
/// and the map, which the writer then waits to grow; in LockMode::Global, the store-wide lock).
class StoreSnapshot {
public:
    /// What an implementation provides: the records, and the indexes by name and by USR. The
    /// queries above them (name matching and ranking, sorting) are StoreSnapshot's, written once.
    class View;

    explicit StoreSnapshot(std::unique_ptr<View> view);
    StoreSnapshot(StoreSnapshot&&) noexcept;
    StoreSnapshot& operator=(StoreSnapshot&&) noexcept;
    ~StoreSnapshot();

    std::optional<FileRecord> file(const std::string& path) const;
    /// Whether the bytes of `path` the index read were ASCII only, when the snapshot knows it
    /// without a read (symdexd keeps every file's in memory with its summaries,
    /// SymbolStore::prepareSummaries); nullopt otherwise. An ASCII file's byte columns are
    /// its UTF-16 columns.
    std::optional<bool> indexedAscii(const std::string& path) const;
    /// Calls `fn` for every file record with its id (0 for a file staged and never committed).
    void forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) const;
    std::optional<TuRecord> tu(const std::string& mainFile) const;
    /// Calls `fn` for every TU with its main file's path.
    void forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) const;
    /// Calls `fn` for every entry of the table of absent paths (TuRecord::absentIds).
    void forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) const;
    /// An entry of the store's metadata (StoreEdit::setMeta); nullopt if it has none.
    std::optional<std::string> metaValue(const std::string& key) const;

    /// Symbols whose name matches `pattern` (matchName(), store/name_index.h): exact matches
    /// first, then prefixes, word starts ("glps" for GetLengthPrefixedSlice) and substrings;
    /// within each, definitions before declarations, then shorter names first. At most `limit`
    /// symbols (distinct USRs). A pattern with "::" matches the last component so, in symbols
    /// whose qualified name holds the whole pattern ("leveldb::Op"). An empty pattern gives the
    /// first `limit` names in the index's order.
    std::vector<NameMatch> findSymbols(std::string_view pattern, size_t limit,
                                       NameDetail detail = NameDetail::Full) const;
    /// USR hashes of the symbols named exactly `name` ("Open", "DB::Open", "leveldb::DB::Open");
    /// case-sensitive, falling back to case-insensitive when nothing matches.
    std::vector<uint64_t> resolveName(std::string_view name) const;
    /// All declarations and definitions of a symbol, sorted by path and position.
    std::vector<SymbolHit> occurrences(uint64_t usrHash) const;
    /// All references to a symbol, sorted by path and position: the uses the source spells
    /// (not the relation-only kRoleOverride ones).
    std::vector<ReferenceHit> references(uint64_t usrHash) const;
    /// The symbol's definition (a header's before a TU main file's, when several files define
    /// it), else its first declaration by path and position.
    std::optional<SymbolHit> bestOccurrence(uint64_t usrHash) const;
    /// The symbol's name, from one of its declarations (cheap: `std` has hundreds); nullopt if
    /// the store has none.
    std::optional<std::string> nameOf(uint64_t usrHash) const;
    /// The symbols related to one, sorted by their first site; each once.
    std::vector<Related> related(uint64_t usrHash, Relation relation) const;
    /// The declarations in one file, in source order; nullopt if the file is unknown.
    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) const;
    /// The references in one file, in source order; nullopt if the file is unknown.
    std::optional<std::vector<Reference>> fileReferences(const std::string& path) const;
    /// Those of fileSymbols() and fileReferences() whose location is on 1-based lines [first,
    /// last]: what is under a cursor, or in a function's body, without reading the whole file's
    /// rows.
    std::optional<std::vector<Symbol>> fileSymbolsInLines(const std::string& path, uint32_t first,
                                                          uint32_t last) const;
    std::optional<std::vector<Reference>>
    fileReferencesInLines(const std::string& path, uint32_t first, uint32_t last) const;
    StoreStats stats() const;

private:
    std::unique_ptr<View> view_; ///< mutable state (caches) behind const queries
};

/// A store: written by the indexer (publish, apply, flush), read through snapshots by anyone.
/// Reading is thread-safe; so are publish and apply.
class Store {
public:
    virtual ~Store() = default;

    // --- Writing ---------------------------------------------------------------------------------

    /// Stages `tu`'s files (visible to queries from then on) and queues it for writing.
    /// Thread-safe; may block while the write queue is full.
    virtual void publish(IndexedTu tu) = 0;
    /// Queues removals and stamp updates. Thread-safe.
    virtual void apply(StoreEdit edit) = 0;
    /// Waits until everything queued so far is written, and ends the current generation
    /// (IndexedFile::priority). Throws the first write error since the previous flush, once.
    virtual void flush() = 0;
    virtual CommitStats commitStats() const = 0;
    /// Files published and not yet written.
    virtual size_t stagedFiles() const = 0;
    virtual LockMode lockMode() const = 0;
    /// The store-wide lock of LockMode::Global, which the indexer holds while it extracts.
    virtual CountedSharedMutex& globalLock() const = 0;

    // --- Reading ---------------------------------------------------------------------------------

    /// A view for several queries that must agree.
    virtual StoreSnapshot snapshot() const = 0;

    // One question each: every call takes a snapshot of its own and asks StoreSnapshot's query
    // of the same name (documented there).
    std::optional<FileRecord> file(const std::string& path) const;
    void forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) const;
    std::optional<TuRecord> tu(const std::string& mainFile) const;
    void forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) const;
    void forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) const;
    std::vector<NameMatch> findSymbols(std::string_view pattern, size_t limit,
                                       NameDetail detail = NameDetail::Full) const;
    std::vector<uint64_t> resolveName(std::string_view name) const;
    std::vector<SymbolHit> occurrences(uint64_t usrHash) const;
    std::vector<ReferenceHit> references(uint64_t usrHash) const;
    std::vector<Related> related(uint64_t usrHash, Relation relation) const;
    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) const;
    std::optional<std::vector<Reference>> fileReferences(const std::string& path) const;
    StoreStats stats() const;
};

} // namespace symdex
