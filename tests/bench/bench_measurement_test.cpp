// The child side of a symdex bench run, in-process: a cold index with the query client running
// (under ThreadSanitizer this is the client racing the indexer), and lookups on the idle store.
#include "bench/index_measurement.h"
#include "bench/query_probe.h"
#include "bench/symdex_run.h"
#include "bench/synthetic_tree.h"
#include "indexer/indexer.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace symdex;
using namespace symdex::bench;
using symdex::test::TempDir;

namespace {

void checkOrdered(const LatencyFigures& l) {
    CHECK(l.p50 <= l.p95);
    CHECK(l.p95 <= l.p99);
    CHECK(l.p99 <= l.p999);
    CHECK(l.p999 <= l.max);
}

} // namespace

TEST_CASE("measureColdIndex: a fresh store, every TU, the client's lookups recorded",
          "[bench][measurement]") {
    TempDir dir;
    const SyntheticTree tree = generateSyntheticTree({8, 10, 3, 4}, dir.path() / "tree");
    std::string error;
    const std::optional<CompileDatabase> db = loadCompileDatabase(tree.database.string(), &error);
    REQUIRE(db);

    // A reference index gives the names, as the bench's does.
    std::vector<std::string> names;
    {
        StoreOptions options;
        options.directory = dir.path() / "reference";
        std::unique_ptr<SymbolStore> store = SymbolStore::open(options);
        Indexer(*store, IndexOptions{}).run(*db);
        names = sampleNames(*store, 50);
    }
    REQUIRE(names.size() == 50);

    for (LockMode mode : {LockMode::PerFile, LockMode::Global}) {
        ColdIndexOptions options;
        options.storeDirectory = dir.path() / "run";
        options.threads = 2;
        options.lockMode = mode;
        options.names = names;
        options.queryRate = 5000;
        // The second mode reuses the first one's store directory: it must start empty.
        SymdexFigures figures = measureColdIndex(*db, options);
        INFO(lockModeName(mode));
        CHECK(figures.tusParsed == 8);
        CHECK(figures.tusFailed == 0);
        CHECK(figures.symbols == tree.expectedSymbols);
        CHECK(figures.lockAcquisitions > 0);
        CHECK(figures.indexWallSeconds >= figures.parseWallSeconds);
        checkOrdered(figures.nameIndexing);
        checkOrdered(figures.definitionIndexing);
        CHECK(verifySymdexRun(figures, {8, figures.files, tree.expectedSymbols, figures.references})
                  .empty());

        measureIdleQueries(options.storeDirectory, names, 20000, 200, &figures);
        CHECK(figures.nameIdle.count == 100);
        CHECK(figures.definitionIdle.count == 100);
        checkOrdered(figures.nameIdle);
        CHECK(figures.nameIdle.p50 > 0);
    }
}

TEST_CASE("verifySymdexRun: missing or failed TUs and a store unlike the reference fail",
          "[bench][measurement]") {
    SymdexFigures f;
    f.tusParsed = 10;
    f.files = 20;
    f.symbols = 300;
    f.references = 400;
    const ExpectedStore expected{10, 20, 300, 400};
    CHECK(verifySymdexRun(f, expected).empty());
    SymdexFigures missing = f;
    missing.tusParsed = 9;
    CHECK(verifySymdexRun(missing, expected) == "parsed 9 of 10 TUs");
    SymdexFigures failed = f;
    failed.tusFailed = 1;
    CHECK(verifySymdexRun(failed, expected) == "1 TUs failed or crashed");
    SymdexFigures differs = f;
    differs.symbols = 299;
    differs.references = 401;
    CHECK(verifySymdexRun(differs, expected) ==
          "store holds symbols 299 instead of 300; store holds references 401 instead of 400");
}
