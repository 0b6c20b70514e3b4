// From runs to report rows: one row per (configuration, thread count), medians with min-max over
// the repeats that succeeded, the scaling figures against the same configuration at 1 thread, and
// symdex's wall as a ratio to each peer at the same thread count.
#pragma once

#include "bench/run_record.h"
#include "bench/statistics.h"

#include <map>
#include <string>
#include <vector>

namespace symdex::bench {

struct ResultRow {
    std::string config; ///< "per-file", "global", "floor", "ccls", "clangd"
    unsigned threads = 1;
    int runs = 0;        ///< runs that succeeded (the figures are over these)
    int failedRuns = 0;  ///< runs marked failed: not in the figures
    std::string failure; ///< the first failed run's reason
    Spread wall, user, sys, peakRssMiB;
    double cpuUtilisation = 0; ///< (user + sys) / (wall x threads), of the medians
    double speedup = 0;        ///< median wall at 1 thread / median wall (0: no 1-thread row)
    double efficiency = 0;     ///< speedup / threads
    double tusPerSecond = 0;
    // symdex only (0 for peers):
    double symbolsPerSecond = 0;
    double lockAcquisitions = 0; ///< median over runs, all lock classes
    double contendedShare = 0;   ///< contended / acquisitions
    double waitShare = 0;        ///< lock wait / (parse wall x threads)
    double storeMiB = 0;
    /// Median over runs of each percentile: while indexing, and against the idle store.
    LatencyFigures nameIndexing, definitionIndexing, nameIdle, definitionIdle;
    /// symdex rows: median wall / the peer's median wall at the same thread count, by peer.
    std::map<std::string, double> wallRatioToPeer;

    bool hasFigures() const { return runs > 0; }
};

/// Rows in the order configurations and thread counts first appear in `runs`.
std::vector<ResultRow> aggregateRuns(const std::vector<RunRecord>& runs);

/// The row of `config` at `threads`, or null.
const ResultRow* findRow(const std::vector<ResultRow>& rows, const std::string& config,
                         unsigned threads);

} // namespace symdex::bench
