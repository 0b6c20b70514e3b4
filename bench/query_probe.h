// A query client for benchmarks: issues name and definition lookups against a store at a fixed
// rate from its own thread and records client-side latency in histograms.
//
// Latency is measured from the moment a query was due, not from when the client got to send it:
// a query delayed by a slow predecessor counts its wait (no coordinated omission).
#pragma once

#include "store/latency_histogram.h"
#include "store/store.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace symdex {

struct ProbeResult {
    LatencyHistogram nameLookups;       ///< resolveName
    LatencyHistogram definitionLookups; ///< resolveName + occurrences, pick the definition
    uint64_t found = 0;                 ///< lookups that found the symbol
    /// CPU time of the client thread itself (RUSAGE_THREAD), so a report can leave the load it
    /// generated out of the process's figures.
    double userSeconds = 0, sysSeconds = 0;
};

class QueryProbe {
public:
    /// Starts the client thread: `rate` queries per second in total, alternating name and
    /// definition lookups, cycling through `names`.
    QueryProbe(const Store& store, std::vector<std::string> names, double rate);
    ~QueryProbe();
    QueryProbe(const QueryProbe&) = delete;
    QueryProbe& operator=(const QueryProbe&) = delete;

    /// Stops the client and returns what it measured.
    ProbeResult stop();
    /// Runs until `queries` lookups were made, then stops.
    ProbeResult runFor(uint64_t queries);

private:
    void loop();

    const Store& store_;
    std::vector<std::string> names_;
    double rate_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> limit_{UINT64_MAX};
    ProbeResult result_; // written by the client thread, read after join
    std::thread thread_;
};

/// Up to `count` qualified names of defined functions, classes and variables, spread evenly over
/// the store's files (deterministic: files by path, symbols in source order).
std::vector<std::string> sampleNames(const Store& store, size_t count);

} // namespace symdex
