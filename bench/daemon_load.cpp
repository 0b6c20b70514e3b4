// daemon_load: many LSP clients against a symdexd that is re-indexing a real tree, then idle.
// Prints client-side latency percentiles of textDocument/definition (and of all queries) for
// both phases. A benchmark program: it prints figures, asserts only that no query failed.
//
//   daemon_load --symdexd build/cli/symdexd --root bench/corpora/leveldb/src
//               -p bench/corpora/leveldb/build [--clients 64] [--queries 1000] [--threads 2]
//
// The daemon gets a fresh store in a temporary directory and indexes the tree cold first. Phase
// 1 asks it to re-index every TU (symdex/index force) and keeps asking whenever a run ends, so
// the whole phase runs during indexing, with a full store answering. Phase 2 runs the same load
// on the idle daemon. Each client is closed-loop: it sends its next query when the previous
// answer arrived; latency is from send to answer.
#include "indexer/compile_db.h"
#include "protocol/client.h"
#include "store/latency_histogram.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace symdex;
using protocol::RpcClient;
using Clock = std::chrono::steady_clock;

namespace {

struct Target {
    QString uri;
    int line = 0;      ///< 0-based
    int character = 0; ///< 0-based (ASCII sources: bytes = UTF-16 units)
    QString word;
};

/// Identifier positions in the main files, every `stride`-th one, skipping comment lines.
std::vector<Target> sampleTargets(const CompileDatabase& db, size_t stride) {
    std::vector<Target> targets;
    size_t seen = 0;
    for (const CompileCommand& cmd : db.commands) {
        std::ifstream in(cmd.file);
        const QString uri = "file://" + QString::fromStdString(cmd.file);
        int lineNo = 0;
        for (std::string line; std::getline(in, line); ++lineNo) {
            const size_t first = line.find_first_not_of(" \t");
            if (first == std::string::npos || line.compare(first, 2, "//") == 0 ||
                line[first] == '#')
                continue;
            for (size_t i = 0; i < line.size();) {
                if (!(std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '_')) {
                    ++i;
                    continue;
                }
                size_t end = i;
                while (end < line.size() &&
                       (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
                    ++end;
                if (end - i >= 3 && seen++ % stride == 0)
                    targets.push_back(
                        {uri, lineNo, int(i), QString::fromStdString(line.substr(i, end - i))});
                i = end;
            }
        }
    }
    return targets;
}

pid_t startDaemon(const std::vector<std::string>& args, const std::string& log) {
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::freopen(log.c_str(), "w", stderr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

std::unique_ptr<RpcClient> connectWithRetry(const std::string& socket) {
    std::string error;
    for (int i = 0; i < 600; ++i) {
        if (auto client = RpcClient::connect(socket, &error))
            return client;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::fprintf(stderr, "daemon_load: %s\n", error.c_str());
    std::exit(1);
}

struct PhaseResult {
    LatencyHistogram definitions, all;
    uint64_t errors = 0, definitionsAnswered = 0; ///< answered: a non-empty location list
};

/// One closed-loop client: `queries` mixed requests.
PhaseResult runClient(const std::string& socket, const std::vector<Target>& targets, int queries,
                      unsigned seed) {
    PhaseResult r;
    auto client = connectWithRetry(socket);
    client->initialize();
    std::mt19937 rng(seed);
    for (int i = 0; i < queries; ++i) {
        const Target& t = targets[rng() % targets.size()];
        const QJsonObject position{
            {"textDocument", QJsonObject{{"uri", t.uri}}},
            {"position", QJsonObject{{"line", t.line}, {"character", t.character}}}};
        const unsigned kind = rng() % 20; // 50% definition, 20% references, 15% symbol, ...
        const auto start = Clock::now();
        try {
            if (kind < 10) {
                const QJsonValue v = client->call("textDocument/definition", position);
                r.definitionsAnswered += v.isArray() && !v.toArray().isEmpty();
            } else if (kind < 14) {
                QJsonObject p = position;
                p["context"] = QJsonObject{{"includeDeclaration", false}};
                client->call("textDocument/references", p);
            } else if (kind < 17) {
                client->call("workspace/symbol", QJsonObject{{"query", t.word.left(4)}});
            } else if (kind < 19) {
                client->call("textDocument/documentSymbol",
                             QJsonObject{{"textDocument", QJsonObject{{"uri", t.uri}}}});
            } else {
                client->call("symdex/status");
            }
        } catch (const std::exception& e) {
            if (r.errors++ == 0)
                std::fprintf(stderr, "daemon_load: query failed: %s\n", e.what());
        }
        const uint64_t ns = uint64_t(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
        r.all.record(ns);
        if (kind < 10)
            r.definitions.record(ns);
    }
    return r;
}

PhaseResult runPhase(const std::string& socket, const std::vector<Target>& targets, int clients,
                     int queries, unsigned seed) {
    std::vector<PhaseResult> results(static_cast<size_t>(clients));
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            results[size_t(c)] = runClient(socket, targets, queries, seed + unsigned(c));
        });
    for (std::thread& t : threads)
        t.join();
    PhaseResult total;
    for (const PhaseResult& r : results) {
        total.definitions.merge(r.definitions);
        total.all.merge(r.all);
        total.errors += r.errors;
        total.definitionsAnswered += r.definitionsAnswered;
    }
    return total;
}

/// Phase 1: the clients run while the daemon re-indexes every TU, asked again whenever a run
/// ends, so the whole phase overlaps indexing.
PhaseResult runWhileIndexing(RpcClient& monitor, const std::string& socket,
                             const std::vector<Target>& targets, int clients, int queries,
                             double* seconds, int* runs) {
    std::atomic<bool> phaseDone{false};
    monitor.call("symdex/index", QJsonObject{{"force", true}});
    std::thread keeper([&] {
        while (!phaseDone) {
            if (monitor.waitForNotification("symdex/reindexed", std::chrono::milliseconds(200))) {
                ++*runs;
                if (!phaseDone)
                    monitor.call("symdex/index", QJsonObject{{"force", true}});
            }
        }
    });
    const auto start = Clock::now();
    PhaseResult result = runPhase(socket, targets, clients, queries, 1);
    *seconds = std::chrono::duration<double>(Clock::now() - start).count();
    phaseDone = true;
    keeper.join();
    return result;
}

/// Waits until the last forced run is over.
void waitUntilIdle(RpcClient& monitor) {
    for (;;) {
        const QJsonObject st = monitor.call("symdex/status").toObject();
        if (st["state"].toString() == "idle" && !st["queue"]["runPending"].toBool())
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

double ms(uint64_t ns) {
    return double(ns) / 1e6;
}

void printPhase(const char* name, const PhaseResult& r, double seconds) {
    const LatencyHistogram& d = r.definitions;
    std::printf("%-22s %8llu %6llu %7.1f s | %7llu %8.2f %8.2f %8.2f %6.1f%% | %8.2f %8.2f\n", name,
                static_cast<unsigned long long>(r.all.count()),
                static_cast<unsigned long long>(r.errors), seconds,
                static_cast<unsigned long long>(d.count()), ms(d.quantileNs(0.5)),
                ms(d.quantileNs(0.99)), ms(d.maxNs()),
                d.count() ? 100.0 * double(r.definitionsAnswered) / double(d.count()) : 0.0,
                ms(r.all.quantileNs(0.99)), ms(r.all.maxNs()));
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addOptions(
        {{"symdexd", "The symdexd binary.", "PATH"},
         {"root", "Source tree.", "DIR"},
         {"p", "Build directory with compile_commands.json.", "BUILD"},
         {"clients", "Concurrent clients (default 64).", "N", "64"},
         {"queries", "Queries per client per phase (default 1000).", "N", "1000"},
         {"threads", "Indexer threads of the daemon (default 2).", "N", "2"},
         {"index-priority", "The daemon's --index-priority (default low).", "low|normal", "low"}});
    parser.process(app);
    if (!parser.isSet("symdexd") || !parser.isSet("root") || !parser.isSet("p")) {
        std::fprintf(stderr, "daemon_load: --symdexd, --root and -p are required\n");
        return 2;
    }
    const int clients = parser.value("clients").toInt(), queries = parser.value("queries").toInt();
    std::string error;
    auto db = loadCompileDatabase(parser.value("p").toStdString(), &error);
    if (!db) {
        std::fprintf(stderr, "daemon_load: %s\n", error.c_str());
        return 2;
    }
    const std::vector<Target> targets = sampleTargets(*db, 7);

    char dirTemplate[] = "/tmp/symdex-load-XXXXXX";
    const std::string dir = ::mkdtemp(dirTemplate);
    const std::string socket = dir + "/symdexd.sock";
    const pid_t pid = startDaemon(
        {parser.value("symdexd").toStdString(), "--root", parser.value("root").toStdString(), "-p",
         parser.value("p").toStdString(), "--store", dir + "/store", "--socket", socket,
         "--threads", parser.value("threads").toStdString(), "--index-priority",
         parser.value("index-priority").toStdString()},
        dir + "/symdexd.log");

    auto monitor = connectWithRetry(socket);
    monitor->initialize();
    const auto coldStart = Clock::now();
    monitor->waitForNotification("symdex/reindexed", std::chrono::hours(1));
    const double cold = std::chrono::duration<double>(Clock::now() - coldStart).count();
    const QJsonObject stats = monitor->call("symdex/stats").toObject();
    std::printf("daemon_load: %zu TUs, %lld files, %lld symbols indexed cold in %.1f s; %zu query "
                "positions; %d clients x %d queries per phase; indexing at %s priority\n",
                db->commands.size(), stats["files"].toInteger(), stats["symbols"].toInteger(), cold,
                targets.size(), clients, queries, qPrintable(parser.value("index-priority")));

    double busySeconds = 0, idleSeconds = 0;
    int runs = 0;
    const PhaseResult busy =
        runWhileIndexing(*monitor, socket, targets, clients, queries, &busySeconds, &runs);
    waitUntilIdle(*monitor);
    const auto start = Clock::now();
    const PhaseResult idle = runPhase(socket, targets, clients, queries, 1);
    idleSeconds = std::chrono::duration<double>(Clock::now() - start).count();

    std::printf("\n%-22s %8s %6s %9s | %7s %8s %8s %8s %7s | %8s %8s\n", "phase", "queries",
                "errors", "wall", "defs", "p50 ms", "p99 ms", "max ms", "found", "all p99",
                "all max");
    printPhase("during re-indexing", busy, busySeconds);
    printPhase("idle", idle, idleSeconds);
    std::printf("(%d forced full re-index runs completed during the first phase)\n", runs);

    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::filesystem::remove_all(dir);
    return busy.errors + idle.errors == 0 ? 0 : 1;
}
