#include "bench/index_measurement.h"

#include "bench/query_probe.h"
#include "indexer/indexer.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace symdex::bench {

namespace {

LatencyFigures figuresOf(const LatencyHistogram& h) {
    auto us = [](uint64_t ns) { return double(ns) / 1000.0; };
    LatencyFigures l;
    l.count = h.count();
    l.p50 = us(h.quantileNs(0.50));
    l.p95 = us(h.quantileNs(0.95));
    l.p99 = us(h.quantileNs(0.99));
    l.p999 = us(h.quantileNs(0.999));
    l.max = us(h.maxNs());
    return l;
}

void addLockTelemetry(const LockTelemetry& locks, SymdexFigures* f) {
    for (const LockCounters& c : locks.byClass) {
        f->lockAcquisitions += double(c.acquisitions);
        f->lockContended += double(c.contended);
        f->lockWaitSeconds += double(c.waitNs) / 1e9;
    }
}

} // namespace

SymdexFigures measureColdIndex(const CompileDatabase& db, const ColdIndexOptions& options) {
    std::filesystem::remove_all(options.storeDirectory);
    StoreOptions storeOptions;
    storeOptions.directory = options.storeDirectory;
    storeOptions.lockMode = options.lockMode;
    std::unique_ptr<SymbolStore> store = SymbolStore::open(storeOptions);
    IndexOptions indexOptions;
    indexOptions.threads = options.threads;
    indexOptions.lowPriority = options.lowPriority;
    indexOptions.pch = options.pch ? PchPolicy::Auto : PchPolicy::Off;
    indexOptions.pchDirectory = (options.storeDirectory / "pch").string();
    Indexer indexer(*store, indexOptions);

    IndexSummary summary;
    ProbeResult during;
    {
        QueryProbe probe(*store, options.names, options.queryRate);
        summary = indexer.run(db);
        during = probe.stop();
    }
    const StoreStats stats = store->stats();
    SymdexFigures f;
    f.tusParsed = summary.tusParsed;
    f.tusWithErrors = summary.tusWithErrors;
    f.tusFailed = summary.tusFailed + summary.tusCrashed;
    f.files = stats.files;
    f.symbols = stats.symbols;
    f.references = stats.references;
    f.indexWallSeconds = summary.wallSeconds;
    f.parseWallSeconds = summary.parseWallSeconds;
    addLockTelemetry(summary.locks, &f);
    f.storeBytes = double(stats.diskBytes);
    f.probeUserSeconds = during.userSeconds;
    f.probeSysSeconds = during.sysSeconds;
    f.nameIndexing = figuresOf(during.nameLookups);
    f.definitionIndexing = figuresOf(during.definitionLookups);
    return f;
}

void measureIdleQueries(const std::filesystem::path& storeDirectory,
                        const std::vector<std::string>& names, double rate, uint64_t queries,
                        SymdexFigures* figures) {
    StoreOptions storeOptions;
    storeOptions.directory = storeDirectory;
    storeOptions.readOnly = true;
    std::unique_ptr<SymbolStore> store = SymbolStore::open(storeOptions);
    const ProbeResult idle = QueryProbe(*store, names, rate).runFor(queries);
    figures->nameIdle = figuresOf(idle.nameLookups);
    figures->definitionIdle = figuresOf(idle.definitionLookups);
}

double ownPeakRssMiB() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0)
            return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
    return 0;
}

} // namespace symdex::bench
