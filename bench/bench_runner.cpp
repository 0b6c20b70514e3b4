#include "bench/bench_runner.h"

#include "bench/child_process.h"
#include "bench/peer.h"
#include "bench/query_probe.h"
#include "bench/symdex_run.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace symdex::bench {

namespace {

/// The unmeasured first index: what every run must store, and the names to look up.
ExpectedStore referenceIndex(const BenchOptions& options, const CompileDatabase& db,
                             const std::filesystem::path& log) {
    const std::filesystem::path storeDir = options.outDirectory / "reference-store";
    std::filesystem::remove_all(storeDir);
    ChildProcess::Options childOptions;
    childOptions.stderrPath = log;
    const ChildExit exit = runToCompletion(
        {options.symdexExecutable, "index", "-q", "-p", db.path, "--store", storeDir.string()},
        childOptions, nullptr);
    if (!exit.succeeded())
        throw std::runtime_error("the reference index failed (" + exit.describe() + "): see " +
                                 log.string());
    StoreOptions storeOptions;
    storeOptions.directory = storeDir;
    storeOptions.readOnly = true;
    std::unique_ptr<SymbolStore> store = SymbolStore::open(storeOptions);
    std::ofstream names(options.outDirectory / "names.txt", std::ios::trunc);
    for (const std::string& name : sampleNames(*store, options.sampledNames))
        names << name << "\n";
    const StoreStats stats = store->stats();
    return ExpectedStore{db.commands.size(), stats.files, stats.symbols, stats.references};
}

void printProgress(const BenchOptions& options, const RunRecord& run, int runsDone, int runsTotal) {
    if (!options.progress)
        return;
    std::fprintf(stderr, "bench: [%d/%d] round %d, %-16s %2u thread%s  ", runsDone, runsTotal,
                 run.round, configLabel(run.config).c_str(), run.threads,
                 run.threads == 1 ? " " : "s");
    if (run.ok)
        std::fprintf(stderr, "%.2f s wall, %.2f s user, %.2f s sys\n", run.wallSeconds,
                     run.userSeconds, run.sysSeconds);
    else
        std::fprintf(stderr, "FAILED: %s\n", run.failure.c_str());
}

} // namespace

BenchResult runBenchmark(const BenchOptions& options, const CompileDatabase& db) {
    std::filesystem::create_directories(options.outDirectory);
    const std::filesystem::path log = options.outDirectory / "bench.log";
    std::filesystem::remove(log);
    if (options.progress)
        std::fprintf(stderr, "bench: reference index of %zu TUs (unmeasured)...\n",
                     db.commands.size());
    SymdexRunSetup setup;
    setup.executable = options.benchExecutable;
    setup.database = db.path;
    setup.storeDirectory = options.outDirectory / "run-store";
    setup.namesFile = options.outDirectory / "names.txt";
    setup.queryRate = options.queryRate;
    setup.lowPriority = options.lowPriority;
    setup.pch = options.pch;
    setup.idleQueries = options.idleQueries;
    setup.logFile = log;
    setup.expected = referenceIndex(options, db, log);

    std::vector<std::unique_ptr<Peer>> peers;
    for (const std::string& name : options.peers)
        peers.push_back(makePeer(name, PeerSetup{&db, options.outDirectory / "peers" / name,
                                                 options.peerTimeoutSeconds}));

    BenchResult result;
    const int perRound =
        int(options.threadCounts.size() * (options.lockModes.size() + peers.size()));
    for (int round = 1; round <= options.repeat; ++round) {
        for (unsigned threads : options.threadCounts) {
            for (LockMode mode : options.lockModes) {
                result.runs.push_back(runSymdex(setup, mode, threads, round));
                printProgress(options, result.runs.back(), int(result.runs.size()),
                              perRound * options.repeat);
            }
            for (const auto& peer : peers) {
                result.runs.push_back(peer->run(threads, round));
                printProgress(options, result.runs.back(), int(result.runs.size()),
                              perRound * options.repeat);
            }
        }
    }
    std::filesystem::remove_all(setup.storeDirectory);
    result.rows = aggregateRuns(result.runs);
    result.context.database = db.path;
    result.context.tus = db.commands.size();
    result.context.repeat = options.repeat;
    result.context.queryRate = options.queryRate;
    result.context.lowPriority = options.lowPriority;
    result.context.idleQueries = options.idleQueries;
    result.context.peers = options.peers;
    return result;
}

} // namespace symdex::bench
