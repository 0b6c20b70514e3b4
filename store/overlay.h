// The staged overlay: files published to the store but not yet committed to LMDB, visible to
// queries from the moment they are published.
//
// Files are spread over a fixed table of stripes by a hash of their path (as memcached's item
// locks and ccls's per-path mutexes); each stripe has a reader-writer lock over its slots. Lock
// memory is bounded by the stripe count, not the file count. Publishing a file is a pointer swap
// under its stripe's write lock: the staged contents are built, encoded and indexed before.
// Reading a file copies its pointer under the stripe's read lock, so a reader sees the old or the
// new contents whole. Staged contents are immutable and shared with the pending write.
//
// Why stripes and not a lock word per file (seed 002; docs/design.md, "Why stripes"): a per-file
// lock needs a per-file slot that can be found without a lock, which here would be a second,
// concurrent map. With 64 stripes the critical sections are a few pointer copies, and `symdex index
// --stats` measures the stripes' contention directly (docs/measurements.md, "Locks"): too rare for
// a finer lock to pay.
#pragma once

#include "store/lock_telemetry.h"

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace symdex {

struct EncodedFile;

class Overlay {
public:
    static constexpr size_t kStripes = 64;

    /// Stages `file` as the newest contents of its path and returns its version (> 0), or returns
    /// 0 when this generation already accepted a version with a lower priority number (the store
    /// keeps that one; see IndexedFile::priority). Generation 0 always replaces.
    uint64_t stage(std::shared_ptr<const EncodedFile> file, uint64_t generation);
    struct Newest {
        std::shared_ptr<const EncodedFile> staged; ///< null once that version was committed
        uint64_t version = 0;                      ///< 0: the path was never staged
    };
    /// The newest accepted version of `path`. The writer writes that one, whatever version the
    /// publication it is committing carried: an older one must not be written, and leaving the
    /// file out would let a query see it known and empty, a state no publication produced.
    Newest newest(const std::string& path) const;
    /// The writer committed `version` of `path`: it leaves the overlay unless a newer one came.
    void committed(const std::string& path, uint64_t version) { unstage(path, version); }
    /// The writer could not commit `version` of `path` (disk full, ...): it leaves the overlay
    /// unless a newer one came, so that queries see what the store holds, not what it failed to
    /// take. The TU that published it stays out of date in the store and is parsed again.
    void failed(const std::string& path, uint64_t version) { unstage(path, version); }
    /// The file was removed from the store: drops its slot, unless a version published after the
    /// removal is staged.
    void forget(const std::string& path);
    /// Forgets the priorities of finished generations (files with nothing staged).
    void endGeneration();

    /// The staged contents of `path`, if any.
    std::shared_ptr<const EncodedFile> find(const std::string& path) const;
    /// Every staged file, each one whole.
    std::vector<std::shared_ptr<const EncodedFile>> staged() const;
    size_t stagedCount() const;

private:
    void unstage(const std::string& path, uint64_t version);

    struct Slot {
        uint64_t generation = 0;
        uint32_t priority = 0;
        uint64_t version = 0;
        std::shared_ptr<const EncodedFile> staged; ///< null once committed
    };
    struct alignas(64) Stripe {
        mutable CountedSharedMutex mu{LockClass::FileLocks};
        std::unordered_map<std::string, Slot> slots; // Requires mu
        /// Slots with staged contents; written under mu, read without it to skip empty stripes.
        std::atomic<uint32_t> stagedCount{0};
    };

    Stripe& stripeOf(const std::string& path) {
        return stripes_[std::hash<std::string>{}(path) % kStripes];
    }
    const Stripe& stripeOf(const std::string& path) const {
        return stripes_[std::hash<std::string>{}(path) % kStripes];
    }

    std::array<Stripe, kStripes> stripes_;
};

} // namespace symdex
