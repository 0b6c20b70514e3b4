// Indexing in shards and merging them (issue 14, indexer/shards.h): the merged store is the store
// one machine indexing the whole database writes, after a clean run and after shards ran again;
// a merge refuses shards that do not make one index.
#include "indexer/indexer.h"
#include "indexer/pch_config.h"
#include "indexer/shards.h"
#include "store/encoding.h"
#include "store/lmdb.h"
#include "store/memory_store.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>

using namespace symdex;
using symdex::test::TempDir;

namespace {

std::string dumpOf(const Store& store, const std::filesystem::path& root) {
    std::ostringstream out;
    dumpStore(store, out, root);
    return out.str();
}

std::unique_ptr<SymbolStore> openStore(const std::filesystem::path& dir, bool readOnly = false) {
    StoreOptions options;
    options.directory = dir;
    options.readOnly = readOnly;
    return SymbolStore::open(options);
}

/// A tree of eight TUs. Every one includes h.h, whose declarations depend on the including
/// TU's -D flags (MODE_A for the even ones), and common.h; the odd ones also include odd.h. The
/// sizes of the main files decide who owns each header: the merge must pick the version of the
/// TU that ranks first among all shards, not the first shard's.
struct Tree {
    TempDir dir;

    Tree() {
        write("h.h", "#pragma once\n#ifdef MODE_A\nvoid mode_a_fn();\n#else\nvoid mode_b_fn();\n"
                     "#endif\nstruct Shared { int v; };\n");
        write("common.h", "#pragma once\ninline int common(int x) { return x + 1; }\n");
        write("odd.h", "#pragma once\n#include \"common.h\"\nstruct Odd { int o = common(1); };\n");
        for (int i = 0; i < 8; ++i)
            writeSource(i, 0);
        writeDb();
    }
    void write(const std::string& rel, const std::string& text) const {
        test::writeFile(dir / rel, text);
    }
    /// t<i>.cc, `padding` more lines long.
    void writeSource(int i, int padding) const {
        std::string text = "#include \"h.h\"\n#include \"common.h\"\n";
        if (i % 2)
            text += "#include \"odd.h\"\n";
        text += "int f" + std::to_string(i) + "() { Shared s{" + std::to_string(i) +
                "}; return common(s.v); }\n";
        for (int line = 0; line < padding + i % 3; ++line)
            text += "// padding\n";
        write("t" + std::to_string(i) + ".cc", text);
    }
    void writeDb(int tus = 8) const {
        std::string json = "[\n";
        auto entry = [&](const std::string& file, const std::string& flags) {
            json += std::string(json.size() > 2 ? ",\n" : "") + "{\"directory\": \"" +
                    dir.path().string() + "\", \"file\": \"" + file +
                    "\", \"arguments\": [\"clang++\"" + flags + ", \"-c\", \"" + file + "\"]}";
        };
        for (int i = 0; i < tus; ++i)
            entry(dir / ("t" + std::to_string(i) + ".cc"),
                  std::string(", \"-std=c++17\"") + (i % 2 ? "" : ", \"-DMODE_A\""));
        for (const auto& [file, flags] : extra)
            entry(dir / file, flags);
        test::writeFile(dir / "compile_commands.json", json + "\n]\n");
    }
    /// More entries: (file, the arguments after the compiler, each as `, "ARG"`).
    std::vector<std::pair<std::string, std::string>> extra;
    Isolation isolation = Isolation::InProcess;
    std::chrono::milliseconds tuTimeout{0};
    CompileDatabase db() const {
        std::string error;
        auto loaded = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(loaded);
        return *loaded;
    }
    IndexOptions options() const {
        IndexOptions options;
        options.threads = 2;
        options.isolation = isolation;
        options.tuTimeout = tuTimeout;
        return options;
    }
    /// One machine's index of the whole database, into a fresh store.
    std::string whole() const {
        TempDir other;
        auto store = openStore(other / "store");
        Indexer(*store, options()).run(db());
        return dumpOf(*store, dir.path());
    }
    /// What `symdex index --shard K/N` does, into dir/shard-K.
    ShardPlan shard(ShardSpec spec, const Store* balanceFrom = nullptr) const {
        ShardPlan plan = planShard(db(), spec, balanceFrom);
        auto store = openStore(shardDir(spec.index));
        recordShardManifest(*store, plan.manifest);
        Indexer(*store, options()).run(plan.share);
        plan.manifest.runId = newShardRunId();
        recordShardManifest(*store, plan.manifest);
        return plan;
    }
    std::filesystem::path shardDir(uint32_t k) const {
        return dir / ("shard-" + std::to_string(k));
    }
    std::vector<std::filesystem::path> shardDirs(uint32_t n) const {
        std::vector<std::filesystem::path> dirs;
        for (uint32_t k = 0; k < n; ++k)
            dirs.push_back(shardDir(k));
        return dirs;
    }
    /// Merges shards 0..n-1 into dir/merged; returns the summary and the merged dump.
    std::pair<MergeSummary, std::string> merge(uint32_t n, size_t initialMapSize = 0) const {
        StoreOptions options;
        options.directory = dir / "merged";
        if (initialMapSize)
            options.initialMapSize = initialMapSize;
        auto out = SymbolStore::open(options);
        MergeSummary summary = mergeShards(*out, shardDirs(n));
        return {summary, dumpOf(*out, dir.path())};
    }
};

} // namespace

TEST_CASE("N shards merged hold what one machine's index holds", "[shards]") {
    const uint32_t n = GENERATE(1u, 2u, 3u, 8u, 11u);
    INFO(n << " shards");
    Tree tree;
    const std::string whole = tree.whole();
    std::set<std::string> seen;
    for (uint32_t k = 0; k < n; ++k) {
        const ShardPlan plan = tree.shard({k, n});
        for (const auto& [path, rank] : plan.manifest.tus)
            CHECK(seen.insert(path).second); // each TU in one shard only
    }
    CHECK(seen.size() == 8);
    const auto [summary, merged] = tree.merge(n);
    CHECK(merged == whole);
    CHECK(summary.shardsMerged == n);
    CHECK(summary.tus == 8);
    // The owner of h.h is the largest main file's TU, whichever shard parsed it.
    CHECK(merged.find("file h.h hash") != std::string::npos);
}

TEST_CASE("a TU of a configuration too small for a PCH owns the headers it shares, in shards as "
          "on one machine",
          "[shards]") {
    // solo.cc ranks first (pchTiers): its configuration has one TU, the others four each. A share
    // alone would not tell (a shard of three holds no configuration of four): each shard ranks
    // with the whole database's tiers, or the merge takes an h.h its shard did not keep.
    Tree tree;
    tree.write("h.h", "#pragma once\n#ifdef SOLO\nvoid solo_fn();\n#endif\n#ifdef MODE_A\n"
                      "void mode_a_fn();\n#else\nvoid mode_b_fn();\n#endif\n"
                      "struct Shared { int v; };\n");
    tree.write("solo.cc", "#include \"h.h\"\nint solo() { return 0; }\n");
    tree.extra = {{"solo.cc", ", \"-std=c++17\", \"-DSOLO\""}};
    tree.writeDb();
    const std::vector<uint8_t> tiers = pchTiers(tree.db());
    CHECK(std::count(tiers.begin(), tiers.end(), 0) == 1);
    const std::string whole = tree.whole();
    CHECK(whole.find("solo_fn") != std::string::npos);
    const uint32_t n = GENERATE(2u, 3u);
    INFO(n << " shards");
    for (uint32_t k = 0; k < n; ++k)
        tree.shard({k, n});
    CHECK(tree.merge(n).second == whole);
}

TEST_CASE("the golden fixture merged from three shards is the golden fixture's index", "[shards]") {
    TempDir dir;
    test::copyFixture("golden", dir.path());
    test::writeCompileDb(dir.path(),
                         {"src/circle.cpp", "src/util.cpp", "src/main.cpp", "src/broken.cpp"},
                         {"-std=c++17", "-Iinclude"});
    std::string error;
    const auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions options;
    options.threads = 2;
    auto whole = openStore(dir / "whole");
    Indexer(*whole, options).run(*db);
    std::vector<std::filesystem::path> shards;
    for (uint32_t k = 0; k < 3; ++k) {
        ShardPlan plan = planShard(*db, {k, 3}, nullptr);
        shards.push_back(dir / ("shard-" + std::to_string(k)));
        auto store = openStore(shards.back());
        Indexer(*store, options).run(plan.share);
        plan.manifest.runId = newShardRunId();
        recordShardManifest(*store, plan.manifest);
    }
    auto merged = openStore(dir / "merged");
    mergeShards(*merged, shards);
    CHECK(dumpOf(*merged, dir.path()) == dumpOf(*whole, dir.path()));
    CHECK(dumpOf(*merged, dir.path()).find("tu src/broken.cpp errors") != std::string::npos);
}

TEST_CASE("merging again takes only the shards that ran, and follows owners across shards",
          "[shards]") {
    Tree tree;
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    CHECK(tree.merge(3).second == tree.whole());

    // t0.cc grows to rank first: it owns h.h and common.h now, with its MODE_A. Only its shard
    // runs again; the merge takes that shard's TUs and the headers whose owner moved.
    const ShardPlan before = planShard(tree.db(), {0, 3}, nullptr);
    uint32_t shardOfT0 = 0;
    for (uint32_t k = 0; k < 3; ++k)
        for (const auto& [path, rank] : planShard(tree.db(), {k, 3}, nullptr).manifest.tus)
            if (path.ends_with("/t0.cc"))
                shardOfT0 = k;
    tree.writeSource(0, 40);
    // The split is by size: it may move TUs when t0.cc grows. Every shard whose share changed
    // runs again, as a job array would; the one holding t0.cc always does.
    std::set<uint32_t> ran;
    for (uint32_t k = 0; k < 3; ++k) {
        std::vector<std::string> was, now;
        std::filesystem::path dir = tree.shardDir(k);
        auto stored = openStore(dir, true);
        stored->forEachTu([&](const std::string& path, const TuRecord&) { was.push_back(path); });
        stored.reset();
        for (const auto& [path, rank] : planShard(tree.db(), {k, 3}, nullptr).manifest.tus)
            now.push_back(path);
        std::sort(was.begin(), was.end());
        std::sort(now.begin(), now.end());
        if (was != now || k == shardOfT0) {
            tree.shard({k, 3});
            ran.insert(k);
        }
    }
    const auto [summary, merged] = tree.merge(3);
    CHECK(summary.shardsMerged == ran.size());
    CHECK(merged == tree.whole());
    CHECK(merged.find("mode_a_fn") != std::string::npos);
    (void)before;

    // A header edit: every shard runs (each re-parses what changed in it); the merge equals a
    // clean index again.
    tree.write("common.h", "#pragma once\ninline int common(int x) { return x + 2; }\n"
                           "inline int added(int x) { return x; }\n");
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    const auto [again, mergedAgain] = tree.merge(3);
    CHECK(again.shardsMerged == 3);
    CHECK(mergedAgain == tree.whole());
    CHECK(mergedAgain.find("added") != std::string::npos);

    // Nothing ran: nothing is written.
    const auto [idle, same] = tree.merge(3);
    CHECK(idle.shardsMerged == 0);
    CHECK(idle.filesWritten == 0);
    CHECK(idle.tusWritten == 0);
    CHECK(same == mergedAgain);

    // Every shard ran and parsed nothing (a job array re-run on an unchanged tree): the merge
    // reads the shards and writes nothing.
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    const auto [rerun, unchanged] = tree.merge(3);
    CHECK(rerun.shardsMerged == 3);
    CHECK(rerun.tusWritten == 0);
    CHECK(rerun.filesWritten == 0);
    CHECK(unchanged == mergedAgain);

    // odd.h changes: the shards re-parse the four TUs that include it, and the merge writes
    // those four and what they own.
    tree.write("odd.h", "#pragma once\n#include \"common.h\"\nstruct Odd { int o = common(2); };\n"
                        "struct Odder {};\n");
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    const auto [odd, mergedOdd] = tree.merge(3);
    CHECK(odd.tusWritten == 4);
    CHECK(mergedOdd == tree.whole());
    CHECK(mergedOdd.find("Odder") != std::string::npos);

    // `symdex index` on the merged store (a developer catching up): it is no longer what the
    // merge wrote, so the next merge takes every shard again and writes every TU.
    {
        auto merged = openStore(tree.dir / "merged");
        Indexer(*merged, tree.options()).run(tree.db());
    }
    const auto [full, mergedFull] = tree.merge(3);
    CHECK(full.shardsMerged == 3);
    CHECK(full.tusWritten == 8);
    CHECK(mergedFull == tree.whole());
}

TEST_CASE("a merge refuses shards that do not make one index, naming the shard", "[shards]") {
    Tree tree;
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    auto mergeOf = [&](const std::vector<std::filesystem::path>& shards) {
        TempDir out;
        auto store = openStore(out / "merged");
        mergeShards(*store, shards);
    };
    using Catch::Matchers::Contains;
    const auto all = tree.shardDirs(3);
    CHECK_THROWS_WITH(mergeOf({all[0], all[1]}), Contains("shard 2/3 is missing"));
    CHECK_THROWS_WITH(mergeOf({all[0], all[1], all[2], all[1]}), Contains("are both shard 1/3"));
    CHECK_THROWS_WITH(mergeOf({all[0], all[1], tree.dir / "nothing"}), Contains("holds no store"));

    // A shard of another database: one entry fewer.
    tree.writeDb(7);
    tree.shard({2, 3});
    CHECK_THROWS_WITH(mergeOf(all), Contains("different compilation databases"));
    tree.writeDb(8);
    tree.shard({2, 3});
    CHECK_NOTHROW(mergeOf(all));

    // A run that did not finish leaves its shard unmergeable.
    {
        auto store = openStore(all[1]);
        recordShardManifest(*store, planShard(tree.db(), {1, 3}, nullptr).manifest);
    }
    CHECK_THROWS_WITH(mergeOf(all), Contains("its last run did not finish"));
    tree.shard({1, 3});

    // A store indexed whole is no shard, and no merge goes into one.
    TempDir plain;
    {
        auto store = openStore(plain / "store");
        Indexer(*store, tree.options()).run(tree.db());
    }
    CHECK_THROWS_WITH(mergeOf({all[0], all[1], plain / "store"}),
                      Contains("is not a shard's store"));
    {
        auto store = openStore(plain / "store");
        CHECK_THROWS_WITH(mergeShards(*store, all), Contains("not a merge of shards"));
    }
    CHECK_NOTHROW(mergeOf(all));

    // A shard of another store format version (another symdex).
    {
        auto env = lmdb::Env::open(all[0], 1 << 20, 16, 16, 0);
        auto txn = lmdb::Txn::begin(env, false);
        MDB_dbi meta = txn.openDb("meta", 0);
        std::string other;
        appendBigEndian(other, kStoreFormatVersion + 1, 4);
        txn.put(meta, "format", other);
        txn.commit();
    }
    CHECK_THROWS_WITH(
        mergeOf(all),
        Contains("shard '" + all[0].string() + "' was written by another version of symdex") &&
            Contains("has format version " + std::to_string(kStoreFormatVersion + 1)));
}

TEST_CASE("shards are balanced by the parse times a merged store recorded, and keep their split "
          "while it stays balanced",
          "[shards]") {
    Tree tree;
    const CompileDatabase db = tree.db();
    REQUIRE(db.commands.size() == 8);
    // By size: every shard's split is the same, and each TU is in one.
    const Partition bySize = partitionDatabase(db, 3, nullptr);
    CHECK(bySize.hash == partitionDatabase(db, 3, nullptr).hash);
    CHECK(!bySize.kept);

    // A store where t5.cc took 10 s and every other TU 1 s: t5.cc gets a shard of its own.
    MemoryStore times;
    for (size_t i = 0; i < db.commands.size(); ++i) {
        IndexedTu tu;
        tu.mainFile = db.commands[i].file;
        tu.record.parseMillis = i == 5 ? 10000 : 1000;
        times.publish(std::move(tu));
    }
    times.flush();
    const Partition byTime = partitionDatabase(db, 3, &times);
    for (size_t i = 0; i < 8; ++i)
        if (i != 5)
            CHECK(byTime.shardOf[i] != byTime.shardOf[5]);
    CHECK(*std::max_element(byTime.loads.begin(), byTime.loads.end()) == 10000 * 1000);

    // A merged store records the split it merged; the next runs keep it while it is balanced.
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    MemoryStore merged;
    mergeShards(merged, tree.shardDirs(3));
    // The TU the size split put with two others becomes slow.
    size_t slow = 0;
    while (std::count(bySize.shardOf.begin(), bySize.shardOf.end(), bySize.shardOf[slow]) != 3)
        ++slow;
    auto retime = [&](uint32_t millis) { // parse times the test controls
        for (size_t i = 0; i < db.commands.size(); ++i) {
            IndexedTu tu;
            tu.mainFile = db.commands[i].file;
            tu.record = *merged.tu(tu.mainFile);
            tu.record.parseMillis = i == slow ? millis : 1000;
            merged.publish(std::move(tu));
        }
        merged.flush();
    };
    retime(1000); // all equal: the size split loads 3, 3 and 2 TUs, as a new one would
    const Partition kept = partitionDatabase(db, 3, &merged);
    CHECK(kept.kept);
    CHECK(kept.shardOf == bySize.shardOf);
    retime(1200); // the kept split is 7% over a new one: kept
    CHECK(partitionDatabase(db, 3, &merged).kept);
    // 5 s with two others is 40% over a new split, which puts it alone: split anew.
    retime(5000);
    const Partition moved = partitionDatabase(db, 3, &merged);
    CHECK(!moved.kept);
    CHECK(std::count(moved.shardOf.begin(), moved.shardOf.end(), moved.shardOf[slow]) == 1);
}

TEST_CASE("TUs that fail or crash own nothing, in shards as on one machine, and a file that loses "
          "its last owner is emptied for every TU that reads it",
          "[shards]") {
    Tree tree;
    tree.isolation = Isolation::Process; // a parse past --tu-timeout is stopped in its worker
    tree.tuTimeout = std::chrono::milliseconds(1500);
    tree.write("lonely.h", "#pragma once\nstruct Lonely { int l; };\n");
    tree.write("good.cc", "#include \"lonely.h\"\nint good() { return Lonely{1}.l; }\n");
    // libclang refuses its command: failed, and its main file has no contents.
    tree.write("bad.cc", "#include \"h.h\"\n#include \"lonely.h\"\nint bad() { return 1; }\n");
    // Minutes of constant evaluation: stopped after 1.5 s, crashed ("timed out").
    tree.write("slow.cc", "#include \"lonely.h\"\nconstexpr long spin() { long x = 0; for (long "
                          "i = 0; i < (1L << 40); ++i) x += i % 7; return x; }\n"
                          "constexpr long slow = spin();\n");
    tree.extra = {{"good.cc", ", \"-std=c++17\""},
                  {"bad.cc", ", \"-std=bogus\""},
                  {"slow.cc", ", \"-std=c++17\", \"-fconstexpr-steps=2147483647\""}};
    tree.writeDb();
    for (uint32_t k = 0; k < 3; ++k)
        tree.shard({k, 3});
    const std::string whole = tree.whole();
    CHECK(whole.find("tu bad.cc failed") != std::string::npos);
    CHECK(whole.find("tu slow.cc crashed") != std::string::npos);
    CHECK(tree.merge(3).second == whole);

    // good.cc no longer includes lonely.h: nothing that parsed well reads it, and bad.cc and
    // slow.cc, whose shards may not run, still name it. Only good.cc's shard runs again.
    tree.write("good.cc", "int good() { return 2; }\n");
    uint32_t goodShard = 0;
    for (uint32_t k = 0; k < 3; ++k)
        for (const auto& [path, rank] : planShard(tree.db(), {k, 3}, nullptr).manifest.tus)
            if (path.ends_with("/good.cc"))
                goodShard = k;
    tree.shard({goodShard, 3});
    const auto [summary, merged] = tree.merge(3);
    CHECK(summary.shardsMerged == 1);
    CHECK(merged == tree.whole());
    CHECK(merged.find("file lonely.h hash 0 symbols 0 references 0 owner -") != std::string::npos);
}

TEST_CASE("a merge that outgrows the output store's map grows it", "[shards]") {
    Tree tree;
    std::string big = "#pragma once\n";
    for (int i = 0; i < 3000; ++i)
        big += "inline int generated" + std::to_string(i) + "(int x) { return x + " +
               std::to_string(i) + "; }\n";
    tree.write("common.h", big);
    for (uint32_t k = 0; k < 2; ++k)
        tree.shard({k, 2});
    const auto [summary, merged] = tree.merge(2, size_t(128) << 10);
    CHECK(merged == tree.whole());
    CHECK(merged.find("generated2999") != std::string::npos);
}
