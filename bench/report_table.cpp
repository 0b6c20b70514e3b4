// formatTables (report.h): the human-readable tables on stdout.
#include "bench/report.h"

#include <cstdio>
#include <sstream>

namespace symdex::bench {

namespace {

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string spread(const Spread& s) {
    return fixed(s.median, 2) + " [" + fixed(s.min, 2) + "-" + fixed(s.max, 2) + "]";
}

std::string percent(double share, int decimals = 0) {
    return fixed(100 * share, decimals) + "%";
}

/// A table: the first column left-aligned, the rest right-aligned. A note row (a failed
/// configuration) has its label cells aligned and its text after them, outside the columns.
class Table {
public:
    explicit Table(std::vector<std::string> header) { rows_.push_back({std::move(header), {}}); }
    void add(std::vector<std::string> row) { rows_.push_back({std::move(row), {}}); }
    void addNote(std::vector<std::string> label, std::string note) {
        rows_.push_back({std::move(label), std::move(note)});
    }

    std::string str() const {
        std::vector<size_t> widths;
        for (const Row& row : rows_) {
            widths.resize(std::max(widths.size(), row.cells.size()));
            for (size_t i = 0; i < row.cells.size(); ++i)
                widths[i] = std::max(widths[i], row.cells[i].size());
        }
        std::string out;
        for (const Row& row : rows_) {
            std::string line;
            for (size_t i = 0; i < row.cells.size(); ++i) {
                const std::string fill(widths[i] - row.cells[i].size(), ' ');
                line += (i ? "  " : "") + (i == 0 ? row.cells[i] + fill : fill + row.cells[i]);
            }
            if (!row.note.empty())
                line += "  " + row.note;
            out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
        }
        return out;
    }

private:
    struct Row {
        std::vector<std::string> cells;
        std::string note;
    };
    std::vector<Row> rows_;
};

std::vector<std::string> label(const ResultRow& row) {
    return {configLabel(row.config), std::to_string(row.threads)};
}

std::string failureNote(const ResultRow& row) {
    return "FAILED " + std::to_string(row.failedRuns) + " of " +
           std::to_string(row.failedRuns + row.runs) + " runs: " + row.failure;
}

std::string timeTable(const std::vector<ResultRow>& rows, const std::vector<std::string>& peers) {
    std::vector<std::string> header{"config", "thr",       "wall s",  "user s",
                                    "sys s",  "cpu",       "speedup", "eff",
                                    "TUs/s",  "symbols/s", "RSS MiB", "store MiB"};
    for (const std::string& p : peers)
        header.push_back("/" + p);
    Table table(header);
    std::string notes;
    for (const ResultRow& row : rows) {
        std::vector<std::string> cells = label(row);
        if (!row.hasFigures()) {
            table.addNote(cells, failureNote(row));
            continue;
        }
        const bool symdex = isSymdexConfig(row.config);
        for (const std::string& c :
             {spread(row.wall), spread(row.user), spread(row.sys), percent(row.cpuUtilisation),
              row.speedup > 0 ? fixed(row.speedup, 2) : "-",
              row.speedup > 0 ? percent(row.efficiency) : "-", fixed(row.tusPerSecond, 1),
              symdex ? fixed(row.symbolsPerSecond, 0) : "-", fixed(row.peakRssMiB.median, 0),
              symdex ? fixed(row.storeMiB, 1) : "-"})
            cells.push_back(c);
        for (const std::string& p : peers) {
            auto it = row.wallRatioToPeer.find(p);
            cells.push_back(it == row.wallRatioToPeer.end() ? "-" : fixed(it->second, 2) + "x");
        }
        table.add(cells);
        if (row.failedRuns > 0)
            notes += "  " + configLabel(row.config) + " at " + std::to_string(row.threads) +
                     " threads: " + failureNote(row) + "\n";
    }
    return table.str() + notes;
}

std::string lockTable(const std::vector<ResultRow>& rows) {
    Table table({"config", "thr", "lock acquisitions", "contended", "wait / thread-time"});
    for (const ResultRow& row : rows) {
        if (!isSymdexConfig(row.config) || !row.hasFigures())
            continue;
        std::vector<std::string> cells = label(row);
        cells.push_back(fixed(row.lockAcquisitions, 0));
        cells.push_back(percent(row.contendedShare, 3));
        cells.push_back(percent(row.waitShare, 3));
        table.add(cells);
    }
    return table.str();
}

std::string latencyTable(const std::vector<ResultRow>& rows, LatencyFigures ResultRow::*indexing,
                         LatencyFigures ResultRow::*idle) {
    std::vector<std::string> header{"config", "thr"};
    for (const char* phase : {"indexing ", "idle "})
        for (const char* p : kPercentileNames)
            header.push_back(phase + std::string(p));
    header.push_back("p99 indexing/idle");
    Table table(header);
    for (const ResultRow& row : rows) {
        if (!isSymdexConfig(row.config) || !row.hasFigures())
            continue;
        std::vector<std::string> cells = label(row);
        for (const LatencyFigures* l : {&(row.*indexing), &(row.*idle)})
            for (size_t i = 0; i < kPercentileNames.size(); ++i)
                cells.push_back(fixed(percentile(*l, i), 1));
        const double idleP99 = (row.*idle).p99;
        cells.push_back(idleP99 > 0 ? fixed((row.*indexing).p99 / idleP99, 2) + "x" : "-");
        table.add(cells);
    }
    return table.str();
}

} // namespace

std::string formatTables(const std::vector<ResultRow>& rows, const ReportContext& context) {
    std::ostringstream out;
    out << "symdex bench: " << context.tus << " TUs from " << context.database << ", "
        << context.repeat << (context.repeat == 1 ? " run" : " runs")
        << " per configuration, rounds interleaved\n"
        << "wall/user/sys: seconds over every thread of the process, median [min-max]; cpu = "
           "(user+sys)/(wall x threads); speedup and eff against 1 thread; /peer = symdex wall "
           "/ peer wall\n\n";
    out << timeTable(rows, context.peers) << "\n";
    out << "lock telemetry (all lock classes; wait as a share of threads x parse wall)\n"
        << lockTable(rows) << "\n";
    out << "name lookups at " << fixed(context.queryRate, 0)
        << "/s in total with definition lookups, client-side latency in microseconds (median of "
           "runs; idle: "
        << context.idleQueries << " lookups after the index; indexing at "
        << (context.lowPriority ? "low" : "normal") << " priority)\n"
        << latencyTable(rows, &ResultRow::nameIndexing, &ResultRow::nameIdle) << "\n";
    out << "definition lookups, microseconds\n"
        << latencyTable(rows, &ResultRow::definitionIndexing, &ResultRow::definitionIdle);
    return out.str();
}

} // namespace symdex::bench
