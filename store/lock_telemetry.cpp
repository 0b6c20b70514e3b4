#include "store/lock_telemetry.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace symdex {

namespace {

/// One thread's counters. Only the owning thread writes them (a relaxed load and store, no
/// read-modify-write); snapshot() reads them from other threads, hence the atomics.
struct ThreadCounters {
    std::atomic<uint64_t> values[kLockClassCount][3] = {};

    void add(LockClass c, bool contended, uint64_t waitNs) {
        auto bump = [](std::atomic<uint64_t>& v, uint64_t by) {
            v.store(v.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
        };
        auto& row = values[size_t(c)];
        bump(row[0], 1);
        if (contended) {
            bump(row[1], 1);
            bump(row[2], waitNs);
        }
    }

    void addTo(LockTelemetry& sum) const {
        for (size_t c = 0; c < kLockClassCount; ++c) {
            sum.byClass[c].acquisitions += values[c][0].load(std::memory_order_relaxed);
            sum.byClass[c].contended += values[c][1].load(std::memory_order_relaxed);
            sum.byClass[c].waitNs += values[c][2].load(std::memory_order_relaxed);
        }
    }
};

/// The live threads' counters and the totals of exited threads. Taken once per thread (at its
/// first counted acquisition and at its exit) and by snapshots: never on an acquisition.
struct Registry {
    std::mutex mu;
    std::vector<ThreadCounters*> live;
    LockTelemetry retired;
};

Registry& registry() {
    static Registry* r = new Registry; // never destroyed: threads may exit after static dtors
    return *r;
}

struct ThreadRegistration {
    ThreadCounters counters;
    ThreadRegistration() {
        Registry& r = registry();
        std::lock_guard lock(r.mu);
        r.live.push_back(&counters);
    }
    ~ThreadRegistration() {
        Registry& r = registry();
        std::lock_guard lock(r.mu);
        counters.addTo(r.retired);
        r.live.erase(std::find(r.live.begin(), r.live.end(), &counters));
    }
};

} // namespace

std::string_view lockClassName(LockClass c) {
    switch (c) {
    case LockClass::FileLocks:
        return "file locks";
    case LockClass::GlobalLock:
        return "global lock";
    case LockClass::CommitQueue:
        return "commit queue";
    case LockClass::ClaimTable:
        return "claim table";
    }
    return "?";
}

LockTelemetry LockTelemetry::operator-(const LockTelemetry& earlier) const {
    LockTelemetry d;
    for (size_t c = 0; c < kLockClassCount; ++c) {
        d.byClass[c].acquisitions = byClass[c].acquisitions - earlier.byClass[c].acquisitions;
        d.byClass[c].contended = byClass[c].contended - earlier.byClass[c].contended;
        d.byClass[c].waitNs = byClass[c].waitNs - earlier.byClass[c].waitNs;
    }
    return d;
}

LockTelemetry LockTelemetry::snapshot() {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    LockTelemetry sum = r.retired;
    for (const ThreadCounters* counters : r.live)
        counters->addTo(sum);
    return sum;
}

void LockTelemetry::record(LockClass c, bool contended, uint64_t waitNs) {
    thread_local ThreadRegistration self;
    self.counters.add(c, contended, waitNs);
}

} // namespace symdex
