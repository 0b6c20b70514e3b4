// The child side of a symdex benchmark run (`symdex-bench bench-run`): one cold index into a fresh
// store while a query client looks names up at a fixed rate, or the same lookups against the
// finished store left idle. The parent (symdex_run.h) times the process; this side reports what
// only the process itself can see: its index counters, lock telemetry and client-side latency.
#pragma once

#include "bench/run_record.h"
#include "indexer/compile_db.h"
#include "store/symbol_store.h"

#include <QJsonObject>

#include <filesystem>
#include <string>
#include <vector>

namespace symdex::bench {

struct ColdIndexOptions {
    /// The store directory; whatever is there is removed first.
    std::filesystem::path storeDirectory;
    /// Parsing threads.
    unsigned threads = 1;
    LockMode lockMode = LockMode::PerFile;
    /// Qualified names the client looks up (sampleNames of a reference store).
    std::vector<std::string> names;
    /// Lookups per second, name and definition lookups alternating; 0: no client.
    double queryRate = 200;
    /// IndexOptions::lowPriority.
    bool lowPriority = true;
    /// IndexOptions::pch (the PCHs go in the store's pch/, removed with it).
    bool pch = true;
};

/// Indexes `db` cold and returns the figures, with latency under load in nameIndexing and
/// definitionIndexing (the idle ones stay empty).
SymdexFigures measureColdIndex(const CompileDatabase& db, const ColdIndexOptions& options);

/// `queries` lookups at `rate` per second against the store in `storeDirectory`, opened read-only
/// and otherwise idle: fills nameIdle and definitionIdle of `figures`.
void measureIdleQueries(const std::filesystem::path& storeDirectory,
                        const std::vector<std::string>& names, double rate, uint64_t queries,
                        SymdexFigures* figures);

/// The peak resident set of this process since its exec (VmHWM), in MiB. Not wait4's ru_maxrss,
/// which on Linux starts from the parent's high-water mark.
double ownPeakRssMiB();

} // namespace symdex::bench
