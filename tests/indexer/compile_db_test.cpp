#include "indexer/compile_db.h"
#include "test_util.h"

#include <catch2/catch.hpp>

using namespace symdex;
using symdex::test::TempDir;
using symdex::test::writeFile;

namespace {

std::optional<CompileDatabase> parse(const std::string& json, std::string* error) {
    return parseCompileDatabase(json, "/db/compile_commands.json", error);
}

} // namespace

TEST_CASE("command lines split like a shell", "[compile_db]") {
    CHECK(splitCommandLine("g++ -DX=1 -c a.cc") ==
          std::vector<std::string>{"g++", "-DX=1", "-c", "a.cc"});
    CHECK(splitCommandLine(R"(cc "-DNAME=\"a b\"" 'x y' a\ b)") ==
          std::vector<std::string>{"cc", "-DNAME=\"a b\"", "x y", "a b"});
    CHECK(splitCommandLine("  cc\t-I''  ") == std::vector<std::string>{"cc", "-I"});
    CHECK(splitCommandLine(R"(cc "C:\path")") == std::vector<std::string>{"cc", R"(C:\path)"});
}

TEST_CASE("both entry forms are read, paths resolved and output flags dropped", "[compile_db]") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "src");
    writeFile(dir.path() / "src/a.cc", "int a;\n");
    writeFile(dir.path() / "src/b.cc", "int b;\n");
    const std::string root = dir.path().string();
    const std::string json = R"([
      {"directory": ")" + root +
                             R"(", "file": "src/a.cc",
       "command": "ccache /usr/bin/g++ -Iinclude -DA=1 -MD -MF a.d -MT a.o -o out/a.o -c src/a.cc -Werror"},
      {"directory": ")" + root +
                             R"(/src", "file": ")" + root + R"(/src/b.cc",
       "arguments": ["clang++", "-std=c++20", "-c", "b.cc", "-oout.o", "-MMD", "-Wp,-MD,x.d"]}
    ])";
    writeFile(dir.path() / "compile_commands.json", json);
    std::string error;
    auto db = loadCompileDatabase(root, &error); // a directory: finds compile_commands.json
    REQUIRE(db);
    CHECK(error.empty());
    CHECK(db->warnings.empty());
    REQUIRE(db->commands.size() == 2);
    CHECK(db->commands[0].file == root + "/src/a.cc");
    CHECK(db->commands[0].directory == root);
    CHECK(db->commands[0].arguments ==
          std::vector<std::string>{"/usr/bin/g++", "-I" + root + "/include", "-DA=1"});
    CHECK(db->commands[1].file == root + "/src/b.cc");
    CHECK(db->commands[1].directory == root + "/src");
    CHECK(db->commands[1].arguments == std::vector<std::string>{"clang++", "-std=c++20"});
    CHECK(db->commands[0].hash() != db->commands[1].hash());

    // The file itself is accepted too.
    auto again = loadCompileDatabase(root + "/compile_commands.json", &error);
    REQUIRE(again);
    CHECK(again->commands.size() == 2);
}

TEST_CASE("flags that keep temporaries are dropped: libclang refuses a multi-job command",
          "[compile_db]") {
    CHECK(parseArguments({"c++", "-save-temps", "--save-temps", "-save-temps=obj",
                          "--save-temps=cwd", "-O2", "-c", "a.cpp", "-o", "a.o"},
                         "/w/a.cpp", "/w") == std::vector<std::string>{"c++", "-O2"});
}

TEST_CASE("relative paths in flags become absolute", "[compile_db]") {
    const std::string dir = "/work/build";
    CHECK(parseArguments({"cc", "-I", "inc", "-I../up", "-isystem", "sys", "-isystemsys2",
                          "-include", "pre.h", "-include-pchp.pch", "--sysroot=root", "-I/abs",
                          "-I=sysrel", "-DX=inc", "-Wall"},
                         "/work/a.c", dir) ==
          std::vector<std::string>{"cc", "-I", "/work/build/inc", "-I/work/up", "-isystem",
                                   "/work/build/sys", "-isystem/work/build/sys2", "-include",
                                   "/work/build/pre.h", "-include-pch/work/build/p.pch",
                                   "--sysroot=/work/build/root", "-I/abs", "-I=sysrel", "-DX=inc",
                                   "-Wall"});
}

TEST_CASE("a relative directory resolves against the database's folder", "[compile_db]") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "build" / "src");
    writeFile(dir.path() / "build/src/a.cc", "int a;\n");
    writeFile(dir.path() / "build/compile_commands.json",
              R"([{"directory": "src", "file": "a.cc", "arguments": ["cc", "a.cc"]}])");
    std::string error;
    auto db = loadCompileDatabase((dir.path() / "build").string(), &error);
    REQUIRE(db);
    REQUIRE(db->commands.size() == 1);
    CHECK(db->commands[0].file == (dir.path() / "build/src/a.cc").string());
}

TEST_CASE("bad databases give errors naming file, line and entry", "[compile_db]") {
    std::string error;
    SECTION("a missing file") {
        CHECK_FALSE(loadCompileDatabase("/nonexistent/build", &error));
        CHECK(error.find("/nonexistent/build/compile_commands.json") != std::string::npos);
    }
    SECTION("invalid JSON reports line and column") {
        CHECK_FALSE(parse(
            "[\n  {\"file\": \"a.cc\",\n   \"directory\": \"/x\" \"command\": \"cc\"}\n]", &error));
        CHECK(error.find("/db/compile_commands.json:3:") == 0);
        CHECK(error.find("invalid JSON") != std::string::npos);
    }
    SECTION("not an array") {
        CHECK_FALSE(parse(R"({"file": "a.cc"})", &error));
        CHECK(error.find("must be a JSON array") != std::string::npos);
    }
    SECTION("an entry without file names the entry and its line") {
        CHECK_FALSE(
            parse("[\n {\"directory\": \"/\", \"file\": \"/etc/hostname\", \"command\": \"cc\"},\n"
                  " {\"directory\": \"/\", \"command\": \"cc x.c\"}\n]",
                  &error));
        CHECK(error == "/db/compile_commands.json:3:2: entry 2: missing \"file\"");
    }
    SECTION("an entry without a command") {
        CHECK_FALSE(parse(R"([{"directory": "/", "file": "a.c"}])", &error));
        CHECK(error.find("entry 1: needs \"arguments\" or \"command\"") != std::string::npos);
    }
    SECTION("wrong types") {
        CHECK_FALSE(parse(R"([{"directory": "/", "file": 3, "command": "cc"}])", &error));
        CHECK(error.find("\"file\" must be a string") != std::string::npos);
        CHECK_FALSE(
            parse(R"([{"directory": "/", "file": "a.c", "arguments": ["cc", 1]}])", &error));
        CHECK(error.find("\"arguments\" must be an array of strings") != std::string::npos);
    }
}

TEST_CASE("missing sources and repeated entries are reported and skipped", "[compile_db]") {
    TempDir dir;
    writeFile(dir.path() / "a.cc", "int a;\n");
    const std::string root = dir.path().string();
    std::string error;
    auto db = parse(R"([
      {"directory": ")" +
                        root + R"(", "file": "a.cc", "command": "cc -c a.cc"},
      {"directory": ")" +
                        root + R"(", "file": "gone.cc", "command": "cc -c gone.cc"},
      {"directory": ")" +
                        root + R"(", "file": "a.cc", "command": "cc -DOTHER -c a.cc"}
    ])",
                    &error);
    REQUIRE(db);
    REQUIRE(db->commands.size() == 1);
    CHECK(db->commands[0].arguments == std::vector<std::string>{"cc"});
    REQUIRE(db->warnings.size() == 2);
    CHECK(db->warnings[0].find("entry 2: source file '" + root + "/gone.cc' does not exist") !=
          std::string::npos);
    CHECK(db->warnings[1].find("entry 3: '" + root + "/a.cc' appears again") != std::string::npos);
}

TEST_CASE("warnings far into a big database name the exact line and column of their entry",
          "[compile_db]") {
    TempDir dir;
    writeFile(dir.path() / "a.cc", "int a;\n");
    const std::string root = std::filesystem::canonical(dir.path()).string();
    // Entries laid out in every way a generator might: several on a line, one per line, split over
    // lines, CRLF line ends, indentation, and strings holding brackets, commas, escaped quotes and
    // escaped newlines, which must not be mistaken for structure.
    std::string json = "[";
    std::vector<std::string> expected;
    int line = 1;
    size_t lineStart = 0;
    auto newline = [&](bool crlf) {
        json += crlf ? "\r\n" : "\n";
        ++line;
        lineStart = json.size();
    };
    const int entries = 3000;
    for (int i = 0; i < entries; ++i) {
        if (i > 0)
            json += ",";
        if (i % 3 != 2)
            newline(i % 4 == 1);
        json += std::string(size_t(i % 5), ' ');
        const std::string at = "/db/compile_commands.json:" + std::to_string(line) + ":" +
                               std::to_string(json.size() - lineStart + 1) + ": entry " +
                               std::to_string(i + 1) + ": ";
        const std::string file = i == 0 || i % 2 == 0 ? "a.cc" : "gone" + std::to_string(i) + ".cc";
        json += "{\"directory\": \"" + root + "\",";
        if (i % 3 == 0)
            newline(false);
        json += R"( "command": "cc -DX=\"{[,]}\\n\" -c )" + file + "\",";
        if (i % 3 == 0)
            newline(i % 2 == 0);
        json += " \"file\": \"" + file + "\"}";
        if (i == 0)
            continue;
        expected.push_back(file == "a.cc"
                               ? at + "'" + root + "/a.cc' appears again; the first entry is used"
                               : at + "source file '" + root + "/" + file +
                                     "' does not exist; skipped");
    }
    newline(false);
    json += "]\n";
    REQUIRE(line > 3000);

    std::string error;
    auto db = parse(json, &error);
    REQUIRE(db);
    REQUIRE(db->commands.size() == 1);
    REQUIRE(db->warnings.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO("warning " << i);
        CHECK(db->warnings[i] == expected[i]);
    }
}

TEST_CASE("a source reached through symlinks is one file under its physical path", "[compile_db]") {
    TempDir dir;
    const std::filesystem::path root = std::filesystem::canonical(dir.path());
    std::filesystem::create_directories(root / "real/sub");
    writeFile(root / "real/sub/a.cc", "int a;\n");
    std::filesystem::create_directory_symlink(root / "real", root / "dirlink");
    std::filesystem::create_symlink(root / "real/sub/a.cc", root / "filelink.cc");
    std::filesystem::create_directory(root / "real/notafile.cc");
    const std::string r = root.string();
    std::string error;
    // "dirlink/sub/../sub": lexically normalised first, then resolved; ".." over a symlink is
    // normalised away before realpath sees it.
    auto db = parse(R"([
      {"directory": ")" +
                        r + R"(", "file": "dirlink/sub/a.cc", "command": "cc a.cc"},
      {"directory": ")" +
                        r + R"(/dirlink", "file": "sub/../sub/a.cc", "command": "cc a.cc"},
      {"directory": ")" +
                        r + R"(", "file": "filelink.cc", "command": "cc a.cc"},
      {"directory": ")" +
                        r + R"(", "file": "real/notafile.cc", "command": "cc a.cc"},
      {"directory": ")" +
                        r + R"(", "file": "dirlink/gone.cc", "command": "cc a.cc"}
    ])",
                    &error);
    REQUIRE(db);
    REQUIRE(db->commands.size() == 1);
    CHECK(db->commands[0].file == r + "/real/sub/a.cc");
    REQUIRE(db->warnings.size() == 4);
    CHECK(db->warnings[0].find("entry 2: '" + r + "/real/sub/a.cc' appears again") !=
          std::string::npos);
    CHECK(db->warnings[1].find("entry 3: '" + r + "/real/sub/a.cc' appears again") !=
          std::string::npos);
    CHECK(db->warnings[2].find("entry 4: source file '" + r +
                               "/real/notafile.cc' does not exist") != std::string::npos);
    // A missing file keeps the spelling it was given (made absolute).
    CHECK(db->warnings[3].find("entry 5: source file '" + r + "/dirlink/gone.cc' does not exist") !=
          std::string::npos);
}

TEST_CASE("absolute paths are lexically normal whatever their spelling", "[compile_db]") {
    // The reference: std::filesystem's normalisation, without a trailing '/'.
    auto reference = [](const std::string& path, const std::string& base) {
        std::filesystem::path p(path);
        if (p.is_relative())
            p = std::filesystem::path(base) / p;
        std::string normal = p.lexically_normal().string();
        if (normal.size() > 1 && normal.back() == '/')
            normal.pop_back();
        return normal;
    };
    const std::vector<std::string> spellings = {
        "",       "/",     "//",           "a",     "a/b",     "/a/b",  "a/",
        "/a/b/",  "./a",   "a/.",          "a/./b", "a//b",    "../a",  "a/..",
        "/..",    "/../a", "a/b/../../..", "...",   "a/.../b", ".a/b.", "//a//b//",
        "/a/b/.", "a/..b", "a/.b/c",       "./",    ".",       ".."};
    const std::vector<std::string> bases = {
        "/", "/work/build", "/work/build/", "/w/./x", "/w/../x", "relative/dir", ""};
    for (const std::string& base : bases)
        for (const std::string& path : spellings) {
            INFO("path '" << path << "' base '" << base << "'");
            CHECK(absolutePath(path, base) == reference(path, base));
        }
}

TEST_CASE("response files split as clang splits them", "[compile_db]") {
    // Each expectation is what clang 16's driver made of the same text (clang -### @file).
    CHECK(splitResponseFile(R"(-DA="x y" -DB=a\ b '-DC=q"r' "" -DD=\\e "-DE=1\"2" -DF=a"b c"d)") ==
          std::vector<std::string>{"-DA=x y", "-DB=a b", "-DC=q\"r", "-DD=\\e", "-DE=1\"2",
                                   "-DF=ab cd"});
    CHECK(splitResponseFile("\xEF\xBB\xBF-I inc\n\n-DX\r\n") ==
          std::vector<std::string>{"-I", "inc", "-DX"});
}

TEST_CASE("response files are expanded relative to the entry's directory, nested and quoted",
          "[compile_db]") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "flags");
    writeFile(dir.path() / "a.cc", "int a;\n");
    // clang 16's driver takes a relative name inside a response file relative to its working
    // directory too, not to the response file's.
    writeFile(dir.path() / "flags/top.rsp", "-DTOP \"-DSPACED=a b\" @flags/inner.rsp -Iinc");
    writeFile(dir.path() / "flags/inner.rsp", "-DINNER @absent.rsp\n");
    const std::string json = R"([{"directory": ")" + dir.path().string() +
                             R"(", "file": "a.cc", "command": "c++ @flags/top.rsp -c a.cc"}])";
    std::string error;
    auto db = parseCompileDatabase(json, (dir.path() / "compile_commands.json").string(), &error);
    REQUIRE(db);
    REQUIRE(db->commands.size() == 1);
    const std::vector<std::string> expected{"c++",     "-DTOP",       "-DSPACED=a b",
                                            "-DINNER", "@absent.rsp", "-I" + (dir / "inc")};
    CHECK(db->commands[0].arguments == expected);
    const uint64_t before = db->commands[0].hash();

    // The command hash covers what the response files hold.
    writeFile(dir.path() / "flags/inner.rsp", "-DINNER=2\n");
    db = parseCompileDatabase(json, (dir.path() / "compile_commands.json").string(), &error);
    REQUIRE(db);
    CHECK(db->commands[0].hash() != before);

    // A response file that includes itself is an error of that entry.
    writeFile(dir.path() / "flags/inner.rsp", "@flags/top.rsp\n");
    db = parseCompileDatabase(json, (dir.path() / "compile_commands.json").string(), &error);
    REQUIRE(db);
    CHECK(db->commands.empty());
    REQUIRE(db->warnings.size() == 1);
    CHECK(db->warnings[0].find("recursive expansion of response file '" + (dir / "flags/top.rsp") +
                               "'") != std::string::npos);
}

TEST_CASE("the command hash covers the environment clang reads for include paths", "[compile_db]") {
    const char* inherited = std::getenv("CPLUS_INCLUDE_PATH");
    const std::optional<std::string> saved =
        inherited ? std::optional<std::string>(inherited) : std::nullopt;
    REQUIRE(unsetenv("CPLUS_INCLUDE_PATH") == 0);
    CompileCommand command;
    command.directory = "/src";
    command.arguments = {"c++", "-std=c++17"};
    const uint64_t plain = command.hash();
    REQUIRE(setenv("CPLUS_INCLUDE_PATH", "/opt/inc", 1) == 0);
    const uint64_t withPath = command.hash();
    REQUIRE(unsetenv("CPLUS_INCLUDE_PATH") == 0);
    CHECK(withPath != plain);
    CHECK(command.hash() == plain);
    if (saved)
        setenv("CPLUS_INCLUDE_PATH", saved->c_str(), 1);
}
