// The synthetic trees of `symdex bench --synthetic`: deterministic bytes for a seed, different
// trees for different seeds, and an index that holds exactly the symbols the generator promised.
#include "bench/synthetic_tree.h"
#include "indexer/indexer.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <map>

using namespace symdex;
using namespace symdex::bench;
using symdex::test::TempDir;

namespace {

/// Every file of the tree, by path relative to the root, with its contents.
std::map<std::string, std::string> snapshot(const std::filesystem::path& root) {
    std::map<std::string, std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
        if (entry.is_regular_file())
            files[std::filesystem::relative(entry.path(), root).string()] =
                test::readFile(entry.path());
    return files;
}

} // namespace

TEST_CASE("synthetic: the same spec and seed write the same bytes", "[bench][synthetic]") {
    TempDir dir;
    const SyntheticSpec spec{5, 8, 3, 42};
    const SyntheticTree tree = generateSyntheticTree(spec, dir.path() / "tree");
    const auto first = snapshot(tree.root);
    CHECK(first.size() == 5 + 3 + 1);
    CHECK(first.count("compile_commands.json"));
    CHECK(first.count("src/file_4.cpp"));
    CHECK(first.count("include/synth/shared_2.h"));
    generateSyntheticTree(spec, dir.path() / "tree"); // regenerated over the first
    CHECK(snapshot(tree.root) == first);

    // Elsewhere only the database's absolute directory differs.
    const SyntheticTree other = generateSyntheticTree(spec, dir.path() / "other");
    auto moved = snapshot(other.root);
    CHECK(moved.erase("compile_commands.json") == 1);
    auto original = first;
    original.erase("compile_commands.json");
    CHECK(moved == original);
}

TEST_CASE("synthetic: another seed makes another tree of the same shape", "[bench][synthetic]") {
    TempDir dir;
    const auto a = snapshot(generateSyntheticTree({4, 10, 2, 1}, dir.path() / "a").root);
    const auto b = snapshot(generateSyntheticTree({4, 10, 2, 2}, dir.path() / "b").root);
    CHECK(a.size() == b.size());
    CHECK(a.at("src/file_0.cpp") != b.at("src/file_0.cpp"));
}

TEST_CASE("synthetic: the spec is FILES,DECLS,SHARED_HEADERS", "[bench][synthetic]") {
    std::string error;
    const std::optional<SyntheticSpec> spec = parseSyntheticSpec("200,50,10", 7, &error);
    REQUIRE(spec);
    CHECK(spec->files == 200);
    CHECK(spec->declarations == 50);
    CHECK(spec->sharedHeaders == 10);
    CHECK(spec->seed == 7);
    CHECK(parseSyntheticSpec("3,4,0", 1, &error));
    for (const char* bad : {"", "1,2", "1,2,3,4", "0,5,1", "5,0,1", "a,2,3", "1,-2,3", "1,2x,3"}) {
        INFO(bad);
        error.clear(); // each bad spec must say why itself
        CHECK_FALSE(parseSyntheticSpec(bad, 1, &error));
        CHECK_FALSE(error.empty());
    }
    CHECK(syntheticTreeName({200, 50, 10, 7}) == "synthetic-200-50-10-seed-7");
}

TEST_CASE("synthetic: the tree indexes cleanly to exactly the expected symbols",
          "[bench][synthetic]") {
    TempDir dir;
    const SyntheticTree tree = generateSyntheticTree({6, 12, 3, 9}, dir.path() / "tree");
    std::string error;
    const std::optional<CompileDatabase> db = loadCompileDatabase(tree.database.string(), &error);
    REQUIRE(db);
    REQUIRE(db->commands.size() == 6);
    StoreOptions storeOptions;
    storeOptions.directory = dir.path() / "store";
    std::unique_ptr<SymbolStore> store = SymbolStore::open(storeOptions);
    IndexOptions options;
    options.threads = 2;
    const IndexSummary summary = Indexer(*store, options).run(*db);
    CHECK(summary.tusParsed == 6);
    CHECK(summary.tusWithErrors == 0);
    CHECK(summary.tusFailed == 0);
    const StoreStats stats = store->stats();
    CHECK(stats.files == 6 + 3);
    CHECK(stats.symbols == tree.expectedSymbols);
    CHECK(stats.references > 0); // each TU's functions call a shared header's f0
}
