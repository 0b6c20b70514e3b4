// `symdex bench` as a whole: an unmeasured reference index (it warms the page cache, gives the
// names the query client looks up and the store every run must reproduce), then rounds of cold
// runs, every configuration once per round — symdex in each lock mode and each peer, at each
// thread count — so that drift in the machine's load spreads over all of them alike.
#pragma once

#include "bench/aggregate.h"
#include "bench/report.h"
#include "indexer/compile_db.h"
#include "store/symbol_store.h"

#include <filesystem>
#include <string>
#include <vector>

namespace symdex::bench {

struct BenchOptions {
    /// The symdex binary the reference index runs (`symdex index`).
    std::string symdexExecutable;
    /// The program each measured run executes as `symdex-bench bench-run` (symdex-bench passes
    /// its own /proc/self/exe).
    std::string benchExecutable;
    /// Thread counts to measure, in order.
    std::vector<unsigned> threadCounts{1, 2};
    /// symdex's lock modes to measure.
    std::vector<LockMode> lockModes{LockMode::PerFile, LockMode::Global};
    /// Runs of each configuration (rounds).
    int repeat = 3;
    /// Stores, peer caches, logs and the report files.
    std::filesystem::path outDirectory = "symdex-bench";
    /// Lookups per second by the query client, during each index and against the idle store.
    double queryRate = 200;
    /// Index at low priority (IndexOptions::lowPriority), as the daemon does: the query client,
    /// like an editor's requests, gets the CPU first.
    bool lowPriority = true;
    /// Shared precompiled headers in symdex's runs (`--pch auto`, as `symdex index` by default).
    bool pch = true;
    /// Lookups against the idle store after each run (p999 wants at least 1000).
    uint64_t idleQueries = 2000;
    /// Names sampled from the reference store for the client to look up.
    size_t sampledNames = 500;
    /// Peers run beside symdex: "floor", "ccls", "clangd".
    std::vector<std::string> peers;
    /// A peer run that takes longer than this is killed and marked failed.
    double peerTimeoutSeconds = 3600;
    /// Progress lines on stderr.
    bool progress = true;
};

struct BenchResult {
    std::vector<RunRecord> runs; ///< in the order they ran
    std::vector<ResultRow> rows;
    ReportContext context; ///< commandLine left for the caller
};

/// Runs the benchmark on `db`. Throws std::runtime_error when it cannot start (the reference
/// index fails, a peer is not installed); a failed measured run is recorded, not thrown.
BenchResult runBenchmark(const BenchOptions& options, const CompileDatabase& db);

} // namespace symdex::bench
