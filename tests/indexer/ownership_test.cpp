// A header's symbols depend on the TU that extracted it (its flags, what it defined before the
// include). These tests change that TU — its flags, its rank, its presence in the database — and
// require an incremental run to leave exactly what a clean index of the same tree holds.
#include "indexer/indexer.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace symdex;
using symdex::test::TempDir;

namespace {

struct Entry {
    std::string file;
    std::vector<std::string> flags;
};

void writeDb(const std::filesystem::path& dir, const std::vector<Entry>& entries) {
    std::string json = "[\n";
    for (size_t i = 0; i < entries.size(); ++i) {
        json += "  {\"directory\": \"" + dir.string() + "\", \"file\": \"" + entries[i].file +
                "\", \"arguments\": [\"clang++\", \"-std=c++17\"";
        for (const std::string& flag : entries[i].flags)
            json += ", \"" + flag + "\"";
        json += ", \"-c\", \"" + entries[i].file + "\"]}" + (i + 1 < entries.size() ? ",\n" : "\n");
    }
    test::writeFile(dir / "compile_commands.json", json + "]\n");
}

std::string dumpOf(const SymbolStore& store, const std::filesystem::path& root) {
    std::ostringstream out;
    dumpStore(store, out, root);
    return out.str();
}

/// A tree and its persistent store, indexed incrementally; clean() indexes the same tree into a
/// fresh store for comparison.
struct Tree {
    TempDir dir;
    std::unique_ptr<SymbolStore> store;
    Isolation isolation;
    std::chrono::milliseconds tuTimeout{0}; ///< 0: IndexOptions' default

    explicit Tree(Isolation mode) : isolation(mode) {
        StoreOptions options;
        options.directory = dir.path() / ".symdex";
        store = SymbolStore::open(options);
    }
    IndexSummary index(SymbolStore& into) const {
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions options;
        options.threads = 2;
        options.isolation = isolation;
        if (tuTimeout.count())
            options.tuTimeout = tuTimeout;
        return Indexer(into, options).run(*db);
    }
    IndexSummary index() { return index(*store); }
    std::string dump() const { return dumpOf(*store, dir.path()); }
    std::string clean() const {
        TempDir other;
        StoreOptions options;
        options.directory = other.path() / "store";
        auto fresh = SymbolStore::open(options);
        index(*fresh);
        return dumpOf(*fresh, dir.path());
    }
    bool holds(const std::string& name) const { return !store->resolveName(name).empty(); }
};

const char* kModalHeader = "#ifdef MODE_A\nvoid mode_a_fn();\n#else\nvoid mode_b_fn();\n#endif\n";
// a.cpp is the larger main file, so it ranks first and owns h.h.
const char* kBigA = "#include \"h.h\"\nvoid a() {}\n// padding padding padding padding\n";
const char* kSmallB = "#include \"h.h\"\nvoid b() {}\n";

} // namespace

TEST_CASE("a header is extracted again when its owner's flags change or its owner leaves",
          "[index][ownership]") {
    const Isolation mode = GENERATE(Isolation::Process, Isolation::InProcess);
    Tree tree(mode);
    test::writeFile(tree.dir / "h.h", kModalHeader);
    test::writeFile(tree.dir / "a.cpp", kBigA);
    test::writeFile(tree.dir / "b.cpp", kSmallB);
    writeDb(tree.dir.path(), {{"a.cpp", {"-DMODE_A"}}, {"b.cpp", {}}});
    tree.index();
    REQUIRE(tree.holds("mode_a_fn"));
    REQUIRE_FALSE(tree.holds("mode_b_fn"));
    REQUIRE(tree.dump() == tree.clean());

    SECTION("the owner drops the flag") {
        writeDb(tree.dir.path(), {{"a.cpp", {}}, {"b.cpp", {}}});
        IndexSummary run = tree.index();
        CHECK(run.tusParsed == 1);
        CHECK(tree.holds("mode_b_fn"));
        CHECK_FALSE(tree.holds("mode_a_fn"));
        CHECK(tree.dump() == tree.clean());
    }
    SECTION("the owner leaves the database: an up-to-date TU that includes the header takes it") {
        writeDb(tree.dir.path(), {{"b.cpp", {}}});
        IndexSummary run = tree.index();
        CHECK(run.tusRemoved == 1);
        CHECK(run.headersRecovered == 1);
        CHECK(tree.holds("mode_b_fn"));
        CHECK_FALSE(tree.holds("mode_a_fn"));
        CHECK(tree.dump() == tree.clean());
        CHECK(tree.index().tusParsed == 0);
    }
    SECTION("the owner shrinks below another includer, which now ranks first") {
        test::writeFile(tree.dir / "a.cpp", "#include \"h.h\"\n");
        tree.index();
        CHECK(tree.holds("mode_b_fn"));
        CHECK_FALSE(tree.holds("mode_a_fn"));
        CHECK(tree.dump() == tree.clean());
        CHECK(tree.index().tusParsed == 0);
    }
    SECTION("a new TU that ranks first takes the header over") {
        test::writeFile(tree.dir / "c.cpp", std::string(kBigA) + "// more padding, more\n");
        writeDb(tree.dir.path(), {{"a.cpp", {"-DMODE_A"}}, {"b.cpp", {}}, {"c.cpp", {}}});
        tree.index();
        CHECK(tree.holds("mode_b_fn"));
        CHECK_FALSE(tree.holds("mode_a_fn"));
        CHECK(tree.dump() == tree.clean());
    }
    SECTION("the owner defines the macro in its main file instead") {
        writeDb(tree.dir.path(), {{"a.cpp", {}}, {"b.cpp", {}}});
        test::writeFile(tree.dir / "a.cpp", std::string("#define MODE_A\n") + kBigA);
        tree.index();
        CHECK(tree.holds("mode_a_fn"));
        CHECK_FALSE(tree.holds("mode_b_fn"));
        CHECK(tree.dump() == tree.clean());
        test::writeFile(tree.dir / "a.cpp", std::string("#define MODE_B\n") + kBigA);
        tree.index();
        CHECK(tree.holds("mode_b_fn"));
        CHECK(tree.dump() == tree.clean());
    }
}

TEST_CASE("a run interrupted after the owner left the database leaves no header without an owner",
          "[index][ownership]") {
    const Isolation mode = GENERATE(Isolation::Process, Isolation::InProcess);
    Tree tree(mode);
    // The same contents whoever extracts it (LevelDB's headers are so): only the owner moves.
    test::writeFile(tree.dir / "h.h", "void shared_fn();\n");
    test::writeFile(tree.dir / "a.cpp", kBigA);
    test::writeFile(tree.dir / "b.cpp", kSmallB);
    writeDb(tree.dir.path(), {{"a.cpp", {}}, {"b.cpp", {}}});
    tree.index();
    REQUIRE(tree.dump() == tree.clean());

    writeDb(tree.dir.path(), {{"b.cpp", {}}});
    std::string error;
    auto db = loadCompileDatabase(tree.dir.path().string(), &error);
    REQUIRE(db);
    std::atomic<bool> cancel{true}; // as symdexd's SIGTERM does, before the owner is re-parsed
    IndexOptions options;
    options.threads = 2;
    options.isolation = tree.isolation;
    options.cancel = &cancel;
    Indexer(*tree.store, options).run(*db);

    tree.index();
    CHECK(tree.dump() == tree.clean());
    CHECK(tree.dump().find("owner -") == std::string::npos);
}

TEST_CASE("a TU that starts to fail or crash leaves nothing of what it extracted",
          "[index][ownership]") {
    Tree tree(Isolation::Process); // a parse past the timeout is stopped in its worker
    tree.tuTimeout = std::chrono::milliseconds(1500);
    test::writeFile(tree.dir / "h.h", kModalHeader);
    test::writeFile(tree.dir / "only_a.h", "#pragma once\nstruct OnlyA { int a; };\n");
    const std::string a = std::string("#include \"only_a.h\"\n") + kBigA;
    test::writeFile(tree.dir / "a.cpp", a);
    test::writeFile(tree.dir / "b.cpp", kSmallB);
    writeDb(tree.dir.path(), {{"a.cpp", {"-DMODE_A"}}, {"b.cpp", {}}});
    tree.index();
    REQUIRE(tree.holds("OnlyA"));
    REQUIRE(tree.holds("mode_a_fn"));
    REQUIRE(tree.dump() == tree.clean());

    // a.cpp now spins in constant evaluation until it is stopped: crashed ("timed out"), after
    // it read both headers. Its main file and only_a.h, which nothing else includes, are emptied;
    // h.h goes to b.cpp.
    test::writeFile(tree.dir / "a.cpp",
                    a + "constexpr long spin() { long x = 0; for (long i = 0; i < (1L << 40); ++i) "
                        "x += i % 7; return x; }\nconstexpr long slow = spin();\n");
    writeDb(tree.dir.path(),
            {{"a.cpp", {"-DMODE_A", "-fconstexpr-steps=2147483647"}}, {"b.cpp", {}}});
    CHECK(tree.index().tusCrashed == 1);
    CHECK_FALSE(tree.holds("OnlyA"));
    CHECK_FALSE(tree.holds("a"));
    CHECK(tree.holds("mode_b_fn"));
    const std::string crashed = tree.dump();
    CHECK(crashed.find("file a.cpp hash 0 symbols 0 references 0 owner -") != std::string::npos);
    CHECK(crashed.find("file only_a.h hash 0 symbols 0 references 0 owner -") != std::string::npos);
    CHECK(crashed == tree.clean());

    // Fails instead (libclang refuses the command): the same, and only_a.h is no longer read.
    test::writeFile(tree.dir / "a.cpp", a);
    writeDb(tree.dir.path(), {{"a.cpp", {"-std=bogus"}}, {"b.cpp", {}}});
    CHECK(tree.index().tusFailed == 1);
    CHECK(tree.dump() == tree.clean());

    // And back: everything as before.
    writeDb(tree.dir.path(), {{"a.cpp", {"-DMODE_A"}}, {"b.cpp", {}}});
    tree.index();
    CHECK(tree.holds("OnlyA"));
    CHECK(tree.holds("mode_a_fn"));
    CHECK(tree.dump() == tree.clean());
}
