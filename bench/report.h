// The report of a bench run: the human tables for stdout (real/user/sys per thread count, as in
// the duchainify timings of seed 004 in docs/design.md, plus the derived columns, lock telemetry
// and latency), and the machine-readable results.csv, runs.csv and results.json.
#pragma once

#include "bench/aggregate.h"

#include <QJsonObject>

#include <filesystem>
#include <string>
#include <vector>

namespace symdex::bench {

/// What the report says about the run as a whole.
struct ReportContext {
    std::string database; ///< the compile_commands.json, as shown
    size_t tus = 0;
    int repeat = 1;
    double queryRate = 0;
    bool lowPriority = false; ///< the index ran at low priority (IndexOptions::lowPriority)
    uint64_t idleQueries = 0;
    std::string commandLine; ///< how the bench was invoked
    std::vector<std::string> peers;
};

/// The tables, ready to print.
std::string formatTables(const std::vector<ResultRow>& rows, const ReportContext& context);

/// One CSV line per row, with a header; every figure in the rows.
std::string formatResultsCsv(const std::vector<ResultRow>& rows);
/// One CSV line per run, with a header.
std::string formatRunsCsv(const std::vector<RunRecord>& runs);
/// The context, every run and every row.
QJsonObject resultsJson(const std::vector<RunRecord>& runs, const std::vector<ResultRow>& rows,
                        const ReportContext& context);

/// Writes results.csv, runs.csv and results.json into `dir`. Throws std::runtime_error when a
/// file cannot be written.
void writeReportFiles(const std::filesystem::path& dir, const std::vector<RunRecord>& runs,
                      const std::vector<ResultRow>& rows, const ReportContext& context);

} // namespace symdex::bench
