// Private to store/: the state behind SymbolStore, shared by the read path (symbol_store.cpp) and
// the write path (store_writer.cpp).
#pragma once

#include "store/lmdb.h"
#include "store/symbol_store.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <variant>

namespace symdex {

/// One symbol's row, encoded by the publishing thread so the writer only copies bytes.
struct EncodedSymbol {
    std::string value;
    std::string nameKey; ///< lower-cased (and length-capped) name
    uint64_t usrHash;
};

struct EncodedReference {
    std::string value;
    uint64_t usrHash;
};

struct EncodedFile {
    FileRecord record;
    uint32_t priority = 0;
    std::vector<EncodedSymbol> symbols;
    std::vector<EncodedReference> references;
};

struct PendingTu {
    std::string mainFile;
    uint64_t generation = 0;
    TuRecord record;
    std::vector<std::string> includedFiles;
    std::vector<EncodedFile> files;
};

using WriteOp = std::variant<PendingTu, StoreEdit>;

/// Key helpers shared by both paths.
std::string fileIdKey(uint32_t fileId);
std::string rowKey(uint32_t fileId, uint32_t seq);
std::string usrKey(uint64_t usrHash);
/// ASCII lower case (names are compared case-insensitively byte by byte).
std::string lowerAscii(std::string_view s);
/// The names-index key of a name: ASCII lower case, capped below LMDB's 511-byte key limit.
std::string nameKey(std::string_view name);

inline constexpr char kDeclTag = 'D';
inline constexpr char kRefTag = 'R';

class SymbolStore::Impl {
public:
    StoreOptions options;
    lmdb::Env env;
    MDB_dbi meta = 0, files = 0, paths = 0, tus = 0, symbols = 0, refs = 0, usrs = 0, names = 0;
    int writerLockFd = -1; ///< flock()ed file that keeps a second writer process out

    /// Held shared by every read transaction and exclusively while the map is resized:
    /// mdb_env_set_mapsize requires that no transaction of this process is active.
    mutable std::shared_mutex mapResizeMu;

    /// A read transaction that keeps the map from being resized under it.
    struct ReadTxn {
        std::shared_lock<std::shared_mutex> guard;
        lmdb::Txn txn;
    };
    ReadTxn beginRead() const;

    // --- Write queue (store_writer.cpp) ---
    std::mutex queueMu;
    std::condition_variable queueChanged; ///< signalled on push, pop, commit and stop
    std::deque<WriteOp> queue;            // Requires queueMu
    size_t queuedTus = 0;                 // Requires queueMu
    uint64_t opsPushed = 0;               // Requires queueMu
    uint64_t opsCommitted = 0;            // Requires queueMu
    std::exception_ptr writeError;        // Requires queueMu
    size_t flushWaiters = 0;              // Requires queueMu
    bool stopping = false;                // Requires queueMu
    CommitStats commitStats;              // Requires queueMu
    std::thread writer;

    /// Writer thread only: the priority of each file written in the current generation.
    uint64_t currentGeneration = 0;
    std::unordered_map<std::string, uint32_t> writtenPriority;

    void startWriter();
    void stopWriter();
    void push(WriteOp op);
    void flush();

private:
    void writerLoop();
    void commitBatch(std::vector<WriteOp>& batch);
    void applyBatch(lmdb::Txn& txn, std::vector<WriteOp>& batch);
};

/// Encodes a publication outside any lock.
PendingTu encodeTu(IndexedTu tu);

} // namespace symdex
