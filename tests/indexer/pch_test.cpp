// Shared precompiled prefixes (issue 13, indexer/pch.h): the system headers most TUs of a
// configuration include are parsed once into a PCH, TUs that lose nothing by it are parsed against
// it, and the store is exactly the store of a run without PCHs. The "system" headers here are the
// fixture's own, under -isystem, so that the tests can edit them.
#include "indexer/indexer.h"
#include "indexer/tu_parser.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>

using namespace symdex;
using symdex::test::TempDir;

namespace {

size_t modes(const IndexSummary& summary, PchMode mode) {
    return summary.pchModes[size_t(mode)];
}

struct Tree {
    TempDir dir;
    std::vector<std::string> sources;

    Tree() {
        write("sys/base.h", "#ifndef BASE_H\n#define BASE_H\n"
                            "#ifdef WIDE\ntypedef long word;\n#else\ntypedef int word;\n#endif\n"
                            "struct Base { word value; };\n#define BASE_LIMIT 10\n#endif\n");
        write("sys/extra.h", "#ifndef EXTRA_H\n#define EXTRA_H\n#include <base.h>\n"
                             "struct Extra { word e; };\ninline int extraValue() { return 3; }\n"
                             "#endif\n");
        write("sys/more.h", "#ifndef MORE_H\n#define MORE_H\nstruct More { int m; };\n#endif\n");
        // Seven TUs that include both headers; the first three are the largest (they are parsed
        // first, and say what the PCH holds).
        for (int i = 0; i < 7; ++i) {
            const std::string name = "src/t" + std::to_string(i) + ".cc";
            std::string text = "#include <base.h>\n#include <extra.h>\n";
            if (i < 3)
                text += "#include <more.h>\n// " + std::string(400, 'x') + "\n";
            text += "int f" + std::to_string(i) +
                    "(word w) { Base b; Extra e; return b.value + e.e + w + BASE_LIMIT + "
                    "extraValue(); }\n";
            add(name, text);
        }
        // Includes the PCH's headers in another order: extra.h (which includes base.h) first.
        add("src/reversed.cc", "#include <extra.h>\n#include <base.h>\n"
                               "int r(word w) { return w + extraValue() + BASE_LIMIT; }\n");
        // Defines a macro the PCH's headers read, before it includes them: against the PCH,
        // `word` would be int; it is long.
        add("src/wide.cc", "#define WIDE 1\n#include <base.h>\n#include <extra.h>\n"
                           "int g(word w) { return int(w) + extraValue(); }\n");
        // Uses a header of the PCH it does not include: a plain parse does not know Extra.
        add("src/less.cc", "#include <base.h>\nint h(word w) { Extra e; return w + e.e; }\n");
    }

    void write(const std::string& rel, const std::string& text) {
        std::filesystem::create_directories(std::filesystem::path(dir / rel).parent_path());
        test::writeFile(dir / rel, text);
    }
    void add(const std::string& rel, const std::string& text) {
        write(rel, text);
        sources.push_back(dir / rel);
    }

    IndexSummary index(const std::string& store, PchPolicy pch, Isolation isolation,
                       bool force = false) {
        test::writeCompileDb(dir.path(), sources, {"-std=c++17", "-isystem", dir / "sys"});
        StoreOptions storeOptions;
        storeOptions.directory = dir.path() / store;
        auto opened = SymbolStore::open(storeOptions);
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions options;
        options.threads = 2;
        options.isolation = isolation;
        options.pch = pch;
        options.pchDirectory = dir / (store + "/pch");
        options.force = force;
        IndexSummary summary = Indexer(*opened, options).run(*db);
        std::ostringstream out;
        dumpStore(*opened, out, dir.path());
        dumps[store] = out.str();
        return summary;
    }

    std::vector<std::string> pchFiles(const std::string& store) const {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(dir / (store + "/pch")))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

    std::map<std::string, std::string> dumps;
};

Isolation isolationNamed(const std::string& name) {
    return name == "worker" ? Isolation::Process : Isolation::InProcess;
}

} // namespace

TEST_CASE("TUs are parsed against a shared PCH where that changes nothing, and the store is the "
          "store without it",
          "[index][pch]") {
    const std::string isolation = GENERATE(as<std::string>{}, "worker", "in-process");
    INFO("isolation " << isolation);
    Tree tree;
    const IndexSummary off = tree.index(".off", PchPolicy::Off, isolationNamed(isolation));
    const IndexSummary on = tree.index(".on", PchPolicy::Auto, isolationNamed(isolation));
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    CHECK(modes(off, PchMode::Built) == 0);
    CHECK(modes(off, PchMode::Used) == 0);
    // Three plain parses chose the headers and one PCH was built; whether the TUs left were
    // parsed before it was ready depends on timing (these TUs take milliseconds).
    CHECK(modes(on, PchMode::Built) == 1);
    // The plain parse of wide.cc saw `word` as long, that of less.cc an error.
    CHECK(tree.dumps[".on"].find("c:@F@g#L#") != std::string::npos);
    CHECK(tree.dumps[".on"].find("tu src/less.cc errors errors 1") != std::string::npos);
    // The PCH, its source and its manifest are kept for the next run.
    CHECK(tree.pchFiles(".on").size() == 3);

    // A second run finds the PCH valid and tries every TU against it from the start. Parsed
    // whole: the owner of the PCH's headers (t0.cc, the largest; or first t1.cc, if it claims
    // them before t0.cc does), which extracts them; wide.cc, whose WIDE would meet base.h in
    // another order; less.cc, which uses Extra without including extra.h. reversed.cc, which
    // includes them in another order, is parsed against it.
    const IndexSummary again =
        tree.index(".on", PchPolicy::Auto, isolationNamed(isolation), /*force=*/true);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    CHECK(modes(again, PchMode::Built) == 0);
    CHECK(modes(again, PchMode::Macros) == 1);
    CHECK(modes(again, PchMode::Incomplete) == 1);
    CHECK(modes(again, PchMode::Used) + modes(again, PchMode::Owner) == 8);
    CHECK(modes(again, PchMode::Used) >= 6);
}

TEST_CASE("editing a header the PCH holds re-parses its TUs against a rebuilt PCH, and removes "
          "the old one",
          "[index][pch]") {
    Tree tree;
    tree.index(".on", PchPolicy::Auto, Isolation::Process);
    const std::vector<std::string> before = tree.pchFiles(".on");
    REQUIRE(before.size() == 3);
    tree.write("sys/extra.h", "#ifndef EXTRA_H\n#define EXTRA_H\n#include <base.h>\n"
                              "struct Extra { word e; word f; };\n"
                              "inline int extraValue() { return 4; }\n#endif\n");
    const IndexSummary edited = tree.index(".on", PchPolicy::Auto, Isolation::Process);
    CHECK(edited.tusParsed == 9); // every TU that read extra.h: all but less.cc
    CHECK(modes(edited, PchMode::Built) == 1);
    tree.index(".off", PchPolicy::Off, Isolation::Process);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    // The stale PCH is gone; the new one is named by the same headers, so it took its place.
    CHECK(tree.pchFiles(".on") == before);
    // And it serves: TUs are parsed against it.
    const IndexSummary again = tree.index(".on", PchPolicy::Auto, Isolation::Process, true);
    CHECK(modes(again, PchMode::Used) >= 6);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
}

TEST_CASE("a header removed from the tree and from the TUs that included it leaves no PCH that "
          "holds it",
          "[index][pch]") {
    Tree tree;
    tree.index(".on", PchPolicy::Auto, Isolation::InProcess);
    const std::vector<std::string> before = tree.pchFiles(".on");
    REQUIRE(before.size() == 3);
    // more.h goes, and with it the #include of the three TUs that chose it into the PCH.
    std::filesystem::remove(tree.dir / "sys/more.h");
    for (int i = 0; i < 3; ++i) {
        const std::string name = "src/t" + std::to_string(i) + ".cc";
        std::string text = test::readFile(tree.dir / name);
        text.erase(text.find("#include <more.h>\n"), std::string("#include <more.h>\n").size());
        tree.write(name, text);
    }
    // Three TUs to re-parse are too few for a PCH; the one that holds more.h is gone anyway.
    const IndexSummary removed = tree.index(".on", PchPolicy::Auto, Isolation::InProcess);
    CHECK(removed.tusParsed == 3);
    CHECK(removed.tusFailed == 0);
    CHECK(modes(removed, PchMode::Built) == 0);
    CHECK(tree.pchFiles(".on").empty());
    tree.index(".off", PchPolicy::Off, Isolation::InProcess);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    CHECK(tree.dumps[".on"].find("more.h") == std::string::npos);
    // A run of every TU builds one of base.h and extra.h only.
    const IndexSummary all = tree.index(".on", PchPolicy::Auto, Isolation::InProcess, true);
    CHECK(modes(all, PchMode::Built) == 1);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    const std::vector<std::string> after = tree.pchFiles(".on");
    REQUIRE(after.size() == 3);
    CHECK(after != before);
    const std::string source = test::readFile(tree.dir / (".on/pch/" + after[0] + ".h"));
    CHECK(source.find("#include <base.h>") != std::string::npos);
    CHECK(source.find("more.h") == std::string::npos);
}

TEST_CASE("the golden fixture stores the same with PCHs as without", "[index][pch][golden]") {
    TempDir dir;
    test::copyFixture("golden", dir.path());
    const std::vector<std::string> sources = {"src/circle.cpp", "src/util.cpp", "src/main.cpp",
                                              "src/broken.cpp"};
    test::writeCompileDb(dir.path(), sources, {"-std=c++17", "-Iinclude"});
    std::string error;
    auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    auto run = [&](const std::string& name, PchPolicy pch, bool force) {
        StoreOptions storeOptions;
        storeOptions.directory = dir.path() / name;
        auto store = SymbolStore::open(storeOptions);
        IndexOptions options;
        options.threads = 2;
        options.pch = pch;
        options.pchDirectory = dir / (name + "/pch");
        options.force = force;
        const IndexSummary summary = Indexer(*store, options).run(*db);
        std::ostringstream out;
        dumpStore(*store, out, dir.path());
        return std::pair(summary, out.str());
    };
    const auto off = run(".off", PchPolicy::Off, false);
    const auto first = run(".on", PchPolicy::Auto, false);
    CHECK(modes(first.first, PchMode::Built) == 1);
    CHECK(first.second == off.second);
    // Again, every TU tried against the PCH the first run left.
    const auto again = run(".on", PchPolicy::Auto, true);
    CHECK(again.second == off.second);
    CHECK(modes(again.first, PchMode::Built) == 0);
    INFO("used " << modes(again.first, PchMode::Used) << ", owner "
                 << modes(again.first, PchMode::Owner) << ", incomplete "
                 << modes(again.first, PchMode::Incomplete) << ", macros "
                 << modes(again.first, PchMode::Macros) << ", unusable "
                 << modes(again.first, PchMode::Unusable));
    CHECK(modes(again.first, PchMode::Used) >= 1);
}
