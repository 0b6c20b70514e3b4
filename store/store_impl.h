// Private to store/: the state behind SymbolStore, shared by the read path (symbol_store.cpp) and
// the write path (store_writer.cpp).
#pragma once

#include "store/block_cache.h"
#include "store/lmdb.h"
#include "store/lmdb_layout.h"
#include "store/lock_telemetry.h"
#include "store/name_search.h"
#include "store/overlay.h"
#include "store/ref_blocks.h"
#include "store/symbol_blocks.h"
#include "store/symbol_store.h"
#include "store/symbol_summaries.h"
#include "store/zstd_frame.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <variant>

namespace symdex {

/// One symbol's row, encoded by the publishing thread so the writer only copies bytes.
struct EncodedSymbol {
    std::string value;
    std::string nameKey; ///< lower-cased (and length-capped) name; empty for a local
    std::string name;    ///< indexedName(): the name index's entry; empty for a local
    uint64_t usrHash;
    uint32_t nameRank; ///< EntryRank::packed() (name_index.h)
};

struct EncodedReference {
    std::string value;
    uint64_t usrHash;
};

/// A file's contents as published: the rows the writer copies into LMDB, and the sorted indexes
/// queries use while the file is staged in the overlay. Immutable once built.
struct EncodedFile {
    FileRecord record;
    std::string ownerPath; ///< main file of the TU that extracted it (FileRecord::ownerFileId)
    uint32_t priority = 0;
    std::vector<EncodedSymbol> symbols;
    std::vector<EncodedReference> references;
    RefBlocks refBlocks;                   ///< the references as the writer stores them
    std::vector<std::string> symbolBlocks; ///< the symbols as the writer stores them
    std::vector<uint32_t> symbolsByName;   ///< seqs sorted by nameKey
    std::vector<std::pair<uint64_t, uint32_t>> symbolsByUsr; ///< (usrHash, seq), sorted
    std::vector<std::pair<uint64_t, uint32_t>> refsByUsr;    ///< (usrHash, seq), sorted

    /// Seqs of the symbols whose nameKey is `key`.
    std::pair<const uint32_t*, const uint32_t*> symbolsNamed(std::string_view key) const;
    /// Seqs of the symbols or references of a USR.
    static std::vector<uint32_t> withUsr(const std::vector<std::pair<uint64_t, uint32_t>>& index,
                                         uint64_t usrHash);
};

struct PendingFile {
    std::shared_ptr<const EncodedFile> file; ///< shared with the overlay
    uint64_t version = 0;                    ///< the overlay's version of this staging
};

struct PendingTu {
    std::string mainFile;
    uint64_t generation = 0;
    TuRecord record;
    std::vector<std::string> includedFiles;
    std::vector<std::string> absentPaths;
    std::vector<std::pair<std::string, std::string>> aliases;
    std::vector<PendingFile> files;
};

using WriteOp = std::variant<PendingTu, StoreEdit>;

/// `open.lock` in the store directory, flock()ed: shared while a process opens the environment,
/// exclusive while compact() swaps data.mdb and lock.mdb, so that an open maps the old pair or the
/// new one, never one of each.
class OpenLock {
public:
    OpenLock(const std::filesystem::path& dir, int operation);
    ~OpenLock();
    OpenLock(const OpenLock&) = delete;
    OpenLock& operator=(const OpenLock&) = delete;

private:
    int fd_ = -1;
};

class SymbolStore::Impl {
public:
    ~Impl();
    StoreOptions options;
    lmdb::Env env;
    MDB_dbi meta = 0, files = 0, paths = 0, tus = 0, symbols = 0, refs = 0, usrs = 0, names = 0;
    MDB_dbi refUsrs = 0;                           ///< each file's USR table (ref_blocks.h)
    MDB_dbi absent = 0, absentPaths = 0;           ///< TuRecord::absentIds: id -> path, path -> id
    MDB_dbi nameText = 0, words = 0, postings = 0; ///< the name index
    int writerLockFd = -1; ///< flock()ed file that keeps a second writer process out

    /// Every table: its name, its handle's member, its flags. Opening and compaction go by it.
    struct Table {
        const char* name;
        MDB_dbi Impl::*dbi;
        unsigned flags;
    };
    static constexpr Table kTables[] = {
        {"meta", &Impl::meta, 0},
        {"files", &Impl::files, 0},
        {"paths", &Impl::paths, 0},
        {"tus", &Impl::tus, 0},
        {"symbols", &Impl::symbols, 0},
        {"refs", &Impl::refs, 0},
        {"refUsrs", &Impl::refUsrs, 0},
        {"usrs", &Impl::usrs, 0},
        {"names", &Impl::names, 0},
        {"absent", &Impl::absent, 0},
        {"absentPaths", &Impl::absentPaths, 0},
        {"nameText", &Impl::nameText, 0},
        {"words", &Impl::words, 0},
        {"postings", &Impl::postings, 0},
    };

    /// Held shared by every read transaction and exclusively while the map is resized:
    /// mdb_env_set_mapsize requires that no transaction of this process is active.
    mutable std::shared_mutex mapResizeMu;

    /// Files published and not yet committed (per-file striped locks).
    Overlay overlay;
    /// --lock-mode global: held exclusively while a TU is extracted and published, shared by
    /// every query. Unused in per-file mode.
    mutable CountedSharedMutex globalMu{LockClass::GlobalLock};

    /// The `words` table of one committed snapshot, in key order. Name search reads it whole
    /// for every substring and word-start query, so it is kept in memory between read
    /// transactions for as long as no write commits: a snapshot with the same transaction id of
    /// the same environment holds the same table (LMDB's ids only grow; a compaction opens a new
    /// environment).
    struct Vocabulary {
        uint64_t environment = 0; ///< environmentGeneration when it was read
        uint64_t txnId = 0;
        std::string text;           ///< the words, one after another
        std::vector<uint32_t> ends; ///< where each word ends in `text`
        /// How many names hold the words before each word, and all of them (one entry more).
        std::vector<uint64_t> namesBefore;
        std::string_view word(size_t i) const {
            const uint32_t begin = i ? ends[i - 1] : 0;
            return std::string_view(text).substr(begin, ends[i] - begin);
        }
        uint32_t names(size_t i) const { return uint32_t(namesBefore[i + 1] - namesBefore[i]); }
        size_t longest = 0; ///< the longest word's length
        /// The words by how they end, for "words ending with" (substring search): buckets of
        /// positions, in key order within each, by the last letter (`last`) and by a hash of
        /// the last two (`lastTwo`, words of two letters or more; a bucket may hold other
        /// endings too). Built by the first search that asks, once, in two passes over the
        /// words: no sort, so the first search after a commit pays little for it.
        struct Tails {
            static constexpr size_t kLastTwoBuckets = 4096;
            static size_t lastTwoBucket(char a, char b) {
                return (uint8_t(a) * 131u + uint8_t(b)) % kLastTwoBuckets;
            }
            std::vector<uint32_t> lastStart, last;       ///< bucket b: last[lastStart[b]...]
            std::vector<uint32_t> lastTwoStart, lastTwo; ///< likewise
        };
        const Tails& tails() const;

        /// How many names hold each initials token (name_index.h's kInitialsToken and three
        /// letters or digits), by initialsSlot(); null until loadInitials(). Only
        /// SymbolStore::prepareNameSearch() loads them, all at once (7.4M instructions at 300k
        /// names, where a rare name's whole search is 0.75M), ahead of the searches: a search
        /// that finds none counts the initials its cuts ask about through the postings, a seek
        /// each (a quarter of a rare name's search).
        static constexpr size_t kInitialsSlots = 36 * 36 * 36;
        /// The slot of three initials; nullopt for a byte no word starts with.
        static std::optional<size_t> initialsSlot(char a, char b, char c);
        const std::vector<uint32_t>* initials() const {
            return initialsLoaded_.load(std::memory_order_acquire) ? &initials_ : nullptr;
        }
        /// Fills the counts once, through `read(counts)` (counts all zero, kInitialsSlots).
        template <typename Read> void loadInitials(Read&& read) const {
            std::call_once(initialsOnce_, [&] {
                std::vector<uint32_t> counts(kInitialsSlots, 0);
                read(counts);
                initials_ = std::move(counts);
                initialsLoaded_.store(true, std::memory_order_release);
            });
        }

    private:
        mutable std::once_flag tailsOnce_;
        mutable Tails tails_;
        mutable std::once_flag initialsOnce_;
        mutable std::vector<uint32_t> initials_; ///< written once, before initialsLoaded_
        mutable std::atomic<bool> initialsLoaded_{false};
    };
    /// The vocabulary of the snapshot `read` (a read-only transaction of `env`): the one kept if
    /// it is of the same snapshot, else read from the table and kept if no newer one is.
    std::shared_ptr<const Vocabulary> vocabularyOf(const lmdb::Txn& read) const;
    /// Declaration blocks decoded lately, for all readers (thread-safe): 2,048 blocks of 16,
    /// about 7 MiB at LevelDB's 181 bytes a row plain and 48 compressed (store-format.md).
    mutable BlockCache<SymbolBlock> symbolBlocks{2048};
    /// Reference blocks decoded lately (thread-safe): 1,024 blocks of 128 rows of 20 bytes,
    /// 2.5 MiB at most.
    mutable BlockCache<std::vector<RefRow>> refBlocks{1024};
    /// What brief name searches answer from (store/symbol_summaries.h): made by
    /// SymbolStore::prepareSummaries, one maker at a time (summariesBuildMu).
    std::shared_ptr<const SymbolSummaries> currentSummaries() const {
        std::lock_guard lock(summariesMu);
        return summaries;
    }
    mutable std::mutex summariesMu;
    mutable std::shared_ptr<const SymbolSummaries> summaries; // Requires summariesMu
    mutable std::mutex summariesBuildMu;

    // --- The store's own dictionary for blocks of declarations (format 23) ---
    /// `meta` key of the dictionary's bytes, written once, by the transaction whose samples
    /// trained it; blocks written after that commit are compressed against it.
    static constexpr std::string_view kOwnDictionaryKey = "symbolDictionary";
    /// Trained once the writer has seen this many bytes of plain blocks (2 MiB: about 800 blocks
    /// of 16, 13,000 declarations), into 64 KiB (twice the built-in one).
    static constexpr size_t kDictionaryTrainingBytes = size_t(2) << 20;
    static constexpr size_t kOwnDictionaryBytes = 64 << 10;
    /// Kept only if it compresses the held-out blocks to at most this share of the built-in one's.
    static constexpr size_t kOwnDictionaryMaxPercent = 95;
    /// The dictionary blocks are compressed with from now on: the store's own, or null (the
    /// built-in one) while it has none.
    std::shared_ptr<const ZstdDictionary> encodingDictionary() const;
    /// The store's own dictionary if its id is `id`: the one kept, else read from the snapshot
    /// `read` (another process may have trained it after this one opened the store); null if
    /// the snapshot has none of that id.
    std::shared_ptr<const ZstdDictionary> ownDictionary(uint32_t id, const lmdb::Txn& read) const;
    mutable std::mutex dictionaryMu;
    mutable std::shared_ptr<const ZstdDictionary> dictionary; // Requires dictionaryMu
    /// The writer's samples for training one (writer thread only): plain blocks of declarations
    /// this process committed while the store had no dictionary, until kTrainingBytes; cleared
    /// once a dictionary is trained or refused.
    std::vector<std::string> dictionarySamples;
    size_t dictionarySampleBytes = 0;
    bool dictionaryDecided = false; ///< the store has one, or this process refused one
    /// Trains a dictionary on dictionarySamples and the transaction's `more`, and returns it if it
    /// compresses held-out blocks clearly better than the built-in one (writer thread).
    std::shared_ptr<const ZstdDictionary> trainOwnDictionary(const std::vector<std::string>& more);

    /// Incremented by openEnvironment(): a vocabulary of an earlier environment is never used.
    std::atomic<uint64_t> environmentGeneration{0};
    mutable std::mutex vocabularyMu;
    mutable std::shared_ptr<const Vocabulary> vocabulary; // Requires vocabularyMu

    /// A read transaction that keeps the map from being resized under it.
    struct ReadTxn {
        std::shared_lock<std::shared_mutex> guard;
        lmdb::Txn txn;
    };
    ReadTxn beginRead() const;
    /// Opens `env` on options.directory, checks it (store_check.h) and opens the tables; throws
    /// StoreError (damaged, wrong version). Requires the OpenLock, shared.
    void openEnvironment();
    /// Begins a transaction, adopting a map another process grew first. Requires that the caller
    /// holds no transaction and no lock on mapResizeMu.
    lmdb::Txn beginTxn(bool readOnly) const;
    /// Grows (bytes > 0) or adopts (0) the map size while no transaction of this process is
    /// active. Requires that the caller holds no transaction and no lock on mapResizeMu.
    void resizeMap(size_t bytes) const;

    // --- Write queue (store_writer.cpp) ---
    std::mutex queueMu;
    std::condition_variable queueChanged; ///< signalled on push, pop, commit and stop
    std::deque<WriteOp> queue;            // Requires queueMu
    size_t queuedFiles = 0;               // Requires queueMu
    uint64_t opsPushed = 0;               // Requires queueMu
    uint64_t opsCommitted = 0;            // Requires queueMu
    std::exception_ptr writeError;        // Requires queueMu; the first since the last flush
    size_t flushWaiters = 0;              // Requires queueMu
    bool stopping = false;                // Requires queueMu
    CommitStats commitStats;              // Requires queueMu
    std::thread writer;

    void startWriter();
    void stopWriter();
    void push(WriteOp op);
    void flush();

private:
    void writerLoop();
    /// Writes and commits one batch; returns the staged versions it committed.
    std::vector<std::pair<std::string, uint64_t>> commitBatch(std::vector<WriteOp>& batch);
};

/// Encodes and indexes a publication outside any lock (versions are not set yet); its blocks of
/// declarations are compressed against `dictionary` (null: the built-in one).
PendingTu encodeTu(IndexedTu tu, const ZstdDictionary* dictionary);
/// Files a WriteOp carries, for batch sizes.
size_t fileCount(const WriteOp& op);

} // namespace symdex
