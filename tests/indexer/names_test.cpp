// Qualified names as C++ spells them, on tests/fixtures/names: linkage specifications, anonymous
// and inline namespaces, lambdas, template specializations (full and partial), operators,
// conversion functions, enumerators (scoped and unscoped), unnamed records and macros. The
// expected names are clangd-19's workspace/symbol answers for the same symbols (container "::"
// name); the one deliberate difference is noted where it is asserted (docs/names.md).
#include "indexer/indexer.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

using namespace symdex;
using symdex::test::TempDir;

namespace {

/// The names fixture indexed into a fresh store.
struct NamesTree {
    TempDir dir;
    std::unique_ptr<SymbolStore> store;

    NamesTree() {
        test::copyFixture("names", dir.path());
        test::writeCompileDb(dir.path(), {"names.cpp"}, {"-std=c++17"});
        StoreOptions options;
        options.directory = dir.path() / ".symdex";
        store = SymbolStore::open(options);
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions indexOptions;
        indexOptions.threads = 1;
        const IndexSummary summary = Indexer(*store, indexOptions).run(*db);
        REQUIRE(summary.tusParsed == 1);
        REQUIRE(summary.tusWithErrors == 0);
    }

    /// "line:col qualified name" of every symbol stored for `file`, in source order.
    /// What clangd's index holds (its symbols), or the locals and parameters it does not.
    std::vector<std::string> names(const std::string& file, bool locals = false) const {
        std::vector<std::string> out;
        const std::vector<Symbol> symbols = store->fileSymbols(dir / file).value();
        for (const Symbol& s : symbols)
            if (s.isLocal() == locals)
                out.push_back(std::to_string(s.location.line) + ":" +
                              std::to_string(s.location.column) + " " + s.qualifiedName);
        return out;
    }

    /// The qualified names `name` resolves to, as `symdex def NAME` looks them up.
    std::vector<std::string> resolve(const std::string& name) const {
        std::vector<std::string> out;
        for (uint64_t usrHash : store->resolveName(name))
            for (const SymbolHit& hit : store->occurrences(usrHash))
                out.push_back(hit.symbol.qualifiedName);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }
};

std::string joined(const std::vector<std::string>& lines) {
    std::ostringstream out;
    for (const std::string& line : lines)
        out << line << "\n";
    return out.str();
}

} // namespace

TEST_CASE("names: linkage specifications add nothing to a qualified name", "[index][names]") {
    NamesTree tree;
    const std::vector<std::string> names = tree.names("names.cpp");
    for (const char* expected : {"7:6 c_api_open", "8:5 c_api_count", "10:17 c_api_close",
                                 "12:5 cxx_linkage_fn", "16:16 ns::c_in_ns", "18:8 ns::InLinkage",
                                 "19:10 ns::InLinkage::method", "25:5 ns::nested_linkage"})
        CHECK(std::count(names.begin(), names.end(), expected) == 1);
    CHECK(tree.resolve("ns::c_in_ns") == std::vector<std::string>{"ns::c_in_ns"});
    CHECK(tree.resolve("c_api_open") == std::vector<std::string>{"c_api_open"});
    CHECK(tree.resolve("ns::InLinkage::method") ==
          std::vector<std::string>{"ns::InLinkage::method"});
}

TEST_CASE("names: every kind of scope is spelled as clangd spells it", "[index][names]") {
    NamesTree tree;
    // clangd-19 gives the members of a partial specialization the container
    // "tmpl::Box<type-parameter-0-0 *>"; symdex spells the parameter as written (docs/names.md).
    const std::vector<std::string> expected = {
        "7:6 c_api_open",
        "8:5 c_api_count",
        "10:17 c_api_close",
        "12:5 cxx_linkage_fn",
        "15:11 ns",
        "16:16 ns::c_in_ns",
        "18:8 ns::InLinkage",
        "19:10 ns::InLinkage::method",
        "20:10 ns::InLinkage::Mode",
        "20:17 ns::InLinkage::ModeA",
        "20:24 ns::InLinkage::ModeB",
        "25:5 ns::nested_linkage",
        "31:5 hidden_counter",
        "32:8 Hidden",
        "33:10 Hidden::run",
        "37:11 outer",
        "39:5 outer::inner_hidden",
        "41:18 outer::v1",
        "42:8 outer::Versioned",
        "43:9 outer::Versioned::value",
        "45:5 outer::versioned_fn",
        "49:11 lambdas",
        "50:6 lambdas::square",
        "51:8 lambdas::WithLambda",
        "52:27 lambdas::WithLambda::twice",
        "56:11 tmpl",
        "57:30 tmpl::Box",
        "58:7 tmpl::Box::item",
        "59:7 tmpl::Box::get",
        "61:20 tmpl::Box<int>",
        "62:9 tmpl::Box<int>::item",
        "63:9 tmpl::Box<int>::get",
        "65:30 tmpl::Box<T *>",
        "66:8 tmpl::Box<T *>::item",
        "67:8 tmpl::Box<T *>::get",
        "69:25 tmpl::clamp",
        "70:17 tmpl::clamp",
        "73:11 ops",
        "74:8 ops::Num",
        "75:9 ops::Num::v",
        "76:10 ops::Num::operator==",
        "77:10 ops::Num::operator+=",
        "81:9 ops::Num::operator()",
        "82:14 ops::Num::operator bool",
        "83:5 ops::Num::operator int",
        "84:5 ops::Num::~Num",
        "86:5 ops::operator+",
        "89:11 enums",
        "90:6 enums::Plain",
        "90:14 enums::PlainA",
        "90:22 enums::PlainB",
        "91:12 enums::Scoped",
        "91:21 enums::Scoped::ScopedA",
        "91:30 enums::Scoped::ScopedB",
        "92:8 enums::Holder",
        "93:10 enums::Holder::Inner",
        "93:18 enums::Holder::InnerA",
        "94:16 enums::Holder::InnerScoped",
        "94:30 enums::Holder::InnerScoped::InnerScopedA",
        "96:8 enums::AnonA",
        "96:15 enums::AnonB",
        "99:8 WithUnnamed",
        "101:13 WithUnnamed::(anonymous union)::asInt",
        "102:15 WithUnnamed::(anonymous union)::asFloat",
        "105:13 WithUnnamed::(anonymous struct)::inner",
        "106:7 WithUnnamed::unnamedField",
        "109:5 use",
    };
    CHECK(joined(tree.names("names.cpp")) == joined(expected));
    // Parameters of the functions, lambdas and operators defined there: by their own name.
    CHECK(joined(tree.names("names.cpp", /*locals=*/true)) ==
          joined({"50:22 x", "52:42 x", "69:33 v", "70:32 v", "76:32 other", "77:32 other",
                  "81:24 x", "86:19 a", "86:26 b"}));
    // Macros: clangd's index leaves main-file macros out; header ones are global names.
    CHECK(joined(tree.names("names.h")) == joined({"4:9 NAMES_SQUARE", "5:9 NAMES_LIMIT"}));
}

TEST_CASE(
    "names: specializations, unscoped enumerators and hidden scopes resolve by their C++ names",
    "[index][names]") {
    NamesTree tree;
    CHECK(tree.resolve("tmpl::Box<int>::get") == std::vector<std::string>{"tmpl::Box<int>::get"});
    CHECK(tree.resolve("tmpl::Box::get") == std::vector<std::string>{"tmpl::Box::get"});
    CHECK(tree.resolve("enums::PlainA") == std::vector<std::string>{"enums::PlainA"});
    CHECK(tree.resolve("enums::Scoped::ScopedA") ==
          std::vector<std::string>{"enums::Scoped::ScopedA"});
    CHECK(tree.resolve("outer::versioned_fn") == std::vector<std::string>{"outer::versioned_fn"});
    CHECK(tree.resolve("Hidden::run") == std::vector<std::string>{"Hidden::run"});
}

namespace {

/// What a workspace/symbol answer shows of each match, one line each.
std::vector<std::string> shown(const std::vector<NameMatch>& matches) {
    std::vector<std::string> out;
    for (const NameMatch& m : matches) {
        const Symbol& s = m.best.symbol;
        out.push_back(std::to_string(int(m.rank)) + " " + s.qualifiedName + " (" + s.name + ") " +
                      std::to_string(int(s.kind)) + "/" + std::to_string(int(s.flags)) + " " +
                      m.best.path + ":" + std::to_string(s.location.line) + ":" +
                      std::to_string(s.location.column) + " x" + std::to_string(m.occurrences));
    }
    return out;
}

/// Queries of every kind for each name the store holds: the name, its lower case, a prefix,
/// a piece from inside it and the initials of its words.
std::vector<std::string> queriesOf(const SymbolStore& store) {
    std::set<std::string> queries{""};
    store.forEachFile([&](uint32_t, const FileRecord& file) {
        for (const Symbol& s : store.fileSymbols(file.path).value_or(std::vector<Symbol>{})) {
            const std::string& n = s.name;
            queries.insert(n);
            queries.insert(s.qualifiedName);
            std::string lower = n;
            std::transform(lower.begin(), lower.end(), lower.begin(),
                           [](unsigned char c) { return char(std::tolower(c)); });
            queries.insert(lower);
            queries.insert(n.substr(0, 3));
            if (n.size() > 5)
                queries.insert(n.substr(2, 4));
            std::string initials;
            for (size_t i = 0; i < n.size(); ++i)
                if (std::isalpha(static_cast<unsigned char>(n[i])) &&
                    (i == 0 || n[i - 1] == '_' || std::isupper(static_cast<unsigned char>(n[i]))))
                    initials += n[i];
            if (initials.size() >= 2)
                queries.insert(initials);
        }
    });
    return {queries.begin(), queries.end()};
}

/// Checks that brief searches answer each query as full ones do; returns how many answers
/// came from summaries (a brief answer without the USR string a decoded block gives).
template <typename Store>
size_t briefAnswersAlike(const Store& store, const std::vector<std::string>& queries,
                         size_t* answers = nullptr) {
    size_t summarized = 0;
    for (const std::string& q : queries) {
        INFO("query '" << q << "'");
        const std::vector<NameMatch> brief = store.findSymbols(q, 1000, NameDetail::Brief);
        CHECK(shown(brief) == shown(store.findSymbols(q, 1000, NameDetail::Full)));
        for (const NameMatch& m : brief)
            summarized += m.best.symbol.usr.empty();
        if (answers)
            *answers += brief.size();
    }
    return summarized;
}

} // namespace

TEST_CASE("names: workspace/symbol's brief search answers from the declarations' summaries what "
          "decoding them answers, and never from summaries of blocks a re-index rewrote",
          "[index][names]") {
    NamesTree tree;
    const std::vector<std::string> queries = queriesOf(*tree.store);
    REQUIRE(queries.size() > 200);
    // No summaries yet: every block decoded.
    CHECK(briefAnswersAlike(*tree.store, queries) == 0);
    auto everyAnswer = [&] {
        std::vector<std::string> out;
        for (const std::string& q : queries)
            for (const std::string& line : shown(tree.store->findSymbols(q, 1000)))
                out.push_back(q + ": " + line);
        return out;
    };
    const std::vector<std::string> unprepared = everyAnswer();

    const SummaryStats first = tree.store->prepareSummaries().value();
    // The candidates' names now come from the summaries too (View::indexedName): the same
    // answers.
    CHECK(everyAnswer() == unprepared);
    CHECK(first.blocks > 0);
    CHECK(first.decoded == first.blocks);
    CHECK(first.copied == 0);
    // Every declaration of the fixture can be summarized (name_index_test has those that
    // cannot).
    size_t answers = 0;
    const size_t fromSummaries = briefAnswersAlike(*tree.store, queries, &answers);
    CHECK(fromSummaries > 400);
    CHECK(fromSummaries == answers);

    // Nothing changed: every summary kept.
    const SummaryStats again = tree.store->prepareSummaries().value();
    CHECK(again.copied == first.blocks);
    CHECK(again.decoded == 0);
    CHECK(again.rows == first.rows);

    // Lines inserted at the top of names.cpp: each of its declarations moves, each of its
    // blocks is rewritten (names.h's are not). Searches before the summaries are made again
    // must not show the old lines (the summaries no longer match those blocks' bytes) ...
    const std::filesystem::path header = tree.dir / "names.cpp";
    std::stringstream text;
    text << std::ifstream(header).rdbuf();
    std::ofstream(header) << "// moved\n// down\n" << text.str();
    std::string error;
    auto db = loadCompileDatabase(tree.dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions indexOptions;
    indexOptions.threads = 1;
    REQUIRE(Indexer(*tree.store, indexOptions).run(*db).tusParsed == 1);
    CHECK(briefAnswersAlike(*tree.store, queries) < fromSummaries);
    // ... and after, the moved blocks are decoded again and the others kept.
    const SummaryStats moved = tree.store->prepareSummaries().value();
    CHECK(moved.decoded > 0);
    CHECK(moved.copied > 0);
    CHECK(moved.copied + moved.decoded == moved.blocks);
    CHECK(briefAnswersAlike(*tree.store, queries) == fromSummaries);
}

TEST_CASE("names: the summaries know each file's path and whether the bytes indexed were ASCII, "
          "for their own snapshot only",
          "[index][names]") {
    TempDir dir;
    // A header with a non-ASCII comment before a declaration: its columns need converting to
    // UTF-16; the main file's do not.
    test::writeFile(dir / "wide.h", "// caf\xc3\xa9\nint wideThing(int);\n");
    test::writeFile(dir / "plain.cpp", "#include \"wide.h\"\nint plainThing() { return 1; }\n");
    test::writeCompileDb(dir.path(), {"plain.cpp"}, {"-std=c++17"});
    StoreOptions options;
    options.directory = dir.path() / ".symdex";
    std::unique_ptr<SymbolStore> store = SymbolStore::open(options);
    std::string error;
    auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions indexOptions;
    indexOptions.threads = 1;
    REQUIRE(Indexer(*store, indexOptions).run(*db).tusParsed == 1);
    const std::string plain = dir / "plain.cpp", wide = dir / "wide.h";

    // Not prepared: nothing known without reading the records.
    CHECK_FALSE(store->snapshot().indexedAscii(plain).has_value());

    store->prepareSummaries();
    {
        const StoreSnapshot snapshot = store->snapshot();
        CHECK(snapshot.indexedAscii(plain) == std::optional<bool>(true));
        CHECK(snapshot.indexedAscii(wide) == std::optional<bool>(false));
        CHECK_FALSE(snapshot.indexedAscii(dir / "absent.h").has_value());
        // Paths of brief answers come from the summaries' table: the same as whole ones.
        const std::vector<NameMatch> brief = snapshot.findSymbols("Thing", 10, NameDetail::Brief);
        const std::vector<NameMatch> full = snapshot.findSymbols("Thing", 10, NameDetail::Full);
        REQUIRE(brief.size() == 2);
        REQUIRE(full.size() == 2);
        for (size_t i = 0; i < brief.size(); ++i)
            CHECK(brief[i].best.path == full[i].best.path);
        CHECK(brief[0].best.path == plain);
        CHECK(brief[1].best.path == wide);
    }

    // The header made ASCII and re-indexed: the summaries are of the snapshot before, and say
    // nothing of this one's files until the next pass.
    test::writeFile(dir / "wide.h", "// cafe\nint wideThing(int);\n");
    REQUIRE(Indexer(*store, indexOptions).run(*db).tusParsed == 1);
    CHECK_FALSE(store->snapshot().indexedAscii(wide).has_value());
    store->prepareSummaries();
    CHECK(store->snapshot().indexedAscii(wide) == std::optional<bool>(true));
}

TEST_CASE("names: a summaries pass that a commit cuts into is never taken as of one snapshot, and "
          "one abandoned keeps the summaries before it",
          "[index][names]") {
    NamesTree tree;
    const std::vector<std::string> queries = queriesOf(*tree.store);
    const SummaryStats whole = tree.store->prepareSummaries().value();
    REQUIRE(whole.blocks > 3);
    size_t answers = 0;
    const size_t fromWhole = briefAnswersAlike(*tree.store, queries, &answers);
    REQUIRE(fromWhole == answers);

    // Abandoned at its third piece (a block a piece): nothing of it is kept.
    size_t asked = 0;
    CHECK_FALSE(tree.store->prepareSummaries([&] { return ++asked < 3; }, 1).has_value());
    CHECK(asked == 3);
    CHECK(briefAnswersAlike(*tree.store, queries) == fromWhole);

    // A commit after the first piece: every block but the first read from the snapshot after
    // it, names.cpp's with their new lines. The pass is of no one snapshot: a reader of either
    // must check each block's bytes and decode the ones its snapshot has otherwise (a reader of
    // the first piece's snapshot, held from before the commit, would else show the new lines).
    // It is taken inside the pass, as the pass takes its own (its lock, then a snapshot's),
    // and let go before the next pass: no code takes them the other way round.
    std::optional<StoreSnapshot> before;
    const std::filesystem::path source = tree.dir / "names.cpp";
    std::stringstream text;
    text << std::ifstream(source).rdbuf();
    std::string error;
    auto db = loadCompileDatabase(tree.dir.path().string(), &error);
    REQUIRE(db);
    IndexOptions indexOptions;
    indexOptions.threads = 1;
    asked = 0;
    const std::optional<SummaryStats> cut = tree.store->prepareSummaries(
        [&] {
            if (++asked == 2) {
                before.emplace(tree.store->snapshot());
                std::ofstream(source) << "// moved\n// down\n" << text.str();
                REQUIRE(Indexer(*tree.store, indexOptions).run(*db).tusParsed == 1);
            }
            return true;
        },
        1);
    REQUIRE(cut.has_value());
    CHECK(asked == whole.blocks);
    CHECK(cut->blocks == whole.blocks);
    REQUIRE(before.has_value());
    CHECK(briefAnswersAlike(*before, queries) > 0); // names.h's blocks: alike in both
    before.reset();
    CHECK(briefAnswersAlike(*tree.store, queries) > 0);
    CHECK_FALSE(tree.store->snapshot().indexedAscii(source).has_value()); // no one snapshot's

    // The next pass, uncut, is of one snapshot again.
    tree.store->prepareSummaries();
    CHECK(briefAnswersAlike(*tree.store, queries) == fromWhole);
    CHECK(tree.store->snapshot().indexedAscii(source) == std::optional<bool>(true));
}
