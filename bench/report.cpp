#include "bench/report.h"

#include "bench/peer.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace symdex::bench {

namespace {

/// A figure of a row; NaN where it does not apply (an empty CSV field, absent from JSON).
using RowFigure = std::function<double(const ResultRow&)>;

struct Column {
    std::string name;
    RowFigure value;
};

/// The figures of results.csv and results.json, in order.
std::vector<Column> rowColumns() {
    std::vector<Column> columns;
    auto add = [&](std::string name, RowFigure f) { columns.push_back({std::move(name), f}); };
    for (const auto& [name, field] :
         {std::pair("wall", &ResultRow::wall), std::pair("user", &ResultRow::user),
          std::pair("sys", &ResultRow::sys)}) {
        add(std::string(name) + "_s", [f = field](const ResultRow& r) { return (r.*f).median; });
        add(std::string(name) + "_min_s", [f = field](const ResultRow& r) { return (r.*f).min; });
        add(std::string(name) + "_max_s", [f = field](const ResultRow& r) { return (r.*f).max; });
    }
    add("cpu_utilisation", [](const ResultRow& r) { return r.cpuUtilisation; });
    add("speedup", [](const ResultRow& r) { return r.speedup; });
    add("efficiency", [](const ResultRow& r) { return r.efficiency; });
    add("tus_per_s", [](const ResultRow& r) { return r.tusPerSecond; });
    add("peak_rss_mib", [](const ResultRow& r) { return r.peakRssMiB.median; });
    // symdex's own figures: NaN for peers, which have none.
    auto symdex = [&](std::string name, RowFigure f) {
        add(std::move(name),
            [f](const ResultRow& r) { return isSymdexConfig(r.config) ? f(r) : std::nan(""); });
    };
    symdex("symbols_per_s", [](const ResultRow& r) { return r.symbolsPerSecond; });
    symdex("lock_acquisitions", [](const ResultRow& r) { return r.lockAcquisitions; });
    symdex("lock_contended_share", [](const ResultRow& r) { return r.contendedShare; });
    symdex("lock_wait_share", [](const ResultRow& r) { return r.waitShare; });
    symdex("store_mib", [](const ResultRow& r) { return r.storeMiB; });
    for (const auto& [name, field] :
         {std::pair("name_indexing", &ResultRow::nameIndexing),
          std::pair("name_idle", &ResultRow::nameIdle),
          std::pair("definition_indexing", &ResultRow::definitionIndexing),
          std::pair("definition_idle", &ResultRow::definitionIdle)})
        for (size_t i = 0; i < kPercentileNames.size(); ++i)
            symdex(std::string(name) + "_" + kPercentileNames[i] + "_us",
                   [f = field, i](const ResultRow& r) { return percentile(r.*f, i); });
    for (const std::string& peer : knownPeers())
        add("wall_ratio_to_" + peer, [peer](const ResultRow& r) {
            auto it = r.wallRatioToPeer.find(peer);
            return it == r.wallRatioToPeer.end() ? std::nan("") : it->second;
        });
    return columns;
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string csvNumber(double value) {
    if (std::isnan(value))
        return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    return buf;
}

void writeFile(const std::filesystem::path& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << contents;
    if (!out.flush())
        throw std::runtime_error("cannot write " + path.string());
}

} // namespace

std::string formatResultsCsv(const std::vector<ResultRow>& rows) {
    const std::vector<Column> columns = rowColumns();
    std::ostringstream out;
    out << "config,threads,runs,failed_runs";
    for (const Column& c : columns)
        out << "," << c.name;
    out << ",failure\n";
    for (const ResultRow& row : rows) {
        out << row.config << "," << row.threads << "," << row.runs << "," << row.failedRuns;
        for (const Column& c : columns)
            out << "," << (row.hasFigures() ? csvNumber(c.value(row)) : std::string());
        out << "," << csvField(row.failure) << "\n";
    }
    return out.str();
}

std::string formatRunsCsv(const std::vector<RunRecord>& runs) {
    std::ostringstream out;
    out << "config,threads,round,ok,wall_s,user_s,sys_s,peak_rss_mib,tus_expected,tus_indexed,"
           "failure\n";
    for (const RunRecord& r : runs)
        out << r.config << "," << r.threads << "," << r.round << "," << (r.ok ? 1 : 0) << ","
            << csvNumber(r.wallSeconds) << "," << csvNumber(r.userSeconds) << ","
            << csvNumber(r.sysSeconds) << "," << csvNumber(r.peakRssMiB) << "," << r.tusExpected
            << "," << r.tusIndexed << "," << csvField(r.failure) << "\n";
    return out.str();
}

QJsonObject resultsJson(const std::vector<RunRecord>& runs, const std::vector<ResultRow>& rows,
                        const ReportContext& context) {
    QJsonArray runArray, rowArray, peers;
    for (const RunRecord& run : runs)
        runArray.append(runRecordToJson(run));
    const std::vector<Column> columns = rowColumns();
    for (const ResultRow& row : rows) {
        QJsonObject o{{"config", QString::fromStdString(row.config)},
                      {"threads", double(row.threads)},
                      {"runs", row.runs},
                      {"failed_runs", row.failedRuns}};
        if (!row.failure.empty())
            o["failure"] = QString::fromStdString(row.failure);
        for (const Column& c : columns)
            if (row.hasFigures() && !std::isnan(c.value(row)))
                o[QString::fromStdString(c.name)] = c.value(row);
        rowArray.append(o);
    }
    for (const std::string& p : context.peers)
        peers.append(QString::fromStdString(p));
    return QJsonObject{{"database", QString::fromStdString(context.database)},
                       {"tus", double(context.tus)},
                       {"repeat", context.repeat},
                       {"query_rate", context.queryRate},
                       {"index_priority", context.lowPriority ? "low" : "normal"},
                       {"idle_queries", double(context.idleQueries)},
                       {"command", QString::fromStdString(context.commandLine)},
                       {"peers", peers},
                       {"runs", runArray},
                       {"rows", rowArray}};
}

void writeReportFiles(const std::filesystem::path& dir, const std::vector<RunRecord>& runs,
                      const std::vector<ResultRow>& rows, const ReportContext& context) {
    writeFile(dir / "results.csv", formatResultsCsv(rows));
    writeFile(dir / "runs.csv", formatRunsCsv(runs));
    writeFile(dir / "results.json", QJsonDocument(resultsJson(runs, rows, context))
                                        .toJson(QJsonDocument::Indented)
                                        .toStdString());
}

} // namespace symdex::bench
