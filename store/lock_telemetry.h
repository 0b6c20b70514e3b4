// Lock telemetry: how often each class of lock is taken, how often a thread found it held, and
// how long threads waited for it.
//
// Counting must not create the contention it measures (docs/design.md, rule 5): every thread counts
// into its own counters, which only that thread writes; a snapshot sums them on demand. An
// uncontended acquisition costs a try_lock and two thread-local increments; the clock is read only
// when the lock was found held.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string_view>

namespace symdex {

enum class LockClass : uint8_t {
    FileLocks,   ///< the striped per-file locks of the staged overlay
    GlobalLock,  ///< the store-wide lock of --lock-mode global
    CommitQueue, ///< the queue between publishers and the store-writer (incl. back-pressure)
    ClaimTable,  ///< the striped header-claim table of an indexing run
};
inline constexpr size_t kLockClassCount = 4;

std::string_view lockClassName(LockClass c);

struct LockCounters {
    uint64_t acquisitions = 0;
    uint64_t contended = 0; ///< acquisitions that found the lock held and had to wait
    uint64_t waitNs = 0;    ///< total time spent waiting in contended acquisitions

    double contendedShare() const { return acquisitions ? double(contended) / acquisitions : 0; }
};

/// The counters of every thread of the process, summed: a snapshot. Subtract two snapshots to get
/// the figures of what ran between them.
struct LockTelemetry {
    std::array<LockCounters, kLockClassCount> byClass{};

    const LockCounters& operator[](LockClass c) const { return byClass[size_t(c)]; }
    LockTelemetry operator-(const LockTelemetry& earlier) const;

    /// Sums the counters of live threads and of threads that have exited.
    static LockTelemetry snapshot();
    /// Records one acquisition on the calling thread's counters.
    static void record(LockClass c, bool contended, uint64_t waitNs);
};

/// Waits for `lock` (any Lockable: try_lock/lock, or the shared variants through `shared`),
/// recording the acquisition.
template <typename TryLock, typename Lock>
void acquireCounted(LockClass c, TryLock&& tryLock, Lock&& lock) {
    if (tryLock()) {
        LockTelemetry::record(c, false, 0);
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    lock();
    const auto waited = std::chrono::steady_clock::now() - start;
    LockTelemetry::record(
        c, true, uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count()));
}

/// A reader-writer lock that counts its acquisitions under one LockClass. Meets the standard
/// SharedMutex requirements, so std::unique_lock / std::shared_lock work with it.
class CountedSharedMutex {
public:
    explicit CountedSharedMutex(LockClass c = LockClass::FileLocks) : class_(c) {}
    void setClass(LockClass c) { class_ = c; }

    void lock() {
        acquireCounted(
            class_, [&] { return mu_.try_lock(); }, [&] { mu_.lock(); });
    }
    bool try_lock() { return mu_.try_lock(); }
    void unlock() { mu_.unlock(); }
    void lock_shared() {
        acquireCounted(
            class_, [&] { return mu_.try_lock_shared(); }, [&] { mu_.lock_shared(); });
    }
    bool try_lock_shared() { return mu_.try_lock_shared(); }
    void unlock_shared() { mu_.unlock_shared(); }

private:
    std::shared_mutex mu_;
    LockClass class_;
};

/// Locks a std::unique_lock (deferred or unlocked) on a plain mutex, counting it.
inline void lockCounted(std::unique_lock<std::mutex>& lock, LockClass c) {
    acquireCounted(
        c, [&] { return lock.try_lock(); }, [&] { lock.lock(); });
}

} // namespace symdex
