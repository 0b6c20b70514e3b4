// What one measured run produced: a cold index by symdex in one lock mode, or one peer (the
// parse-only floor, ccls, clangd), at one thread count, in one round. The unit everything else
// (aggregation, report, chart) is computed from.
#pragma once

#include <QJsonObject>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace symdex::bench {

/// Client-side latency percentiles of one kind of lookup, in microseconds.
struct LatencyFigures {
    uint64_t count = 0;
    double p50 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
};

/// The percentiles LatencyFigures holds, in order, with their report names.
inline constexpr std::array<const char*, 5> kPercentileNames = {"p50", "p95", "p99", "p999", "max"};
/// The value of kPercentileNames[i].
double percentile(const LatencyFigures& latency, size_t i);

/// What only a symdex run reports (from its own counters, in the child).
struct SymdexFigures {
    size_t tusParsed = 0;
    size_t tusWithErrors = 0;
    size_t tusFailed = 0; ///< failed or crashed
    size_t files = 0;     ///< in the store after the run
    size_t symbols = 0;   ///< in the store after the run
    size_t references = 0;
    double indexWallSeconds = 0; ///< Indexer::run, store committed and synced
    double parseWallSeconds = 0; ///< the part of it when every thread was parsing
    double lockAcquisitions = 0; ///< all lock classes
    double lockContended = 0;
    double lockWaitSeconds = 0;
    double storeBytes = 0;
    /// The query client thread's own CPU time, subtracted from the run's user/sys: it is the
    /// load, not the indexer.
    double probeUserSeconds = 0, probeSysSeconds = 0;
    LatencyFigures nameIndexing, definitionIndexing; ///< while the index ran
    LatencyFigures nameIdle, definitionIdle;         ///< against the finished store
};

struct RunRecord {
    /// "per-file" or "global" (symdex's lock modes), or a peer: "floor", "ccls", "clangd".
    std::string config;
    unsigned threads = 1;
    int round = 0;
    bool ok = false;
    std::string failure; ///< why the run does not count, when !ok
    /// The whole process (for the floor: all compiler jobs), from the bench's clock and wait4.
    double wallSeconds = 0, userSeconds = 0, sysSeconds = 0;
    double peakRssMiB = 0;
    size_t tusExpected = 0; ///< distinct TUs in the compile database
    size_t tusIndexed = 0;  ///< TUs the tool verifiably indexed (or parsed, for the floor)
    std::optional<SymdexFigures> symdex;
};

/// The label of a configuration in reports: "symdex per-file", "floor", ...
std::string configLabel(const std::string& config);
bool isSymdexConfig(const std::string& config);

/// JSON forms, as results.json holds them and as `symdex-bench bench-run` reports to the parent.
QJsonObject latencyToJson(const LatencyFigures& latency);
LatencyFigures latencyFromJson(const QJsonObject& json);
QJsonObject symdexFiguresToJson(const SymdexFigures& figures);
SymdexFigures symdexFiguresFromJson(const QJsonObject& json);
QJsonObject runRecordToJson(const RunRecord& run);

} // namespace symdex::bench
