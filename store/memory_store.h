// A store that keeps everything in memory: the same interface and the same answers as the LMDB
// store (SymbolStore) for the same publications, with nothing on disk. Tests of the code above the
// store (the daemon's handlers, the query commands, the indexer) run on it; tests/store checks
// that both stores answer alike.
//
// Writes apply at once (nothing is staged) and copy-on-write: a snapshot holds the state it was
// taken from, so readers never wait for a writer and see each publication whole. A write copies
// the maps of files and indexes (not the files' rows): fine for the trees tests use, not meant
// for a large tree.
#pragma once

#include "store/store.h"

#include <mutex>
#include <unordered_map>

namespace symdex {

class MemoryStore final : public Store {
public:
    MemoryStore();
    ~MemoryStore() override;

    void publish(IndexedTu tu) override;
    void apply(StoreEdit edit) override;
    /// Ends the current generation; writes are already applied.
    void flush() override;
    CommitStats commitStats() const override;
    size_t stagedFiles() const override { return 0; }
    LockMode lockMode() const override { return LockMode::PerFile; }
    CountedSharedMutex& globalLock() const override { return globalMu_; }

    StoreSnapshot snapshot() const override;

    struct State;

private:
    /// Replaces the state with `edit` applied to a copy of it.
    template <typename Edit> void write(Edit&& edit);

    std::mutex writeMu_;    ///< one writer at a time
    mutable std::mutex mu_; ///< guards state_ (the pointer, not the state)
    std::shared_ptr<const State> state_;
    /// IndexedFile::priority: per path, the generation and priority of the version kept.
    std::unordered_map<std::string, std::pair<uint64_t, uint32_t>> accepted_; // Requires writeMu_
    CommitStats commitStats_;                                                 // Requires mu_
    mutable CountedSharedMutex globalMu_{LockClass::GlobalLock};
};

} // namespace symdex
