// Shared precompiled prefixes (issue 13, indexer/pch.h): the system headers most TUs of a
// configuration include are parsed once into a PCH, TUs that lose nothing by it are parsed against
// it, and the store is exactly the store of a run without PCHs. The "system" headers here are the
// fixture's own, under -isystem, so that the tests can edit them.
#include "indexer/indexer.h"
#include "indexer/pch.h"
#include "indexer/tu_parser.h"
#include "indexer/usr.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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
        // Seven TUs that include both headers; the first five more.h too, so that half of the
        // ten TUs do, and the PCH holds it.
        for (int i = 0; i < 7; ++i) {
            const std::string name = "src/t" + std::to_string(i) + ".cc";
            std::string text = "#include <base.h>\n#include <extra.h>\n";
            if (i < 5)
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
        if (warnings) { // each TU its own warning options, as build systems write them per target
            QJsonArray entries;
            for (size_t i = 0; i < sources.size(); ++i) {
                QJsonArray args{"c++", "-std=c++17", "-isystem",
                                QString::fromStdString(dir / "sys")};
                for (const char* flag : i % 3 == 0   ? std::vector<const char*>{"-Wall", "-Wextra"}
                                        : i % 3 == 1 ? std::vector<const char*>{"-w"}
                                                     : std::vector<const char*>{"-Wno-unused"})
                    args.append(flag);
                args.append("-c");
                args.append(QString::fromStdString(sources[i]));
                entries.append(QJsonObject{{"directory", QString::fromStdString(dir.path())},
                                           {"file", QString::fromStdString(sources[i])},
                                           {"arguments", args}});
            }
            test::writeFile(dir / "compile_commands.json",
                            QJsonDocument(entries).toJson().toStdString());
        }
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

    /// Indexes into ".off" without a PCH, then into ".on" with one, then ".on" again with every
    /// TU tried against the PCH from the start; each store's dump is ".off"'s. Returns the last
    /// run's summary.
    IndexSummary indexBothWays(Isolation isolation = Isolation::InProcess) {
        index(".off", PchPolicy::Off, isolation);
        index(".on", PchPolicy::Auto, isolation);
        CHECK(dumps[".on"] == dumps[".off"]);
        const IndexSummary again = index(".on", PchPolicy::Auto, isolation, /*force=*/true);
        CHECK(dumps[".on"] == dumps[".off"]);
        return again;
    }

    std::map<std::string, std::string> dumps;
    bool warnings = false; ///< give the TUs different warning options
};

/// The fallbacks `summary` lists that contain `text`.
size_t fallbacksNaming(const IndexSummary& summary, const std::string& text) {
    return size_t(
        std::count_if(summary.pchFallbacks.begin(), summary.pchFallbacks.end(),
                      [&](const std::string& f) { return f.find(text) != std::string::npos; }));
}

/// Fallbacks of `tu` (its path's end) for owning a PCH file, known before its parse.
size_t knownOwnerFallbacks(const IndexSummary& summary, const std::string& tu) {
    return size_t(std::count_if(
        summary.pchFallbacks.begin(), summary.pchFallbacks.end(), [&](const std::string& f) {
            return f.find(tu + ": owns a PCH file: ") != std::string::npos &&
                   f.find("(known before the parse)") != std::string::npos;
        }));
}

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
    // The text of the TUs chose the headers and one PCH was built, by one thread, first; the
    // other started on the TUs. Parsed against it: the TUs that own none of its headers and lose
    // nothing by it. t0.cc (the largest, rank 0) owns the PCH's headers: parsed plain, either
    // because it started while the PCH was being built or, known before its parse, at once —
    // never against the PCH first. (Which other TU, if any, claimed a header of the PCH before
    // t0.cc took it over depends on timing.)
    CHECK(modes(on, PchMode::Built) == 1);
    CHECK(fallbacksNaming(on, "src/t0.cc: ") <= 1);
    CHECK(fallbacksNaming(on, "src/t0.cc: ") == knownOwnerFallbacks(on, "src/t0.cc"));
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
    // The PCH is ready from the start: t0.cc, rank 0, would own its headers, which is known
    // before its parse; it is parsed plain at once, not against the PCH first.
    CHECK(knownOwnerFallbacks(again, "src/t0.cc") == 1);
    CHECK(fallbacksNaming(again, "(known before the parse)") == 1);
}

TEST_CASE("TUs whose commands differ only in warning options share one PCH", "[index][pch]") {
    Tree tree;
    tree.warnings = true;
    tree.index(".off", PchPolicy::Off, Isolation::Process);
    const IndexSummary on = tree.index(".on", PchPolicy::Auto, Isolation::Process);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    // Three configurations of three or four TUs each would build no PCH at all.
    CHECK(modes(on, PchMode::Built) == 1);
    const IndexSummary again = tree.index(".on", PchPolicy::Auto, Isolation::Process, true);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    CHECK(modes(again, PchMode::Used) >= 6);

    // What a PCH must match stays in the key: defines, and preprocessor options passed by -Wp,.
    CompileCommand a{"/p/a.cc", "/p", {"c++", "-std=c++17", "-Wall"}};
    CompileCommand b{"/p/b.cc", "/p", {"c++", "-Wno-unused", "-std=c++17", "-w"}};
    CHECK(pchGroupKey(a) == pchGroupKey(b));
    b.arguments.push_back("-DWIDE");
    CHECK(pchGroupKey(a) != pchGroupKey(b));
    b.arguments.back() = "-Wp,-DWIDE";
    CHECK(pchGroupKey(a) != pchGroupKey(b));
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
    // more.h goes, and with it the #include of the five TUs that chose it into the PCH.
    std::filesystem::remove(tree.dir / "sys/more.h");
    for (int i = 0; i < 5; ++i) {
        const std::string name = "src/t" + std::to_string(i) + ".cc";
        std::string text = test::readFile(tree.dir / name);
        text.erase(text.find("#include <more.h>\n"), std::string("#include <more.h>\n").size());
        tree.write(name, text);
    }
    // The PCH that holds more.h is not valid any more: removed, and one of base.h and extra.h,
    // what the five TUs to re-parse include, is built in its place.
    const IndexSummary removed = tree.index(".on", PchPolicy::Auto, Isolation::InProcess);
    CHECK(removed.tusParsed == 5);
    CHECK(removed.tusFailed == 0);
    CHECK(modes(removed, PchMode::Built) == 1);
    tree.index(".off", PchPolicy::Off, Isolation::InProcess);
    CHECK(tree.dumps[".on"] == tree.dumps[".off"]);
    CHECK(tree.dumps[".on"].find("more.h") == std::string::npos);
    const std::vector<std::string> after = tree.pchFiles(".on");
    REQUIRE(after.size() == 3);
    CHECK(after != before);
    const std::string source = test::readFile(tree.dir / (".on/pch/" + after[0] + ".h"));
    CHECK(source.find("#include <base.h>") != std::string::npos);
    CHECK(source.find("#include <extra.h>") != std::string::npos);
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

TEST_CASE("a call its own file makes before the #include of a better overload is parsed whole",
          "[index][pch]") {
    Tree tree;
    tree.sources.clear();
    tree.write("sys/over.h", "#ifndef OVER_H\n#define OVER_H\ninline int pick(long) { return 1; }\n"
                             "#endif\n");
    tree.write("sys/late.h", "#ifndef LATE_H\n#define LATE_H\ninline int pick(int) { return 2; }\n"
                             "#endif\n");
    for (int i = 0; i < 4; ++i)
        tree.add("src/o" + std::to_string(i) + ".cc",
                 "#include <over.h>\n#include <late.h>\n// " + std::string(400, 'x') + "\nint f" +
                     std::to_string(i) + "() { return pick(1) + pick(2L); }\n");
    // A plain parse calls pick(long) here: pick(int) is declared only after. Against the PCH,
    // which holds late.h, pick(int) would win.
    tree.add("src/order.cc", "#include <over.h>\nint early = pick(1);\n#include <late.h>\n"
                             "int later = pick(1);\n");
    const IndexSummary again = tree.indexBothWays();
    CHECK(modes(again, PchMode::Order) == 1);
    CHECK(modes(again, PchMode::Used) + modes(again, PchMode::Owner) == 4);
    CHECK(tree.dumps[".off"].find("src/order.cc:2:13: call -> pick") != std::string::npos);
}

TEST_CASE("a PCH macro tested or undefined before its header is parsed whole where a plain parse "
          "would read it otherwise",
          "[index][pch]") {
    Tree tree;
    tree.sources.clear();
    tree.write("sys/lim.h", "#ifndef LIM_H\n#define LIM_H\n#define LIMIT 7\n#endif\n");
    tree.write("sys/other.h", "#ifndef OTHER_H\n#define OTHER_H\nstruct Other { int o; };\n"
                              "#endif\n");
    tree.write("sys/use.h", "#ifndef USE_H\n#define USE_H\n#define TWICE (LIMIT * 2)\n#endif\n");
    for (int i = 0; i < 4; ++i)
        tree.add("src/l" + std::to_string(i) + ".cc",
                 "#include <lim.h>\n#include <other.h>\n#include <use.h>\n// " +
                     std::string(400, 'x') + "\nint f" + std::to_string(i) +
                     "() { return LIMIT + TWICE; }\n");
    // Against the PCH, LIMIT is gone after the #undef and lim.h does not bring it back; in a plain
    // parse lim.h defines it. The same answers as long as nothing reads it after lim.h.
    tree.add("src/quiet.cc", "#undef LIMIT\n#include <lim.h>\n#include <other.h>\n"
                             "int q(Other o) { return o.o; }\n");
    // Tests it after lim.h: a plain parse declares limited(), the PCH's would unlimited().
    tree.add("src/loud.cc", "#undef LIMIT\n#include <lim.h>\n#include <other.h>\n#ifdef LIMIT\n"
                            "int limited(Other o);\n#else\nint unlimited(Other o);\n#endif\n");
    // Tests it before lim.h: against the PCH the #ifndef's branch is skipped, but its condition
    // was read, a use of the PCH's macro before the file defining it would have come.
    tree.add("src/early.cc", "#ifndef LIMIT\nint early();\n#endif\n#include <lim.h>\n"
                             "#include <other.h>\nint e(Other o) { return o.o; }\n");
    // An #elif evaluated inside a skipped range: false against the PCH, true in a plain parse.
    tree.add("src/elif.cc", "#if defined(NEVER_X)\nint never();\n#elif !defined(LIMIT)\n"
                            "int elifTaken();\n#else\nint elifElse();\n#endif\n#include <lim.h>\n"
                            "#include <other.h>\n");
    // Its own definition before the #undef changes nothing: lim.h defines LIMIT again in a plain
    // parse.
    tree.add("src/redo.cc", "#define LIMIT 1\n#undef LIMIT\n#include <lim.h>\n#include <other.h>\n"
                            "#ifdef LIMIT\nint redoLimited();\n#endif\n");
    // Uses LIMIT only through use.h's TWICE: a guarded PCH file that uses the name comes after
    // the #undef.
    tree.add("src/indirect.cc", "#undef LIMIT\n#include <lim.h>\n#include <other.h>\n"
                                "#include <use.h>\n#if TWICE == 14\nint fourteen();\n#endif\n");
    const IndexSummary again = tree.indexBothWays();
    for (const char* usr :
         {"c:@F@limited#", "c:@F@elifTaken#", "c:@F@redoLimited#", "c:@F@fourteen#"})
        CHECK(tree.dumps[".on"].find(usr) != std::string::npos);
    CHECK(tree.dumps[".on"].find("c:@F@unlimited#") == std::string::npos);
    CHECK(tree.dumps[".on"].find("c:@F@early#") != std::string::npos);
    std::string fallbacks;
    for (const std::string& f : again.pchFallbacks)
        fallbacks += f + "\n";
    INFO(fallbacks);
    CHECK(modes(again, PchMode::Macros) == 5);
    for (const char* fallback : {"src/loud.cc: macros meet the PCH's: LIMIT undefined",
                                 "src/early.cc: macros meet the PCH's: LIMIT used",
                                 "src/elif.cc: macros meet the PCH's: LIMIT used",
                                 "src/redo.cc: macros meet the PCH's: LIMIT undefined",
                                 "src/indirect.cc: macros meet the PCH's: LIMIT undefined"})
        CHECK(fallbacksNaming(again, fallback) == 1);
    CHECK(modes(again, PchMode::Used) + modes(again, PchMode::Owner) == 5);
}

TEST_CASE("PCH headers are chosen from the text: unconditional #includes, project headers "
          "followed and named by real path",
          "[pch]") {
    TempDir dir;
    auto write = [&](const std::string& rel, const std::string& text) {
        std::filesystem::create_directories(std::filesystem::path(dir / rel).parent_path());
        test::writeFile(dir / rel, text);
    };
    write("inc/proj/a.h", "#pragma once\n#include <vector>\n#include \"b.h\"\n"
                          "#ifdef WINDOWS\n#include <windows.h>\n#endif\n");
    write("inc/proj/b.h", "#ifndef B_H\n#define B_H\n#include <map>\n#endif\n");
    write("inc/proj/loose.h", "int loose;\n"); // no guard: not in a PCH
    write("sys/lib.h", "#pragma once\n#include <set>\n");
    write("src/main.cc", "// a comment #include <no.h>\n#include \"proj/a.h\"\n"
                         "#include <string>\n#include \"proj/loose.h\"\n#include \"lib.h\"\n"
                         "#if 0\n#include <skipped.h>\n#endif\nint main() {}\n");
    CompileCommand command;
    command.file = canonicalPath(dir / "src/main.cc");
    command.directory = dir.path().string();
    command.arguments = {"clang++", "-I" + (dir / "inc"), "-isystem", dir / "sys"};
    IncludeScanner scanner(command);
    const std::string inc = canonicalPath(dir / "inc");
    const std::vector<std::string> expected = {"\"" + inc + "/proj/a.h\"",
                                               "<vector>",
                                               "\"" + inc + "/proj/b.h\"",
                                               "<map>",
                                               "<string>",
                                               "\"lib.h\""};
    CHECK(scanner.headersOf(command.file) == expected);
}

TEST_CASE("a file whose #includes sit inside an inner guard includes only once", "[pch]") {
    // glibc's bits/stat.h: a check before the guard, so clang does not count it as guarded.
    CHECK(
        includesOnlyOnce("#if !defined _SYS_STAT_H && !defined _FCNTL_H\n"
                         "# error \"Never include <bits/stat.h> directly\"\n#endif\n"
                         "#ifndef _BITS_STAT_H\n#define _BITS_STAT_H 1\n"
                         "#include <bits/struct_stat.h>\n#define X 1\n#endif /* bits/stat.h */\n"));
    // stddef.h: what it includes depends on the __need_ macros of each entry.
    CHECK_FALSE(includesOnlyOnce("#if !defined(__STDDEF_H) || defined(__need_size_t)\n"
                                 "#include <max_align.h>\n#endif\n"));
    CHECK_FALSE(includesOnlyOnce("#include <first.h>\n#ifndef G\n#define G\n#endif\n"));
    CHECK_FALSE(includesOnlyOnce("#ifndef G\n#define G\n#include <a.h>\n#else\n#include <b.h>\n"
                                 "#endif\n"));
    CHECK_FALSE(includesOnlyOnce("#ifndef G\n#define G\n#endif\n#include <after.h>\n"));
}

TEST_CASE("USRs of dependent names read the same whatever the parse met first", "[pch]") {
    std::string a, b;
    CHECK(stableUsr("c:@F@f#I#", a) == "c:@F@f#I#");
    // {fmt}'s FMT_ENABLE_IF, printed with the names of the first template of its form.
    const std::string_view withT = stableUsr(
        "c:@S@h@FT@>2#T#N^enable_if<(std::is_integral<T>::value), int>:::typeoperator()#t0.0#I#",
        a);
    const std::string_view withChar = stableUsr(
        "c:@S@h@FT@>2#T#N^enable_if<(std::is_integral<Char>::value), int>:::typeoperator()#t0.0#I#",
        b);
    CHECK(withT == withChar);
    CHECK(withT ==
          "c:@S@h@FT@>2#T#N^enable_if<(is_integral<$>::value), int>:::typeoperator()#t0.0#I#");
    std::string c;
    CHECK(stableUsr("c:@S@h@FT@>2#T#N^enable_if<(!std::is_integral<T>::value), int>:::type#", c) !=
          stableUsr("c:@S@h@FT@>2#T#N^enable_if<(std::is_integral<T>::value), int>:::type#", a));
    // Canonical types print the same everywhere, and stay.
    const char* canonical =
        "c:@N@std@ST>2#T#T@_Deque_base@F@f#&1^__alloc_traits<type-parameter-0-1, "
        "typename type-parameter-0-1::value_type>::template "
        "rebind<type-parameter-0-0>:::other#";
    CHECK(stableUsr(canonical, a) == canonical);
}

TEST_CASE("a reference to a class template instantiated from a partial specialization is to the "
          "template, before and after the first instantiation",
          "[index][pch]") {
    Tree tree;
    tree.sources.clear();
    tree.write("sys/fn.h", "#ifndef FN_H\n#define FN_H\ntemplate <typename S> class Fn;\n"
                           "template <typename R, typename... A> class Fn<R(A...)> { R (*p)(A...); "
                           "};\n#endif\n");
    tree.add("src/use.cc", "#include <fn.h>\nFn<void(int)> first;\nFn<void(int)> second;\n");
    tree.index(".off", PchPolicy::Off, Isolation::InProcess);
    const std::string& dump = tree.dumps[".off"];
    // Both references (the second after `first` instantiated it) name the template.
    CHECK(dump.find("src/use.cc:2:1: reference -> Fn in first\n") != std::string::npos);
    CHECK(dump.find("src/use.cc:3:1: reference -> Fn in second\n") != std::string::npos);
    CHECK(dump.find("reference -> Fn<R (A...)>") == std::string::npos);
}
