// `symdex bench`: cold-index a compilation database once per (lock mode, thread count, repeat),
// each time in a child process on a fresh store, while a client thread in that process looks up
// names at a fixed rate; then the same lookups against the finished, idle store. Reports
// user/sys/wall, CPU use, speedup, lock telemetry, peak RSS and latency percentiles.
//
// Each run is a child process (`symdex bench-run`, internal): its peak RSS is its own, and a run
// cannot warm the next one's libclang state. The parent times nothing itself: the child reports
// its index wall and the rusage deltas of its own threads; wait4 gives the peak RSS.
#include "bench/query_probe.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "indexer/indexer.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace symdex::cli {

namespace {

constexpr size_t kSampledNames = 500;

QJsonObject histogramJson(const LatencyHistogram& h) {
    auto us = [](uint64_t ns) { return double(ns) / 1000.0; };
    return QJsonObject{{"count", double(h.count())},         {"p50_us", us(h.quantileNs(0.50))},
                       {"p95_us", us(h.quantileNs(0.95))},   {"p99_us", us(h.quantileNs(0.99))},
                       {"p999_us", us(h.quantileNs(0.999))}, {"max_us", us(h.maxNs())}};
}

QJsonObject probeJson(const ProbeResult& r) {
    return QJsonObject{{"name", histogramJson(r.nameLookups)},
                       {"definition", histogramJson(r.definitionLookups)},
                       {"found", double(r.found)},
                       {"seconds", r.seconds}};
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

struct Stat {
    double median = 0, min = 0, max = 0;
};

Stat statOf(std::vector<double> values) {
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {median, values.front(), values.back()};
}

/// Runs `argv` as a child process, returns its stdout; `usage` gets the child's rusage.
std::string runChild(const std::vector<std::string>& args, rusage* usage, int* status) {
    int pipeFds[2];
    if (pipe(pipeFds) != 0)
        throw UsageError{std::string("pipe: ") + std::strerror(errno)};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipeFds[1]);
    if (rc != 0) {
        close(pipeFds[0]);
        throw UsageError{"cannot run " + args[0] + ": " + std::strerror(rc)};
    }
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = read(pipeFds[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        out.append(buf, size_t(n));
    }
    close(pipeFds[0]);
    while (wait4(pid, status, 0, usage) < 0 && errno == EINTR) {
    }
    return out;
}

/// The peak resident set of this process since its exec (VmHWM), in KiB. Not wait4's ru_maxrss:
/// Linux carries the parent's high-water mark into a spawned child.
double peakRssKiB() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0)
            return std::strtod(line.c_str() + 6, nullptr);
    return 0;
}

std::filesystem::path selfExe() {
    return std::filesystem::read_symlink("/proc/self/exe");
}

} // namespace

/// `symdex bench-run` (internal): one measured cold index, reported as JSON on stdout.
int runBenchRun(const QStringList& args) {
    QCommandLineParser parser;
    addDatabaseOption(parser);
    addStoreOption(parser);
    parser.addOption(QCommandLineOption("threads", "Parsing threads.", "N"));
    parser.addOption(QCommandLineOption("lock-mode", "per-file or global.", "MODE"));
    parser.addOption(QCommandLineOption("names", "File of names to look up.", "FILE"));
    parser.addOption(QCommandLineOption("query-rate", "Lookups per second.", "R"));
    if (!parseCommandLine(parser, args, "One measured run of symdex bench (internal)."))
        return kExitOk;
    const CompileDatabase db = loadDatabase(parser);
    StoreOptions storeOptions;
    storeOptions.directory = storeDirectory(parser);
    storeOptions.lockMode = parseLockModeOption(parser.value("lock-mode"));
    std::filesystem::remove_all(storeOptions.directory);
    IndexOptions options;
    options.threads = parseThreadCount(parser.value("threads"));
    const std::vector<std::string> names = readLines(parser.value("names").toStdString());
    const double rate = parser.value("query-rate").toDouble();

    std::unique_ptr<SymbolStore> store = SymbolStore::open(storeOptions);
    Indexer indexer(*store, options);
    IndexSummary summary;
    ProbeResult during;
    {
        QueryProbe probe(*store, names, rate);
        summary = indexer.run(db);
        during = probe.stop();
    }
    // The same number of lookups against the idle store.
    const uint64_t queries =
        std::max<uint64_t>(during.nameLookups.count() + during.definitionLookups.count(), 200);
    ProbeResult idle = QueryProbe(*store, names, rate).runFor(queries);
    const StoreStats stats = store->stats();

    QJsonObject locks;
    for (size_t i = 0; i < kLockClassCount; ++i) {
        const LockCounters& c = summary.locks.byClass[i];
        locks[QString::fromUtf8(lockClassName(LockClass(i)).data())] =
            QJsonObject{{"acquisitions", double(c.acquisitions)},
                        {"contended", double(c.contended)},
                        {"wait_s", double(c.waitNs) / 1e9}};
    }
    QJsonObject out{{"tus", double(summary.tusParsed)},
                    {"failed", double(summary.tusFailed + summary.tusCrashed)},
                    {"files", double(summary.filesExtracted)},
                    {"symbols", double(summary.symbols)},
                    {"references", double(summary.references)},
                    {"wall_s", summary.wallSeconds},
                    {"user_s", summary.userSeconds},
                    {"sys_s", summary.sysSeconds},
                    {"parse_wall_s", summary.parseWallSeconds},
                    {"store_bytes", double(stats.diskBytes)},
                    {"peak_rss_kib", peakRssKiB()},
                    {"locks", locks},
                    {"latency_indexing", probeJson(during)},
                    {"latency_idle", probeJson(idle)}};
    printJson(QJsonDocument(out));
    return kExitOk;
}

int runBench(const QStringList& args) {
    QCommandLineParser parser;
    addDatabaseOption(parser);
    parser.addOption(QCommandLineOption("threads", "Thread counts (default 1,2).", "LIST"));
    parser.addOption(QCommandLineOption(
        "lock-mode", "Lock modes: per-file, global (default per-file,global).", "LIST"));
    parser.addOption(QCommandLineOption("repeat", "Runs per configuration (default 3).", "K"));
    parser.addOption(QCommandLineOption(
        "out", "Directory for stores, results.csv and results.json (default ./symdex-bench).",
        "DIR"));
    parser.addOption(QCommandLineOption(
        "query-rate", "Lookups per second during and after each index (default 200).", "R"));
    if (!parseCommandLine(parser, args,
                          "Cold-index a compilation database at several thread counts and lock "
                          "modes; report time, CPU, lock contention and query latency."))
        return kExitOk;
    const CompileDatabase db = loadDatabase(parser);
    const std::vector<unsigned> threadCounts =
        parseList<unsigned>(parser.value("threads").isEmpty() ? "1,2" : parser.value("threads"),
                            "threads", parseThreadCount);
    const std::vector<LockMode> modes = parseList<LockMode>(
        parser.value("lock-mode").isEmpty() ? "per-file,global" : parser.value("lock-mode"),
        "lock-mode", parseLockModeOption);
    int repeat = parser.value("repeat").isEmpty() ? 3 : parser.value("repeat").toInt();
    if (repeat < 1 || repeat > 100)
        throw UsageError{"--repeat needs a number from 1 to 100"};
    const double rate =
        parser.value("query-rate").isEmpty() ? 200 : parser.value("query-rate").toDouble();
    if (!(rate >= 0 && rate <= 100000))
        throw UsageError{"--query-rate needs a number from 0 to 100000"};
    const std::filesystem::path out = std::filesystem::absolute(
        parser.value("out").isEmpty() ? "symdex-bench" : parser.value("out").toStdString());
    std::filesystem::create_directories(out);
    const std::string dbPath = std::filesystem::absolute(db.path).string();

    // A reference index, unmeasured, in a child like the runs: it warms the page cache, and gives
    // the names to look up.
    std::fprintf(stderr, "bench: reference index of %zu TUs...\n", db.commands.size());
    {
        const std::filesystem::path storeDir = out / "reference-store";
        std::filesystem::remove_all(storeDir);
        rusage usage{};
        int status = 0;
        runChild({selfExe().string(), "index", "-q", "-p", dbPath, "--store", storeDir.string()},
                 &usage, &status);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw UsageError{"the reference index failed: run `symdex index -p " + dbPath +
                             "` to see why"};
        StoreOptions storeOptions;
        storeOptions.directory = storeDir;
        storeOptions.readOnly = true;
        std::unique_ptr<SymbolStore> store = SymbolStore::open(storeOptions);
        std::ofstream names(out / "names.txt");
        for (const std::string& name : sampleNames(*store, kSampledNames))
            names << name << "\n";
    }

    struct Run {
        LockMode mode;
        unsigned threads;
        QJsonObject report;
        rusage usage;
    };
    std::vector<Run> runs;
    // Interleaved: every configuration once per round, so drift in machine load spreads evenly.
    for (int round = 0; round < repeat; ++round) {
        for (LockMode mode : modes) {
            for (unsigned threads : threadCounts) {
                std::fprintf(stderr, "bench: round %d/%d, %s, %u thread%s\n", round + 1, repeat,
                             std::string(lockModeName(mode)).c_str(), threads,
                             threads == 1 ? "" : "s");
                std::vector<std::string> argv{selfExe().string(),
                                              "bench-run",
                                              "-p",
                                              dbPath,
                                              "--store",
                                              (out / "run-store").string(),
                                              "--threads",
                                              std::to_string(threads),
                                              "--lock-mode",
                                              std::string(lockModeName(mode)),
                                              "--names",
                                              (out / "names.txt").string(),
                                              "--query-rate",
                                              std::to_string(rate)};
                rusage usage{};
                int status = 0;
                const std::string json = runChild(argv, &usage, &status);
                QJsonParseError error;
                QJsonDocument doc =
                    QJsonDocument::fromJson(QByteArray::fromStdString(json), &error);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !doc.isObject())
                    throw UsageError{
                        "a bench run failed (" + std::string(lockModeName(mode)) + ", " +
                        std::to_string(threads) + " threads): " +
                        (doc.isObject() ? "exit status" : error.errorString().toStdString())};
                runs.push_back({mode, threads, doc.object(), usage});
            }
        }
    }
    std::filesystem::remove_all(out / "run-store");

    // Aggregate per configuration.
    struct Row {
        LockMode mode = LockMode::PerFile;
        unsigned threads = 1;
        Stat wall, user, sys, rssMiB;
        double cpu = 0, speedup = 0, efficiency = 0, tusPerS = 0, symbolsPerS = 0;
        double acquisitions = 0, contendedShare = 0, waitShare = 0, storeMiB = 0;
        Stat latency[2][4]; // [indexing, idle][p50, p99, p999, max] of name lookups
        Stat defLatency[2][4];
    };
    std::vector<Row> rows;
    const char* quantiles[4] = {"p50_us", "p99_us", "p999_us", "max_us"};
    for (LockMode mode : modes) {
        for (unsigned threads : threadCounts) {
            Row row;
            row.mode = mode;
            row.threads = threads;
            std::vector<double> wall, user, sys, rss, acq, contended, waitShare, tus, symbols,
                store;
            std::vector<double> lat[2][4], defLat[2][4];
            for (const Run& run : runs) {
                if (run.mode != mode || run.threads != threads)
                    continue;
                const QJsonObject& r = run.report;
                wall.push_back(r["wall_s"].toDouble());
                user.push_back(r["user_s"].toDouble());
                sys.push_back(r["sys_s"].toDouble());
                rss.push_back(r["peak_rss_kib"].toDouble() / 1024.0);
                tus.push_back(r["tus"].toDouble());
                symbols.push_back(r["symbols"].toDouble());
                store.push_back(r["store_bytes"].toDouble() / (1 << 20));
                double a = 0, c = 0, w = 0;
                for (const QJsonValue& v : r["locks"].toObject()) {
                    a += v.toObject()["acquisitions"].toDouble();
                    c += v.toObject()["contended"].toDouble();
                    w += v.toObject()["wait_s"].toDouble();
                }
                acq.push_back(a);
                contended.push_back(a > 0 ? c / a : 0);
                const double threadTime = r["parse_wall_s"].toDouble() * threads;
                waitShare.push_back(threadTime > 0 ? w / threadTime : 0);
                const char* phases[2] = {"latency_indexing", "latency_idle"};
                for (int p = 0; p < 2; ++p)
                    for (int q = 0; q < 4; ++q) {
                        lat[p][q].push_back(
                            r[phases[p]].toObject()["name"].toObject()[quantiles[q]].toDouble());
                        defLat[p][q].push_back(r[phases[p]]
                                                   .toObject()["definition"]
                                                   .toObject()[quantiles[q]]
                                                   .toDouble());
                    }
            }
            row.wall = statOf(wall);
            row.user = statOf(user);
            row.sys = statOf(sys);
            row.rssMiB = statOf(rss);
            row.cpu = row.wall.median > 0
                          ? (row.user.median + row.sys.median) / (row.wall.median * threads)
                          : 0;
            row.tusPerS = row.wall.median > 0 ? statOf(tus).median / row.wall.median : 0;
            row.symbolsPerS = row.wall.median > 0 ? statOf(symbols).median / row.wall.median : 0;
            row.acquisitions = statOf(acq).median;
            row.contendedShare = statOf(contended).median;
            row.waitShare = statOf(waitShare).median;
            row.storeMiB = statOf(store).median;
            for (int p = 0; p < 2; ++p)
                for (int q = 0; q < 4; ++q) {
                    row.latency[p][q] = statOf(lat[p][q]);
                    row.defLatency[p][q] = statOf(defLat[p][q]);
                }
            rows.push_back(row);
        }
    }
    for (Row& row : rows) {
        for (const Row& base : rows)
            if (base.mode == row.mode && base.threads == 1 && row.wall.median > 0) {
                row.speedup = base.wall.median / row.wall.median;
                row.efficiency = row.speedup / row.threads;
            }
    }

    std::printf("symdex bench: %zu TUs from %s, %d run%s per configuration (median [min-max])\n",
                db.commands.size(), displayPath(dbPath).c_str(), repeat, repeat == 1 ? "" : "s");
    std::printf("%-9s %3s %22s %22s %18s %5s %7s %5s %7s %10s %9s %8s %8s %7s\n", "mode", "thr",
                "wall s", "user s", "sys s", "cpu", "speedup", "eff", "TUs/s", "symbols/s",
                "lock acq", "contend", "wait/thr", "RSS MiB");
    auto range = [](const Stat& s) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f [%.2f-%.2f]", s.median, s.min, s.max);
        return std::string(buf);
    };
    for (const Row& r : rows)
        std::printf("%-9s %3u %22s %22s %18s %4.0f%% %7.2f %4.0f%% %7.1f %10.0f %9.0f %7.3f%% "
                    "%7.3f%% %7.0f\n",
                    std::string(lockModeName(r.mode)).c_str(), r.threads, range(r.wall).c_str(),
                    range(r.user).c_str(), range(r.sys).c_str(), 100 * r.cpu, r.speedup,
                    100 * r.efficiency, r.tusPerS, r.symbolsPerS, r.acquisitions,
                    100 * r.contendedShare, 100 * r.waitShare, r.rssMiB.median);
    std::printf("\nname lookups at %.0f/s, client-side latency in microseconds (median of runs)\n",
                rate);
    std::printf("%-9s %3s | %9s %9s %9s %9s | %9s %9s %9s %9s | %s\n", "mode", "thr", "idx p50",
                "idx p99", "idx p999", "idx max", "idle p50", "idle p99", "idle p999", "idle max",
                "p99 idx/idle");
    for (const Row& r : rows)
        std::printf("%-9s %3u | %9.1f %9.1f %9.1f %9.1f | %9.1f %9.1f %9.1f %9.1f | %.2f\n",
                    std::string(lockModeName(r.mode)).c_str(), r.threads, r.latency[0][0].median,
                    r.latency[0][1].median, r.latency[0][2].median, r.latency[0][3].median,
                    r.latency[1][0].median, r.latency[1][1].median, r.latency[1][2].median,
                    r.latency[1][3].median,
                    r.latency[1][1].median > 0 ? r.latency[0][1].median / r.latency[1][1].median
                                               : 0);

    // Machine-readable results: every run, and the aggregated rows.
    QJsonArray runArray;
    for (const Run& run : runs) {
        QJsonObject o = run.report;
        o["lock_mode"] = QString::fromUtf8(lockModeName(run.mode).data());
        o["threads"] = double(run.threads);
        runArray.append(o);
    }
    std::ofstream(out / "results.json")
        << QJsonDocument(QJsonObject{{"database", QString::fromStdString(dbPath)},
                                     {"tus", double(db.commands.size())},
                                     {"query_rate", rate},
                                     {"runs", runArray}})
               .toJson(QJsonDocument::Indented)
               .toStdString();
    std::ofstream csv(out / "results.csv");
    csv << "lock_mode,threads,wall_s,wall_min,wall_max,user_s,sys_s,cpu,speedup,efficiency,"
           "tus_per_s,symbols_per_s,lock_acquisitions,contended_share,wait_share_thread_time,"
           "max_rss_mib,store_mib,name_p50_us_indexing,name_p99_us_indexing,"
           "name_p999_us_indexing,name_max_us_indexing,name_p50_us_idle,name_p99_us_idle,"
           "name_p999_us_idle,name_max_us_idle,def_p99_us_indexing,def_p99_us_idle\n";
    for (const Row& r : rows) {
        csv << lockModeName(r.mode) << "," << r.threads << "," << r.wall.median << "," << r.wall.min
            << "," << r.wall.max << "," << r.user.median << "," << r.sys.median << "," << r.cpu
            << "," << r.speedup << "," << r.efficiency << "," << r.tusPerS << "," << r.symbolsPerS
            << "," << r.acquisitions << "," << r.contendedShare << "," << r.waitShare << ","
            << r.rssMiB.median << "," << r.storeMiB;
        for (int p = 0; p < 2; ++p)
            for (int q = 0; q < 4; ++q)
                csv << "," << r.latency[p][q].median;
        csv << "," << r.defLatency[0][1].median << "," << r.defLatency[1][1].median << "\n";
    }
    std::printf("\nresults: %s, %s\n", displayPath((out / "results.csv").string()).c_str(),
                displayPath((out / "results.json").string()).c_str());
    return kExitOk;
}

} // namespace symdex::cli
