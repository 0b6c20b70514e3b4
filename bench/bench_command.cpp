// The `symdex-bench` program (`symdex bench` runs it) and its internal child `symdex-bench
// bench-run`: option parsing only. The benchmark itself (runs, peers, statistics, report, chart,
// synthetic trees) is the rest of bench/. A program of its own so that symdex and symdexd do not
// link Qt Gui and Svg for the chart.
#include "bench/bench_command.h"

#include "bench/bench_runner.h"
#include "bench/chart.h"
#include "bench/index_measurement.h"
#include "bench/peer.h"
#include "bench/synthetic_tree.h"
#include "cli/cli_common.h"

#include <QJsonObject>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace symdex::bench {

using namespace symdex::cli;

namespace {

bool parsePchOption(const QString& value) {
    if (value.isEmpty() || value == "auto")
        return true;
    if (value == "off")
        return false;
    throw UsageError{"--pch must be auto or off, not '" + value.toStdString() + "'"};
}

std::vector<std::string> readLines(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            lines.push_back(line);
    return lines;
}

template <typename T>
std::vector<T> parseList(const QString& value, const char* option, T (*parse)(const QString&)) {
    std::vector<T> out;
    for (const QString& item : value.split(',', Qt::SkipEmptyParts))
        out.push_back(parse(item.trimmed()));
    if (out.empty())
        throw UsageError{std::string("--") + option + " needs at least one value"};
    return out;
}

/// A number option with a default, checked against [min, max].
double numberOption(const QCommandLineParser& parser, const char* name, double fallback, double min,
                    double max) {
    if (!parser.isSet(name))
        return fallback;
    bool ok = false;
    const double value = parser.value(name).toDouble(&ok);
    if (!ok || !(value >= min && value <= max))
        throw UsageError{std::string("--") + name + " needs a number from " +
                         std::to_string(int64_t(min)) + " to " + std::to_string(int64_t(max))};
    return value;
}

std::vector<std::string> parsePeers(const QString& value) {
    std::vector<std::string> peers;
    for (const QString& item : value.split(',', Qt::SkipEmptyParts)) {
        const std::string name = item.trimmed().toStdString();
        if (name == "none")
            continue;
        const auto& known = bench::knownPeers();
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw UsageError{"--peers: unknown peer '" + name +
                             "' (known: floor, ccls, clangd, clangd-16)"};
        peers.push_back(name);
    }
    return peers;
}

void addBenchOptions(QCommandLineParser& parser) {
    addDatabaseOption(parser);
    struct Option {
        const char* name;
        const char* description;
        const char* value;
    };
    const Option options[] = {
        {"synthetic",
         "Bench a generated tree of FILES TUs and SHARED_HEADERS headers, DECLS declarations "
         "each, written under --out (instead of -p).",
         "FILES,DECLS,SHARED_HEADERS"},
        {"seed", "Seed of the --synthetic tree (default 1).", "S"},
        {"threads", "Thread counts (default 1,2).", "LIST"},
        {"lock-mode", "Lock modes: per-file, global (default per-file,global).", "LIST"},
        {"repeat", "Runs per configuration, in interleaved rounds (default 3).", "K"},
        {"out", "Directory for stores, caches, logs, results and chart (default ./symdex-bench).",
         "DIR"},
        {"query-rate", "Lookups per second during each index and after it (default 200).", "R"},
        {"index-priority",
         "low (default): parse threads under SCHED_IDLE, as in the daemon, so the query client "
         "gets the "
         "CPU first; normal: as `symdex index`.",
         "PRIORITY"},
        {"idle-queries", "Lookups against the idle store after each index (default 2000).", "N"},
        {"pch",
         "auto (default): symdex's runs parse against shared precompiled headers, as `symdex "
         "index` does; off: every TU whole.",
         "MODE"},
        {"peers",
         "Also time these on the same TUs: floor, ccls, clangd (clangd-19), clangd-16 (default "
         "none).",
         "LIST"},
        {"peer-timeout", "Seconds before a peer run is killed and marked failed (default 3600).",
         "S"},
    };
    for (const Option& o : options)
        parser.addOption(QCommandLineOption(o.name, o.description, o.value));
}

bench::BenchOptions benchOptions(const QCommandLineParser& parser) {
    bench::BenchOptions o;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    o.benchExecutable = self.string();
    o.symdexExecutable = (self.parent_path() / "symdex").string();
    if (access(o.symdexExecutable.c_str(), X_OK) != 0)
        throw UsageError{"symdex-bench needs the symdex binary beside it: no " +
                         o.symdexExecutable};
    if (parser.isSet("threads"))
        o.threadCounts = parseList<unsigned>(parser.value("threads"), "threads", parseThreadCount);
    if (parser.isSet("lock-mode"))
        o.lockModes =
            parseList<LockMode>(parser.value("lock-mode"), "lock-mode", parseLockModeOption);
    o.repeat = int(numberOption(parser, "repeat", 3, 1, 100));
    o.outDirectory = std::filesystem::absolute(
        parser.isSet("out") ? parser.value("out").toStdString() : "symdex-bench");
    o.queryRate = numberOption(parser, "query-rate", 200, 0, 100000);
    o.lowPriority = parseIndexPriorityOption(parser.value("index-priority"), true);
    o.pch = parsePchOption(parser.value("pch"));
    o.idleQueries = uint64_t(numberOption(parser, "idle-queries", 2000, 0, 10000000));
    o.peers = parsePeers(parser.value("peers"));
    o.peerTimeoutSeconds = numberOption(parser, "peer-timeout", 3600, 1, 86400 * 7);
    return o;
}

/// The compile database to bench: -p, or the --synthetic tree generated under --out.
CompileDatabase benchDatabase(const QCommandLineParser& parser, const bench::BenchOptions& o) {
    if (!parser.isSet("synthetic"))
        return loadDatabase(parser);
    if (parser.isSet("p"))
        throw UsageError{"--synthetic and -p exclude each other"};
    std::string error;
    const uint64_t seed = uint64_t(numberOption(parser, "seed", 1, 0, 1e15));
    const std::optional<bench::SyntheticSpec> spec =
        bench::parseSyntheticSpec(parser.value("synthetic").toStdString(), seed, &error);
    if (!spec)
        throw UsageError{error};
    const bench::SyntheticTree tree =
        bench::generateSyntheticTree(*spec, o.outDirectory / bench::syntheticTreeName(*spec));
    std::fprintf(stderr, "bench: generated %zu TUs and %zu headers in %s (%zu symbols expected)\n",
                 tree.tus, tree.headers, displayPath(tree.root.string()).c_str(),
                 tree.expectedSymbols);
    std::string loadError;
    std::optional<CompileDatabase> db = loadCompileDatabase(tree.database.string(), &loadError);
    if (!db)
        throw UsageError{loadError};
    return std::move(*db);
}

int runBench(const QStringList& args) {
    QCommandLineParser parser;
    addBenchOptions(parser);
    if (!parseCommandLine(parser, args,
                          "Cold-index a compilation database at several thread counts and lock "
                          "modes, beside the parse-only floor and other indexers; report time, "
                          "CPU, lock contention and query latency, with a chart."))
        return kExitOk;
    const bench::BenchOptions options = benchOptions(parser);
    const CompileDatabase db = benchDatabase(parser, options);
    bench::BenchResult result;
    try {
        result = bench::runBenchmark(options, db);
    } catch (const std::runtime_error& e) {
        throw UsageError{e.what()};
    }
    result.context.database = displayPath(std::filesystem::absolute(db.path).string());
    result.context.commandLine = args.join(' ').toStdString();
    std::printf("%s", bench::formatTables(result.rows, result.context).c_str());
    // Before Qt starts: what its platform plugin says on stderr then (such as "XDG_RUNTIME_DIR
    // not set") must land after the tables, not inside a half-flushed one.
    std::fflush(stdout);
    bench::writeReportFiles(options.outDirectory, result.runs, result.rows, result.context);
    bench::OffscreenGui gui;
    bench::ChartOptions chart;
    chart.title = QString("symdex bench: %1 TUs of %2, %3 run%4 per configuration")
                      .arg(db.commands.size())
                      .arg(QString::fromStdString(result.context.database))
                      .arg(options.repeat)
                      .arg(options.repeat == 1 ? "" : "s");
    bench::writeBenchCharts(result.rows, chart, options.outDirectory);
    const std::string out = displayPath(options.outDirectory.string());
    std::printf("\nresults: %s/results.csv, %s/runs.csv, %s/results.json\nchart: %s/chart.png, "
                "%s/chart.svg\n",
                out.c_str(), out.c_str(), out.c_str(), out.c_str(), out.c_str());
    const bool allOk = std::all_of(result.runs.begin(), result.runs.end(),
                                   [](const bench::RunRecord& r) { return r.ok; });
    return allOk ? kExitOk : kExitFailed;
}

/// `symdex-bench bench-run` (internal): one measured cold index, or with --idle the lookups against
/// the finished store; JSON on stdout for the parent.
int runBenchRun(const QStringList& args) {
    QCommandLineParser parser;
    addDatabaseOption(parser);
    addStoreOption(parser);
    parser.addOption(QCommandLineOption("threads", "Parsing threads.", "N"));
    parser.addOption(QCommandLineOption("lock-mode", "per-file or global.", "MODE"));
    parser.addOption(QCommandLineOption("names", "File of names to look up.", "FILE"));
    parser.addOption(QCommandLineOption("query-rate", "Lookups per second.", "R"));
    parser.addOption(QCommandLineOption("index-priority", "low or normal.", "PRIORITY"));
    parser.addOption(QCommandLineOption("pch", "auto or off.", "MODE"));
    parser.addOption(QCommandLineOption("idle", "Only look up, in the finished store."));
    parser.addOption(QCommandLineOption("queries", "Lookups with --idle.", "N"));
    if (!parseCommandLine(parser, args, "One measured run of symdex bench (internal)."))
        return kExitOk;
    const std::vector<std::string> names = readLines(parser.value("names").toStdString());
    const double rate = numberOption(parser, "query-rate", 200, 0, 100000);
    bench::SymdexFigures figures;
    if (parser.isSet("idle")) {
        bench::measureIdleQueries(storeDirectory(parser), names, rate,
                                  uint64_t(numberOption(parser, "queries", 2000, 0, 1e7)),
                                  &figures);
    } else {
        bench::ColdIndexOptions options;
        options.storeDirectory = storeDirectory(parser);
        options.threads = parseThreadCount(parser.value("threads"));
        options.lockMode = parseLockModeOption(parser.value("lock-mode"));
        options.names = names;
        options.queryRate = rate;
        options.lowPriority = parseIndexPriorityOption(parser.value("index-priority"), true);
        options.pch = parsePchOption(parser.value("pch"));
        figures = bench::measureColdIndex(loadDatabase(parser), options);
    }
    printJson(QJsonDocument(QJsonObject{{"figures", bench::symdexFiguresToJson(figures)},
                                        {"peak_rss_mib", bench::ownPeakRssMiB()}}));
    return kExitOk;
}

} // namespace

int runBenchProgram(int argc, char** argv) {
    const bool child = argc > 1 && std::strcmp(argv[1], "bench-run") == 0;
    QStringList args{QString(child ? "symdex-bench bench-run" : "symdex bench")};
    for (int i = child ? 2 : 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    return runGuarded(child ? "bench-run" : "bench",
                      [&] { return child ? runBenchRun(args) : runBench(args); });
}

} // namespace symdex::bench
