// The Catch2 runner. Kept in its own file (and out of the sanitizer flags): it is slow to compile.
// It waits for TBB's worker threads before the process exits: an indexing run's arena is torn down
// by the last worker to leave it, and a worker still leaving at exit would make LeakSanitizer
// report TBB's observer bookkeeping (indexer.cpp's WorkerNamer) as leaked, depending on timing.
// Indexing runs in the tests parse in this build's symdex-worker: a test binary has none beside it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include <cstdlib>

int main(int argc, char** argv) {
    setenv("SYMDEX_WORKER", SYMDEX_WORKER_PATH, /*overwrite=*/0);
    tbb::task_scheduler_handle tbbHandle{tbb::attach{}};
    const int result = Catch::Session().run(argc, argv);
    tbb::finalize(tbbHandle, std::nothrow);
    return result;
}
