// The persistent symbol store: an LMDB environment in a directory (default `.symdex/`), written by
// one serial committer thread (`store-writer`) in batched transactions, and read through short
// read transactions (MVCC snapshots: readers never wait for the writer) merged with the staged
// overlay (store/overlay.h): a published file is visible to queries before its batch commits.
// The records' layout in LMDB: store/lmdb_layout.h.
#pragma once

#include "store/store.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace symdex {

struct StoreOptions {
    /// Directory holding data.mdb and lock.mdb; created if missing (unless readOnly).
    std::filesystem::path directory;
    /// Open for queries only: no writer thread, no writer lock, nothing created. Works without
    /// write access to the directory.
    bool readOnly = false;
    /// Start from an empty store: the old contents are discarded once the writer lock is held
    /// (`symdex index --rebuild`). Ignored when readOnly.
    bool startEmpty = false;
    /// Initial LMDB map size. The map doubles whenever a commit finds it full.
    size_t initialMapSize = size_t(256) << 20;
    /// At most this many files per write transaction (`--batch`).
    size_t batchMaxFiles = 256;
    /// A batch is committed at the latest this long after its first file arrived.
    std::chrono::milliseconds batchMaxDelay{50};
    /// publish() blocks while this many files wait for the writer (bounds memory).
    size_t queueCapacity = 4096;
    LockMode lockMode = LockMode::PerFile;
};

/// What SymbolStore::prepareSummaries() did.
struct SummaryStats {
    size_t blocks = 0;  ///< blocks of declarations summarized
    size_t rows = 0;    ///< declarations in them
    size_t copied = 0;  ///< blocks whose summaries the previous call had made
    size_t decoded = 0; ///< blocks decoded to summarize them
    size_t bytes = 0;   ///< the summaries' memory, approximately
    /// Names whose declarations are kept by the name's id (SymbolSummaries::
    /// forEachDeclarationOfName): a search answers them without reading their `names` row.
    size_t names = 0;
};

/// What SymbolStore::compact() did.
struct CompactStats {
    bool compacted = false;
    uint64_t bytesBefore = 0; ///< data.mdb before
    uint64_t bytesAfter = 0;  ///< and after
    uint64_t freePages = 0;   ///< of the file before, unused
    uint64_t filePages = 0;
    /// Blocks of declarations written before the store had its own dictionary, compressed
    /// against it in the copy (compact()).
    uint64_t recompressedBlocks = 0;
    double seconds = 0;
};

/// The persistent store (see the top of this file). Opening it checks the file; reading never
/// waits for the writer; writing goes through one committer thread.
class SymbolStore final : public Store {
public:
    /// Opens or creates the store. Throws StoreError when the directory cannot be used, another
    /// process holds the writer lock, the file is damaged (kind Damaged: store_check.h lists
    /// what is checked) or the format version differs (kind WrongVersion); for the last two the
    /// message says how to rebuild.
    static std::unique_ptr<SymbolStore> open(const StoreOptions& options);
    ~SymbolStore() override;

    // Writing is not available on a read-only store (StoreError).

    /// Encodes `tu` on the calling thread, stages its files in the overlay (visible to queries from
    /// then on), then queues it for the writer. Thread-safe; blocks only while the queue is at
    /// capacity.
    void publish(IndexedTu tu) override;
    void apply(StoreEdit edit) override;
    /// Waits until everything queued so far is committed and synced to disk, and ends the current
    /// generation (IndexedFile::priority). Throws the first commit error since the previous
    /// flush, once: the batch that failed was dropped whole (its files left the overlay, its TUs
    /// stay out of date in the store and are parsed again next run), and later commits go on.
    void flush() override;
    CommitStats commitStats() const override;
    size_t stagedFiles() const override;
    LockMode lockMode() const override;
    CountedSharedMutex& globalLock() const override;

    /// The files staged in the overlay and one LMDB read transaction, taken together.
    StoreSnapshot snapshot() const override;

    /// Reads into memory, for the latest committed snapshot, what name searches of it keep there
    /// (the vocabulary, its words by ending, and the counts of every initials token, which
    /// searches use only if loaded this way), so that no search pays for it. A daemon calls it
    /// off the request path when the store has changed (docs/names.md). Returns the LMDB
    /// transaction id of the snapshot it prepared. Thread-safe.
    uint64_t prepareNameSearch() const;

    /// Makes, for every block of declarations in the store, what a brief name search
    /// (NameDetail::Brief: workspace/symbol) answers from without decoding it
    /// (store/symbol_summaries.h): 32 bytes a declaration, kept in memory. Blocks summarized by
    /// the previous call with the same bytes are copied, not decoded again. A search uses a
    /// block's summaries only for the exact bytes they were made from. A daemon calls it off
    /// the request path, after prepareNameSearch: `goOn` (when given) is asked before each
    /// piece of `blocksAPiece` blocks, and may wait; false abandons the pass (nullopt), keeping
    /// the summaries made before. Thread-safe; one call at a time.
    std::optional<SummaryStats> prepareSummaries(const std::function<bool()>& goOn = {},
                                                 size_t blocksAPiece = 1024) const;

    /// The LMDB transaction id of the latest commit to data.mdb, by this process or another
    /// (LMDB's meta pages); 0 if they cannot be read. Never waits for readers.
    uint64_t lastCommitId() const;

    /// Maps the pages of data.mdb that the page cache holds into this process (madvise
    /// MADV_POPULATE_READ on LMDB's map), so that the requests after it do not each fault in the
    /// pages they read (5-20 us a fault on this project's machines, bench/fault_cost); pages
    /// not cached are left to PageCacheWarmer and the reads that need them. Returns the bytes
    /// mapped: 0 when the kernel cannot (before Linux 5.14) or the map is not found. Thread-safe;
    /// a daemon calls it off the request path, as prepareNameSearch.
    size_t prefaultMap() const;

    const std::filesystem::path& directory() const;

    /// Rewrites data.mdb without its free pages and with the pages of every table full — a copy
    /// loaded in key order with LMDB's append mode replaces it — when at least `minFreeShare` of
    /// the file is free pages (the pages earlier transactions left behind: LMDB reuses them but
    /// never gives them back). Waits for the writer first; requires that no snapshot of this store
    /// is alive. A process that opened the store before keeps reading the old file, whole; one
    /// that opens it after reads the new one (docs/store-format.md, "Compaction").
    CompactStats compact(double minFreeShare);

    class Impl;

private:
    explicit SymbolStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace symdex
