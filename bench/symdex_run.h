// The parent side of a symdex benchmark run: a cold index in a child process (`symdex-bench
// bench-run`), timed from outside like every peer (the bench's clock for wall, wait4's rusage for
// user and sys over all of the child's threads), then the idle-store lookups in a second child,
// and the checks that the run indexed every TU.
#pragma once

#include "bench/run_record.h"
#include "store/symbol_store.h"

#include <filesystem>
#include <string>

namespace symdex::bench {

/// What a correct cold index must store: the figures of the unmeasured reference index.
struct ExpectedStore {
    size_t tus = 0; ///< distinct TUs in the compile database
    size_t files = 0;
    size_t symbols = 0;
    size_t references = 0;
};

struct SymdexRunSetup {
    /// The program to run as `symdex-bench bench-run`.
    std::string executable;
    /// The compile database, as -p takes it.
    std::string database;
    /// The store of each run; removed and rebuilt every time.
    std::filesystem::path storeDirectory;
    /// The names the query client looks up, one per line.
    std::filesystem::path namesFile;
    /// Lookups per second, during the index and against the idle store.
    double queryRate = 200;
    /// Index at low priority (IndexOptions::lowPriority).
    bool lowPriority = true;
    /// Shared precompiled headers (IndexOptions::pch).
    bool pch = true;
    /// Lookups against the idle store after each run.
    uint64_t idleQueries = 2000;
    /// The children's stderr is appended here (empty: discarded).
    std::filesystem::path logFile;
    ExpectedStore expected;
};

/// One measured cold index in `mode` with `threads` threads. Never throws for a failed run: the
/// record says why it failed.
RunRecord runSymdex(const SymdexRunSetup& setup, LockMode mode, unsigned threads, int round);

/// Why `figures` is not a complete index of `expected` (TUs missing or failed, or a store that
/// differs from the reference); empty when it is.
std::string verifySymdexRun(const SymdexFigures& figures, const ExpectedStore& expected);

} // namespace symdex::bench
