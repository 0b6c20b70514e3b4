// Golden index cases on tests/fixtures/golden: a header shared by several TUs, namespaces,
// overloads, templates, macros, a class hierarchy and a TU with a syntax error. Plus incremental
// re-indexing of a copy of that tree.
#include "indexer/header_claims.h"
#include "indexer/indexer.h"
#include "store/encoding.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sched.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utime.h>

using namespace symdex;
using symdex::test::TempDir;

namespace {

const std::vector<std::string> kSources = {"src/circle.cpp", "src/util.cpp", "src/main.cpp",
                                           "src/broken.cpp"};
const std::vector<std::string> kFlags = {"-std=c++17", "-Iinclude"};

/// A copy of the golden fixture with its compile database and a store beside it.
struct GoldenTree {
    TempDir dir;
    std::unique_ptr<SymbolStore> store;

    GoldenTree() {
        test::copyFixture("golden", dir.path());
        test::writeCompileDb(dir.path(), kSources, kFlags);
        StoreOptions options;
        options.directory = dir.path() / ".symdex";
        store = SymbolStore::open(options);
    }

    IndexSummary index(unsigned threads = 2, SessionMode session = SessionMode::PerThread) {
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions options;
        options.threads = threads;
        options.session = session;
        Indexer indexer(*store, options);
        return indexer.run(*db);
    }

    std::string path(const std::string& rel) const { return dir / rel; }

    /// The one symbol with this qualified name (and kind, for overloads), asserted unique.
    uint64_t usr(const std::string& qualified) const {
        auto usrs = store->resolveName(qualified);
        REQUIRE(usrs.size() == 1);
        return usrs[0];
    }

    /// "rel/path:line:col" of each occurrence, sorted.
    std::vector<std::string> where(const std::vector<SymbolHit>& hits) const {
        std::vector<std::string> out;
        for (const SymbolHit& h : hits)
            out.push_back(relative(h.path) + ":" + std::to_string(h.symbol.location.line) + ":" +
                          std::to_string(h.symbol.location.column));
        std::sort(out.begin(), out.end());
        return out;
    }
    std::vector<std::string> where(const std::vector<ReferenceHit>& hits) const {
        std::vector<std::string> out;
        for (const ReferenceHit& h : hits)
            out.push_back(relative(h.path) + ":" + std::to_string(h.reference.location.line) + ":" +
                          std::to_string(h.reference.location.column));
        std::sort(out.begin(), out.end());
        return out;
    }
    std::string relative(const std::string& path) const {
        return std::filesystem::path(path).lexically_relative(dir.path()).string();
    }

    /// Every symbol and reference in the store, one line each, for the golden comparison.
    std::string dump() const {
        std::map<uint64_t, std::string> names;
        std::vector<std::string> paths;
        store->forEachFile([&](uint32_t, const FileRecord& f) { paths.push_back(f.path); });
        std::sort(paths.begin(), paths.end());
        for (const std::string& p : paths) {
            const std::vector<Symbol> symbols = store->fileSymbols(p).value();
            for (const Symbol& s : symbols)
                names[s.usrHash()] = s.qualifiedName;
        }
        std::ostringstream out;
        for (const std::string& p : paths) {
            const std::vector<Symbol> symbols = store->fileSymbols(p).value();
            const std::vector<Reference> refs = store->fileReferences(p).value();
            for (const Symbol& s : symbols)
                out << relative(p) << ":" << s.location.line << ":" << s.location.column << ": "
                    << kindDisplayName(s.kind, s.flags) << " " << s.qualifiedName
                    << (s.isDefinition() ? " [definition]" : "") << " extent "
                    << s.extent.begin.line << ":" << s.extent.begin.column << "-"
                    << s.extent.end.line << ":" << s.extent.end.column
                    << (s.signature.empty() ? "" : " | " + s.signature)
                    << (s.comment.empty() ? "" : " // " + s.comment) << "\n";
            auto nameOf = [&](uint64_t usrHash) {
                auto name = names.find(usrHash);
                return name == names.end() ? std::string("?") : name->second;
            };
            for (const Reference& r : refs)
                out << relative(p) << ":" << r.location.line << ":" << r.location.column << ": "
                    << roleName(r.roles) << " -> " << nameOf(r.usrHash)
                    << (r.container ? " in " + nameOf(r.container) : "") << "\n";
        }
        return out.str();
    }
};

void appendTo(const std::string& path, const std::string& text) {
    test::writeFile(path, test::readFile(path) + text);
}

} // namespace

TEST_CASE("golden: the fixture tree indexes to exactly the expected symbols", "[index][golden]") {
    GoldenTree tree;
    IndexSummary summary = tree.index();
    CHECK(summary.tusTotal == 4);
    CHECK(summary.tusParsed == 4);
    CHECK(summary.tusUpToDate == 0);
    CHECK(summary.tusWithErrors == 1);
    CHECK(summary.tusFailed == 0);
    CHECK(summary.tusCrashed == 0);
    // Four main files and the shared header, extracted once although four TUs include it (twice
    // when a lower-ranked TU took it over from a faster one; stored once either way).
    // A header taken over during its first owner's parse is dropped there, not published twice.
    CHECK(summary.filesExtracted >= 5);
    CHECK(summary.filesExtracted <= 5 + summary.claimTakeovers);

    const std::string golden = std::string(SYMDEX_FIXTURES_DIR) + "/golden.expected";
    const std::string actual = tree.dump();
    if (std::getenv("SYMDEX_UPDATE_GOLDEN"))
        test::writeFile(golden, actual);
    CHECK(actual == test::readFile(golden));
}

TEST_CASE("golden: definitions, declarations and references land where they should",
          "[index][golden]") {
    GoldenTree tree;
    tree.index();
    const SymbolStore& store = *tree.store;

    SECTION("a header shared by every TU holds each of its symbols once") {
        CHECK(tree.where(store.occurrences(tree.usr("geo::Circle"))) ==
              std::vector<std::string>{"include/shapes.h:26:7"});
        CHECK(store.fileSymbols(tree.path("include/shapes.h"))->size() == 33); // 4 parameters
    }
    SECTION("methods: declaration in the class, definition out of line") {
        auto area = store.occurrences(tree.usr("geo::Circle::area"));
        REQUIRE(area.size() == 2);
        CHECK(tree.where(area) ==
              std::vector<std::string>{"include/shapes.h:29:10", "src/circle.cpp:11:14"});
        CHECK(area[1].symbol.isDefinition() == (area[1].path == tree.path("src/circle.cpp")));
        CHECK(tree.where(store.occurrences(tree.usr("geo::Circle::Circle"))) ==
              std::vector<std::string>{"include/shapes.h:28:14", "src/circle.cpp:9:9"});
    }
    SECTION("overloads are distinct symbols with their own references") {
        auto scale = store.resolveName("geo::scale");
        REQUIRE(scale.size() == 2);
        std::map<std::string, uint64_t> byDefinition;
        for (uint64_t usr : scale)
            for (const SymbolHit& h : store.occurrences(usr))
                if (h.symbol.isDefinition())
                    byDefinition[tree.where({h})[0]] = usr;
        REQUIRE(byDefinition.size() == 2);
        const uint64_t intScale = byDefinition.at("src/util.cpp:5:5");
        const uint64_t doubleScale = byDefinition.at("src/util.cpp:7:8");
        CHECK(tree.where(store.references(intScale)) ==
              std::vector<std::string>{"src/broken.cpp:3:30", "src/main.cpp:7:28"});
        CHECK(tree.where(store.references(doubleScale)) ==
              std::vector<std::string>{"src/main.cpp:6:29"});
    }
    SECTION("templates") {
        auto clamp = store.occurrences(tree.usr("geo::clamp"));
        REQUIRE(clamp.size() == 1);
        CHECK(clamp[0].symbol.flags == (kTemplate | kDefinition));
        CHECK(clamp[0].symbol.kind == SymbolKind::Function);
        CHECK(tree.where(store.references(tree.usr("geo::clamp"))) ==
              std::vector<std::string>{"src/main.cpp:9:24"});
        auto box = store.occurrences(tree.usr("geo::Box"));
        REQUIRE(box.size() == 1);
        CHECK(kindDisplayName(box[0].symbol.kind, box[0].symbol.flags) == "class template");
    }
    SECTION("macros: definitions and expansions") {
        CHECK(tree.where(store.occurrences(tree.usr("GEO_PI"))) ==
              std::vector<std::string>{"include/shapes.h:4:9"});
        CHECK(tree.where(store.references(tree.usr("GEO_SQUARE"))) ==
              std::vector<std::string>{"src/circle.cpp:11:45"});
    }
    SECTION("a class hierarchy: the base class is referenced by its derived class") {
        CHECK(tree.where(store.references(tree.usr("geo::Shape"))) ==
              std::vector<std::string>{"include/shapes.h:21:14", "include/shapes.h:26:23",
                                       "src/circle.cpp:7:1", "src/circle.cpp:7:9",
                                       "src/main.cpp:3:30"});
    }
    SECTION("variables: declaration, definition, read and write uses") {
        const uint64_t counter = tree.usr("geo::counter");
        CHECK(tree.where(store.occurrences(counter)) ==
              std::vector<std::string>{"include/shapes.h:48:12", "src/circle.cpp:5:5"});
        auto refs = store.references(counter);
        REQUIRE(refs.size() == 2);
        CHECK(roleName(refs[0].reference.roles) == "read-write"); // ++counter in circle.cpp
        CHECK(roleName(refs[1].reference.roles) == "read");       // geo::counter in main.cpp
    }
    SECTION("nested namespaces qualify names") {
        CHECK(tree.where(store.occurrences(tree.usr("geo::detail::twice"))) ==
              std::vector<std::string>{"include/shapes.h:51:12"});
        CHECK(store.resolveName("detail::twice").size() == 1);
    }
    SECTION("a TU with a syntax error is stored with its error count and what parsed") {
        auto tu = store.tu(tree.path("src/broken.cpp"));
        REQUIRE(tu);
        CHECK(tu->status == TuStatus::Errors);
        CHECK(tu->errorCount == 2);
        CHECK(tu->firstError.find("broken.cpp:5:15: error: expected expression") !=
              std::string::npos);
        CHECK(tree.where(store.occurrences(tree.usr("survivor"))) ==
              std::vector<std::string>{"src/broken.cpp:3:5"});
    }
}

namespace {

/// "qualified name @ first site" of each symbol related to `qualified`.
std::vector<std::string> relatedTo(const GoldenTree& tree, const std::string& qualified,
                                   Relation relation) {
    std::vector<std::string> out;
    for (uint64_t usr : tree.store->resolveName(qualified))
        for (const Related& r : tree.store->related(usr, relation)) {
            std::string line = (r.symbol ? r.symbol->symbol.qualifiedName : "?") + " @";
            for (const ReferenceHit& site : r.sites)
                line += " " + tree.where(std::vector<ReferenceHit>{site}).front();
            out.push_back(line);
        }
    return out;
}

} // namespace

TEST_CASE("relations: callers, callees, bases, derived classes and overrides, both ways",
          "[index][relations]") {
    GoldenTree tree;
    tree.index();
    using V = std::vector<std::string>;
    CHECK(relatedTo(tree, "helper", Relation::Callers) == V{"main @ src/main.cpp:10:12"});
    CHECK(relatedTo(tree, "geo::detail::twice", Relation::Callers) ==
          V{"geo::scale @ src/util.cpp:5:39"});
    // A virtual call through the base: the caller of the method it names.
    CHECK(relatedTo(tree, "geo::Shape::area", Relation::Callers) ==
          V{"helper @ src/main.cpp:3:63"});
    CHECK(relatedTo(tree, "main", Relation::Callees) ==
          V{"geo::Circle::Circle @ src/main.cpp:6:17", "geo::scale @ src/main.cpp:6:29",
            "geo::scale @ src/main.cpp:7:28", "geo::clamp @ src/main.cpp:9:24",
            "geo::Box::get @ src/main.cpp:9:34", "helper @ src/main.cpp:10:12"});
    // A function without calls, and a class, have no callees; a variable's readers are no callers.
    CHECK(relatedTo(tree, "geo::detail::twice", Relation::Callees).empty());
    CHECK(relatedTo(tree, "geo::Circle", Relation::Bases) ==
          V{"geo::Shape @ include/shapes.h:26:23"});
    CHECK(relatedTo(tree, "geo::Shape", Relation::Derived) ==
          V{"geo::Circle @ include/shapes.h:26:23"});
    CHECK(relatedTo(tree, "geo::Shape", Relation::Bases).empty());
    CHECK(relatedTo(tree, "geo::Circle::area", Relation::Overrides) ==
          V{"geo::Shape::area @ include/shapes.h:29:10"});
    CHECK(relatedTo(tree, "geo::Shape::area", Relation::OverriddenBy) ==
          V{"geo::Circle::area @ include/shapes.h:29:10"});
    // The override is a relation, not a use: references() leaves it out.
    CHECK(tree.where(tree.store->references(tree.usr("geo::Shape::area"))) ==
          V{"src/main.cpp:3:63"});

    SECTION("removing the base class and the override leaves nothing stale, either way") {
        std::string header = test::readFile(tree.path("include/shapes.h"));
        auto replace = [&](const std::string& from, const std::string& to) {
            const size_t at = header.find(from);
            REQUIRE(at != std::string::npos);
            header.replace(at, from.size(), to);
        };
        replace("class Circle : public Shape {", "class Circle {");
        replace("Area area() const override;", "Area area() const;");
        test::writeFile(tree.path("include/shapes.h"), header);
        tree.index();
        CHECK(relatedTo(tree, "geo::Circle", Relation::Bases).empty());
        CHECK(relatedTo(tree, "geo::Shape", Relation::Derived).empty());
        CHECK(relatedTo(tree, "geo::Circle::area", Relation::Overrides).empty());
        CHECK(relatedTo(tree, "geo::Shape::area", Relation::OverriddenBy).empty());
        // The rest stands.
        CHECK(relatedTo(tree, "helper", Relation::Callers) == V{"main @ src/main.cpp:10:12"});
        const std::string dump = tree.dump();
        CHECK(dump.find("base ->") == std::string::npos);
        CHECK(dump.find("override ->") == std::string::npos);

        SECTION("and putting them back restores both directions") {
            replace("class Circle {", "class Circle : public Shape {");
            replace("Area area() const;", "Area area() const override;");
            test::writeFile(tree.path("include/shapes.h"), header);
            tree.index();
            CHECK(relatedTo(tree, "geo::Shape", Relation::Derived) ==
                  V{"geo::Circle @ include/shapes.h:26:23"});
            CHECK(relatedTo(tree, "geo::Shape::area", Relation::OverriddenBy) ==
                  V{"geo::Circle::area @ include/shapes.h:29:10"});
        }
    }
}

TEST_CASE(
    "relations: a call in a condition or in a local class's method has its function as caller",
    "[index][relations]") {
    GoldenTree tree;
    // libclang names the condition variable as the parent of the call in its initializer (gtest's
    // ASSERT_TRUE declares one), and reports a local class's method body twice, the second time
    // as the enclosing function's. The caller is the innermost function either way, as clangd's.
    appendTo(tree.path("src/main.cpp"), "int checked(const geo::Shape& s) {\n"
                                        "    if (const int c = helper(s)) return c;\n"
                                        "    return 0;\n"
                                        "}\n"
                                        "int wrapped(const geo::Shape& s) {\n"
                                        "    struct Local { int run(const geo::Shape& s) const { "
                                        "return helper(s); } };\n"
                                        "    return Local().run(s);\n"
                                        "}\n");
    tree.index();
    using V = std::vector<std::string>;
    V callers = relatedTo(tree, "helper", Relation::Callers);
    std::sort(callers.begin(), callers.end());
    CHECK(callers == V{"checked @ src/main.cpp:13:23", "main @ src/main.cpp:10:12",
                       "run @ src/main.cpp:17:64"});
    CHECK(relatedTo(tree, "wrapped", Relation::Callees) == V{"run @ src/main.cpp:18:20"});
}

TEST_CASE("a class a header and a main file both define: its hierarchy and hover use the header's",
          "[index][relations]") {
    GoldenTree tree;
    // As LevelDB's skiplist_test.cc defines its own leveldb::Comparator: a TU that does not
    // include shapes.h defines geo::Shape again, in a file whose path sorts first.
    test::writeFile(tree.path("a_first.cpp"), "namespace geo { struct Shape { int own; }; }\n"
                                              "int useShape() { return geo::Shape{1}.own; }\n");
    std::vector<std::string> sources(kSources.begin(), kSources.end());
    sources.push_back("a_first.cpp");
    test::writeCompileDb(tree.dir.path(), sources, kFlags);
    tree.index();
    const auto usrs = tree.store->resolveName("geo::Shape");
    REQUIRE(usrs.size() == 1);
    StoreSnapshot snapshot = tree.store->snapshot();
    REQUIRE(tree.where(snapshot.occurrences(usrs[0])) ==
            std::vector<std::string>{"a_first.cpp:1:24", "include/shapes.h:19:7"});
    const std::optional<SymbolHit> best = snapshot.bestOccurrence(usrs[0]);
    REQUIRE(best);
    CHECK(tree.relative(best->path) == "include/shapes.h");
    // Circle's base is the header's Shape.
    CHECK(relatedTo(tree, "geo::Circle", Relation::Bases) ==
          std::vector<std::string>{"geo::Shape @ include/shapes.h:26:23"});
}

TEST_CASE("a namespace a macro opens starts where the macro's definition spells it", "[index]") {
    GoldenTree tree;
    // fmt's FMT_BEGIN_NAMESPACE: clangd's definition of `fmt` is in the #define.
    test::writeFile(tree.path("include/ns.h"),
                    "#define NS_BEGIN namespace outer { inline namespace v1 {\n"
                    "#define NS_END } }\n"
                    "NS_BEGIN\n"
                    "int inside();\n"
                    "NS_END\n");
    appendTo(tree.path("src/main.cpp"),
             "#include \"ns.h\"\nint useOuter() { return outer::inside(); }\n");
    tree.index();
    const std::optional<TuRecord> tu = tree.store->tu(tree.path("src/main.cpp"));
    REQUIRE(tu);
    std::map<std::string, std::string> starts;
    for (const TuRecord::NamespaceStart& start : tu->namespaceStarts)
        starts[std::to_string(start.usrHash)] = tree.relative(start.path) + ":" +
                                                std::to_string(start.location.line) + ":" +
                                                std::to_string(start.location.column);
    CHECK(starts[std::to_string(hash64("c:@N@outer"))] == "include/ns.h:1:28");
    CHECK(starts[std::to_string(hash64("c:@N@outer@N@v1"))] == "include/ns.h:1:53");
    // A namespace written in place starts at its name.
    CHECK(starts[std::to_string(hash64("c:@N@geo"))] == "include/shapes.h:7:11");
}

TEST_CASE("a macro's definition uses the macros defined before it", "[index]") {
    GoldenTree tree;
    // fmtlib's `#define EXPECT_EQ_POSIX(expected, actual) EXPECT_EQ(expected, actual)`: clangd
    // lists EXPECT_EQ's use there; the preprocessing record has no expansion there.
    appendTo(tree.path("src/main.cpp"), "#define TWICE(x) GEO_SQUARE(x) + GEO_SQUARE(x)\n"
                                        "#define LATER() NOT_YET()\n"
                                        "#define NOT_YET() 1\n"
                                        "int twice = TWICE(2) + LATER();\n");
    tree.index();
    const std::string dump = tree.dump();
    CHECK(dump.find("src/main.cpp:12:18: reference -> GEO_SQUARE\n") != std::string::npos);
    CHECK(dump.find("src/main.cpp:12:34: reference -> GEO_SQUARE\n") != std::string::npos);
    // NOT_YET was not defined when LATER was: no use of it there (as the preprocessor sees it).
    CHECK(dump.find("src/main.cpp:13:17: reference") == std::string::npos);
    CHECK(dump.find("src/main.cpp:15:13: reference -> TWICE\n") != std::string::npos);

    // A macro of a header another TU extracts is known all the same (which TU extracts a header
    // must not change what a main file holds: fmtlib's EXPECT_CALL, from a gmock header).
    test::writeFile(tree.path("include/base.h"), "#define BASE(x) (x)\n");
    appendTo(tree.path("src/circle.cpp"), "#include \"base.h\"\n#define CIRCLE_USES BASE(1)\n");
    appendTo(tree.path("src/util.cpp"), "#include \"base.h\"\n#define UTIL_USES BASE(2)\n");
    tree.index(1); // one TU after the other: the second is refused base.h
    const std::string both = tree.dump();
    CHECK(both.find("src/circle.cpp") != std::string::npos);
    for (const char* file : {"src/circle.cpp", "src/util.cpp"}) {
        INFO(file);
        const std::string body = test::readFile(tree.path(file));
        const size_t line = size_t(std::count(body.begin(), body.end(), '\n'));
        CHECK(both.find(std::string(file) + ":" + std::to_string(line) + ":" +
                        std::to_string(std::string(file) == "src/util.cpp" ? 19 : 21) +
                        ": reference -> BASE\n") != std::string::npos);
    }
}

TEST_CASE("a TU's main file another TU includes is extracted by its own TU, in a worker too",
          "[index][claims]") {
    // fmtlib's posix-mock-test.cc includes ../src/os.cc, a TU of its own. The including TU ranks
    // first (larger) and is refused the file (it belongs to its own TU); a worker that parsed it
    // kept that refusal for the next TU, os.cc itself, which then extracted nothing of its main
    // file at 1 thread (at 2 threads another worker parsed it).
    std::map<std::string, std::string> dumps;
    for (Isolation isolation : {Isolation::InProcess, Isolation::Process}) {
        GoldenTree tree;
        test::writeFile(tree.path("src/big.cpp"),
                        "// " + std::string(4000, 'x') + "\n#include \"util.cpp\"\n");
        std::vector<std::string> sources(kSources.begin(), kSources.end());
        sources.push_back("src/big.cpp");
        test::writeCompileDb(tree.dir.path(), sources, kFlags);
        std::string error;
        auto db = loadCompileDatabase(tree.dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions options;
        options.threads = 1;
        options.isolation = isolation;
        Indexer indexer(*tree.store, options);
        const IndexSummary summary = indexer.run(*db);
        CHECK(summary.isolated == (isolation == Isolation::Process));
        const std::optional<std::vector<Symbol>> symbols =
            tree.store->fileSymbols(tree.path("src/util.cpp"));
        REQUIRE(symbols);
        CHECK_FALSE(symbols->empty());
        dumps[isolation == Isolation::Process ? "workers" : "in-process"] = tree.dump();
    }
    CHECK(dumps["workers"] == dumps["in-process"]);
}

TEST_CASE("each file's record says whether its indexed bytes are all ASCII, from a worker too",
          "[index]") {
    for (Isolation isolation : {Isolation::InProcess, Isolation::Process}) {
        INFO((isolation == Isolation::Process ? "workers" : "in-process"));
        GoldenTree tree;
        appendTo(tree.path("src/util.cpp"), "// caf\xC3\xA9\n");
        std::string error;
        auto db = loadCompileDatabase(tree.dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions options;
        options.isolation = isolation;
        Indexer indexer(*tree.store, options);
        indexer.run(*db);
        CHECK_FALSE(tree.store->file(tree.path("src/util.cpp")).value().asciiOnly);
        CHECK(tree.store->file(tree.path("src/circle.cpp")).value().asciiOnly);
        CHECK(tree.store->file(tree.path("include/shapes.h")).value().asciiOnly);

        // The high byte removed: the TU re-parses and the record follows.
        const std::string text = test::readFile(tree.path("src/util.cpp"));
        test::writeFile(tree.path("src/util.cpp"), text.substr(0, text.size() - 3) + "e\n");
        Indexer(*tree.store, options).run(*db);
        CHECK(tree.store->file(tree.path("src/util.cpp")).value().asciiOnly);
    }
}

TEST_CASE("every thread count gives the same store, with and without body skipping", "[index]") {
    GoldenTree reference;
    reference.index(1, SessionMode::None);
    const std::string expected = reference.dump();
    for (SessionMode mode : {SessionMode::PerThread, SessionMode::None}) {
        for (unsigned threads : {1u, 2u, 4u}) {
            GoldenTree tree;
            IndexSummary summary = tree.index(threads, mode);
            CHECK(summary.filesWithSkippedBodies == 0);
            CHECK(tree.dump() == expected);
        }
    }
    // A shared session indexes the same symbols; whether an owner finds bodies already parsed
    // depends on timing (indexer.h), and then the summary says so.
    GoldenTree shared;
    IndexSummary summary = shared.index(2, SessionMode::Shared);
    CHECK(shared.store->stats().symbols == reference.store->stats().symbols);
    if (summary.filesWithSkippedBodies == 0)
        CHECK(shared.dump() == expected);
}

TEST_CASE("incremental: only what changed is re-parsed, and changes are visible",
          "[index][incremental]") {
    GoldenTree tree;
    REQUIRE(tree.index().tusParsed == 4);

    SECTION("nothing changed: every TU is up to date") {
        IndexSummary again = tree.index();
        CHECK(again.tusUpToDate == 4);
        CHECK(again.tusParsed == 0);
        CHECK(again.filesExtracted == 0);
    }
    SECTION("a touched file whose contents did not change is not re-parsed") {
        const std::string util = tree.path("src/util.cpp");
        struct utimbuf times {
            1000000000, 1000000000
        };
        REQUIRE(utime(util.c_str(), &times) == 0);
        IndexSummary again = tree.index();
        CHECK(again.tusParsed == 0);
        // The new stamp was recorded: the next run does not even hash the file.
        CHECK(tree.store->file(util)->mtimeNs == int64_t(1000000000) * 1000000000);
    }
    SECTION("an edited source file: only its TU is re-parsed") {
        appendTo(tree.path("src/util.cpp"), "int tripled(int v) { return v * 3; }\n");
        IndexSummary again = tree.index();
        CHECK(again.tusUpToDate == 3);
        CHECK(again.tusParsed == 1);
        CHECK(again.filesExtracted == 1); // util.cpp; the unchanged header is not extracted again
        CHECK(tree.where(tree.store->occurrences(tree.usr("tripled"))) ==
              std::vector<std::string>{"src/util.cpp:10:5"});
        CHECK(tree.store->resolveName("geo::scale").size() == 2);
        CHECK(tree.store->stats().symbols == 55); // 12 of them locals and parameters, and its x

        // And removing it again leaves nothing stale.
        std::string text = test::readFile(tree.path("src/util.cpp"));
        text.resize(text.find("int tripled"));
        test::writeFile(tree.path("src/util.cpp"), text);
        CHECK(tree.index().tusParsed == 1);
        CHECK(tree.store->resolveName("tripled").empty());
        CHECK(tree.store->stats().symbols == 53);
    }
    SECTION("an edited header: every TU that includes it is re-parsed, the header extracted once") {
        const std::string header = tree.path("include/shapes.h");
        test::writeFile(header, "// one more line\n" + test::readFile(header));
        IndexSummary again = tree.index();
        CHECK(again.tusParsed == 4);
        CHECK(again.filesExtracted >= 5);
        CHECK(again.filesExtracted <= 5 + again.claimTakeovers);
        CHECK(tree.where(tree.store->occurrences(tree.usr("geo::Circle"))) ==
              std::vector<std::string>{"include/shapes.h:27:7"});
        CHECK(tree.where(tree.store->references(tree.usr("geo::Shape")))[1] ==
              "include/shapes.h:27:23");
    }
    SECTION("a changed compile command re-parses that TU") {
        test::writeCompileDb(tree.dir.path(), kSources, {"-std=c++17", "-Iinclude", "-DEXTRA"});
        CHECK(tree.index().tusParsed == 4);
        CHECK(tree.index().tusParsed == 0);
    }
    SECTION("a TU that left the compilation database is removed with its files") {
        test::writeCompileDb(tree.dir.path(), {"src/circle.cpp", "src/util.cpp", "src/main.cpp"},
                             kFlags);
        IndexSummary again = tree.index();
        CHECK(again.tusRemoved == 1);
        CHECK(again.filesRemoved == 1);
        CHECK(again.tusParsed == 0);
        CHECK(tree.store->resolveName("survivor").empty());
        CHECK_FALSE(tree.store->tu(tree.path("src/broken.cpp")));
        CHECK(tree.store->stats().tus == 3);
    }
    SECTION("a deleted header makes its TUs re-parse and leaves the store") {
        const std::string extra = tree.path("include/extra.h");
        test::writeFile(extra, "inline int extraFunction() { return 4; }\n");
        appendTo(tree.path("src/main.cpp"), "#include \"extra.h\"\n");
        CHECK(tree.index().tusParsed == 1);
        CHECK(tree.store->resolveName("extraFunction").size() == 1);
        std::string text = test::readFile(tree.path("src/main.cpp"));
        text.resize(text.find("#include \"extra.h\""));
        test::writeFile(tree.path("src/main.cpp"), text);
        std::filesystem::remove(extra);
        IndexSummary again = tree.index();
        CHECK(again.tusParsed == 1);
        CHECK(again.filesRemoved == 1);
        CHECK(tree.store->resolveName("extraFunction").empty());
        CHECK_FALSE(tree.store->file(extra));
    }
}

TEST_CASE("an interrupted incremental run leaves no TU stale", "[index][incremental]") {
    // x.cpp and y.cpp expand a macro of the header they share. After the header changes, a run
    // that commits x.cpp and stops has already updated the header's record; y.cpp must still be
    // judged against what *it* read (TuRecord::filesDigest), not against that shared record.
    TempDir dir;
    test::writeFile(dir / "h.h", "void f1();\nvoid f2();\n#define CALL f1\n");
    test::writeFile(dir / "x.cpp", "#include \"h.h\"\nvoid x() { CALL(); }\n");
    test::writeFile(dir / "y.cpp", "#include \"h.h\"\nvoid y() { CALL(); }\n");
    test::writeCompileDb(dir.path(), {"x.cpp", "y.cpp"}, {"-std=c++17"});
    StoreOptions storeOptions;
    storeOptions.directory = dir.path() / ".symdex";
    auto store = SymbolStore::open(storeOptions);
    std::string error;
    auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions options;
    options.threads = 1;
    REQUIRE(Indexer(*store, options).run(*db).tusParsed == 2);
    auto callers = [&](const std::string& name) {
        std::vector<std::string> files;
        for (uint64_t usr : store->resolveName(name))
            for (const ReferenceHit& hit : store->references(usr))
                files.push_back(std::filesystem::path(hit.path).filename().string());
        std::sort(files.begin(), files.end());
        return files;
    };
    REQUIRE(callers("f1") == std::vector<std::string>{"x.cpp", "y.cpp"});

    test::writeFile(dir / "h.h", "void f1();\nvoid f2();\n#define CALL f2\n");
    IndexOptions interrupted = options;
    interrupted.stopAfterTusForTest = 1;
    IndexSummary first = Indexer(*store, interrupted).run(*db);
    REQUIRE(first.tusParsed == 1);
    REQUIRE(first.cancelled);

    IndexSummary second = Indexer(*store, options).run(*db);
    CHECK(second.tusUpToDate == 1);
    CHECK(second.tusParsed == 1);
    CHECK(callers("f1").empty());
    CHECK(callers("f2") == std::vector<std::string>{"x.cpp", "y.cpp"});
    CHECK(Indexer(*store, options).run(*db).tusParsed == 0);
}

TEST_CASE("a TU libclang cannot parse fails alone", "[index]") {
    GoldenTree tree;
    // An unknown language makes the driver refuse the command: that TU fails, the rest index.
    std::string json = test::readFile(tree.dir / "compile_commands.json");
    json.replace(json.find("\"-std=c++17\""), 12, "\"-xno-such-language\"");
    test::writeFile(tree.dir / "compile_commands.json", json);
    IndexSummary summary = tree.index();
    CHECK(summary.tusParsed == 4);
    CHECK(summary.tusFailed == 1);
    REQUIRE(summary.failures.size() == 2);
    CHECK(tree.store->resolveName("geo::Circle").size() == 1);
    CHECK(tree.store->tu(tree.path("src/circle.cpp"))->status == TuStatus::Failed);
    // A failed TU is retried by the next run.
    CHECK(tree.index().tusParsed == 1);
}

// Run by the next test in a process of its own (test::runChildTest says why).
TEST_CASE("child: index $SYMDEX_CRASH_TREE, whose main.cpp crashes libclang", "[.][crash-child]") {
    const char* dir = std::getenv("SYMDEX_CRASH_TREE");
    REQUIRE(dir != nullptr);
    StoreOptions options;
    options.directory = std::filesystem::path(dir) / ".symdex";
    auto store = SymbolStore::open(options);
    std::string error;
    auto db = loadCompileDatabase(dir, &error);
    REQUIRE(db);
    IndexOptions indexOptions;
    indexOptions.threads = 2;
    IndexSummary first = Indexer(*store, indexOptions).run(*db);
    REQUIRE(first.tusParsed == 4);
    REQUIRE(first.tusFailed + first.tusCrashed == 1);
    WARN("headers recovered from the crashed TU: " << first.headersRecovered);
    // libclang's crash recovery turns the crash into a failed parse, which the next run tries
    // again (and which fails alone again). Where the recovery itself crashes (it does under
    // ThreadSanitizer, in ~CrashRecoveryContext), the worker dies twice and the TU is recorded as
    // crashed: not parsed again until something it read changes, so that no run crashes on it.
    const TuStatus status = store->tu(std::filesystem::path(dir) / "src/main.cpp")->status;
    IndexSummary second = Indexer(*store, indexOptions).run(*db);
    if (status == TuStatus::Failed) {
        REQUIRE(second.tusParsed == 1);
        REQUIRE(second.tusFailed + second.tusCrashed == 1);
    } else {
        REQUIRE(status == TuStatus::Crashed);
        REQUIRE(second.tusParsed == 0);
        REQUIRE(second.tusUpToDate == second.tusTotal);
    }
}

TEST_CASE("a TU that crashes libclang fails alone", "[index]") {
    TempDir dir;
    test::copyFixture("golden", dir.path());
    test::writeCompileDb(dir.path(), kSources, kFlags);
    // clang's own debugging pragma crashes the frontend; libclang's crash recovery turns that
    // into a failed call (clang_indexSourceFile reports a crash as CXError_Failure). The comment
    // makes main.cpp the largest file, so its TU starts first and owns shapes.h; the standard
    // headers keep it busy after that, so that the other TUs reach shapes.h, claimed, and skip it
    // before the crash gives it back (Indexer::extractOrphans must then extract it).
    const std::string main = dir / "src/main.cpp";
    test::writeFile(main, test::readFile(main) + "\n#include <map>\n#include <regex>\n" + "/*" +
                              std::string(20000, '.') + "*/\n" + "#pragma clang __debug crash\n");
    REQUIRE(test::runChildTest("[crash-child]", {"SYMDEX_CRASH_TREE=" + dir.path().string()},
                               /*crashesLibclang=*/true) == 0);

    StoreOptions options;
    options.directory = dir.path() / ".symdex";
    options.readOnly = true;
    auto store = SymbolStore::open(options);
    CHECK(store->tu(main)->status != TuStatus::Ok);
    CHECK(store->tu(dir / "src/circle.cpp")->status == TuStatus::Ok);
    // The other TUs are indexed, the header they share among them.
    auto circle = store->resolveName("geo::Circle");
    REQUIRE(circle.size() == 1);
    auto hits = store->occurrences(circle[0]);
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].path == dir / "include/shapes.h");
    CHECK(hits[0].symbol.location.line == 26);
    CHECK(store->fileSymbols(dir / "src/util.cpp").has_value());
}

/// The scheduling policy of thread `tid` of this process (field 41 of /proc/self/task/TID/stat).
int policyOf(pid_t tid) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2)); // after "pid (comm) "
    std::string field;
    for (int i = 3; i <= 41 && fields >> field; ++i) {
    }
    return std::stoi(field);
}

TEST_CASE("low priority: the parse threads run under SCHED_IDLE", "[index]") {
    GoldenTree tree;
    const pid_t caller = gettid(); // takes part in the parse (static partitioner)
    REQUIRE(policyOf(caller) == SCHED_OTHER);
    std::atomic<bool> done{false}, sawIdle{false};
    std::thread watcher([&] {
        while (!done.load()) {
            if (policyOf(caller) == SCHED_IDLE)
                sawIdle = true;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    std::string error;
    auto db = loadCompileDatabase(tree.dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions options;
    options.threads = 2;
    options.lowPriority = true;
    const IndexSummary summary = Indexer(*tree.store, options).run(*db);
    done = true;
    watcher.join();
    CHECK(summary.tusParsed == 4);
    CHECK(sawIdle.load());
}

TEST_CASE("claims: each file goes to one TU, unless the store has it", "[index][claims]") {
    TempDir dir;
    const std::string a = dir / "a.h", b = dir / "b.h", c = dir / "c.h";
    test::writeFile(a, "int a;\n");
    test::writeFile(b, "int b;\n");
    test::writeFile(c, "int c;\n");
    FileStamps stamps;
    std::unordered_map<std::string, uint64_t> stored{{b, stampFile(b)->contentHash},
                                                     {c, stampFile(c)->contentHash}};
    // b.h was extracted by the up-to-date TU of rank 1; c.h's owner was parsed again or left.
    std::unordered_map<std::string, size_t> kept{{b, 1}};
    HeaderClaims claims(stamps, stored, kept, 3, /*force=*/false);
    CHECK(claims.claim(a, 0));       // first comer extracts
    CHECK(claims.claim(a, 0));       // and keeps it
    CHECK_FALSE(claims.claim(a, 1)); // higher ranks skip it
    CHECK_FALSE(claims.claim(b, 2)); // the store holds what its owner, rank 1, extracted
    CHECK(claims.claim(b, 0));       // but rank 0 now owns it
    CHECK(claims.claim(c, 2));       // current contents, no owner left: extracted again
    CHECK_FALSE(claims.claim(dir / "missing.h", 1));
    claims.release(0); // TU 0 failed: another TU may extract a.h
    CHECK(claims.claim(a, 2));
    CHECK(claims.takeovers() == 0);
    CHECK(claims.claim(a, 1)); // a lower rank takes it over, whatever the timing
    CHECK_FALSE(claims.claim(a, 2));
    CHECK(claims.takeovers() == 1);
    const std::string main = dir / "main.cc";
    test::writeFile(main, "int m;\n");
    claims.preclaim(main, 2); // a main file stays with its own TU
    CHECK_FALSE(claims.claim(main, 0));
    CHECK(claims.claim(main, 2));

    HeaderClaims forced(stamps, stored, kept, 1, /*force=*/true);
    CHECK(forced.claim(b, 0));
}

TEST_CASE("libclang's builtin headers and the C++ standard library resolve", "[index]") {
    TempDir dir;
    test::writeFile(dir / "std.cpp",
                    "#include <stddef.h>\n#include <stdarg.h>\n#include <vector>\n"
                    "#include <ranges>\n"
                    "size_t count(const std::vector<int>& v) {\n"
                    "    auto even = v | std::views::filter([](int i) { return i % 2 == 0; });\n"
                    "    return size_t(std::ranges::distance(even));\n}\n");
    test::writeCompileDb(dir.path(), {"std.cpp"}, {"-std=c++20"});
    StoreOptions options;
    options.directory = dir.path() / ".symdex";
    auto store = SymbolStore::open(options);
    std::string error;
    auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions indexOptions;
    indexOptions.threads = 1;
    IndexSummary summary = Indexer(*store, indexOptions).run(*db);
    auto tu = store->tu(dir / "std.cpp");
    REQUIRE(tu);
    INFO(tu->firstError);
    CHECK(tu->errorCount == 0);
    CHECK(tu->status == TuStatus::Ok);
    CHECK(summary.tusWithErrors == 0);
    // System headers are indexed too: std::vector is found, and used from std.cpp.
    auto vector = store->resolveName("std::vector");
    REQUIRE(!vector.empty());
    bool usedHere = false;
    for (uint64_t usr : vector)
        for (const ReferenceHit& ref : store->references(usr))
            usedHere |= ref.path == dir / "std.cpp" && ref.reference.location.line == 5;
    CHECK(usedHere);
}

TEST_CASE("open files first: urgent TUs leave the store exactly as a run without them",
          "[index][urgent]") {
    GoldenTree reference;
    reference.index(1);
    const std::string expected = reference.dump();
    // Every TU asked for at once, smallest main file (the last rank) first: the urgent order is
    // the reverse of the rank order, so headers are claimed by the wrong TU first and taken over.
    std::vector<std::string> bySize = kSources;
    std::sort(bySize.begin(), bySize.end(), [&](const std::string& a, const std::string& b) {
        return std::filesystem::file_size(reference.path(a)) <
               std::filesystem::file_size(reference.path(b));
    });
    std::string error;
    for (Isolation isolation : {Isolation::InProcess, Isolation::Process}) {
        for (unsigned threads : {1u, 2u}) {
            INFO((isolation == Isolation::Process ? "workers, " : "in-process, ")
                 << threads << " thread(s)");
            GoldenTree tree;
            auto db = loadCompileDatabase(tree.dir.path().string(), &error);
            REQUIRE(db);
            std::atomic<int> progressed{0};
            IndexOptions options;
            options.threads = threads;
            options.isolation = isolation;
            options.progressed = [&] { ++progressed; };
            Indexer indexer(*tree.store, options);
            for (const std::string& rel : bySize)
                indexer.prioritize(tree.path(rel));
            CHECK(indexer.fileState(tree.path("src/main.cpp")) == FileState::Planning);
            std::thread urgent([&] { indexer.serveUrgent(); });
            const IndexSummary summary = indexer.run(*db);
            urgent.join();
            CHECK(summary.tusParsed == kSources.size());
            CHECK(summary.isolated == (isolation == Isolation::Process));
            CHECK(summary.filesWithSkippedBodies == 0);
            CHECK(indexer.fileState(tree.path("src/main.cpp")) == FileState::Ready);
            CHECK(progressed >= int(kSources.size()) + 2); // planned, each TU, parse phase over
            CHECK(tree.dump() == expected);
            indexer.serveUrgent(); // after the run: returns at once
        }
    }

    // A header asks for the TU that owns it in the store: edited, it is re-extracted first, and
    // the store is what a clean index of the edited tree holds.
    GoldenTree tree;
    tree.index(2);
    appendTo(tree.path("include/shapes.h"), "\nnamespace geo { int addedLater(); }\n");
    auto db = loadCompileDatabase(tree.dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions options;
    options.threads = 1;
    Indexer indexer(*tree.store, options);
    indexer.prioritize(tree.path("include/shapes.h"));
    std::thread urgent([&] { indexer.serveUrgent(); });
    indexer.run(*db);
    urgent.join();
    CHECK(tree.where(tree.store->occurrences(tree.usr("geo::addedLater"))) ==
          std::vector<std::string>{"include/shapes.h:56:21"});
    GoldenTree clean;
    appendTo(clean.path("include/shapes.h"), "\nnamespace geo { int addedLater(); }\n");
    clean.index(1);
    CHECK(tree.dump() == clean.dump());
}

TEST_CASE("a header seen differently by two TUs is extracted from the same one at any thread count",
          "[index][claims]") {
    // ctx.h declares onlyInA() or onlyInB() depending on a macro. a.cpp is larger, so it is
    // scheduled first (rank 0) and owns ctx.h; but it reaches the #include late, after thousands
    // of lines, so with two threads b.cpp usually reaches ctx.h first. The store must still hold
    // a.cpp's view, as a single-threaded run does.
    TempDir dir;
    test::writeFile(dir / "ctx.h", "#pragma once\n#ifdef FLAVOR_A\nint onlyInA();\n#else\n"
                                   "int onlyInB();\n#endif\n");
    std::string a = "#define FLAVOR_A\n";
    for (int i = 0; i < 4000; ++i)
        a += "template <typename T> T filler" + std::to_string(i) + "(T t) { return t + " +
             std::to_string(i) + "; }\n";
    a += "#include \"ctx.h\"\nint a() { return onlyInA(); }\n";
    test::writeFile(dir / "a.cpp", a);
    test::writeFile(dir / "b.cpp", "#include \"ctx.h\"\nint b() { return onlyInB(); }\n");
    test::writeCompileDb(dir.path(), {"b.cpp", "a.cpp"}, {"-std=c++17"});
    std::string error;
    auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    size_t takeovers = 0;
    for (int round = 0; round < 6; ++round) {
        const unsigned threads = round == 0 ? 1 : 2;
        StoreOptions options;
        options.directory = dir.path() / ("store" + std::to_string(round));
        auto store = SymbolStore::open(options);
        IndexOptions indexOptions;
        indexOptions.threads = threads;
        takeovers += Indexer(*store, indexOptions).run(*db).claimTakeovers;
        auto symbols = store->fileSymbols(dir / "ctx.h");
        REQUIRE(symbols);
        REQUIRE(symbols->size() == 1);
        CHECK((*symbols)[0].name == "onlyInA");
    }
    WARN("ctx.h was taken over from b.cpp in " << takeovers << " of 5 two-thread runs");
}
