// How symdex bench drives and checks its peers, without running them: the floor's command line,
// ccls's cache file names, clangd's shard names, LSP framing, the peers' copy of the compile
// database, and child processes' rusage.
#include "bench/ccls_peer.h"
#include "bench/child_process.h"
#include "bench/clangd_peer.h"
#include "bench/floor_peer.h"
#include "bench/lsp_connection.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <catch2/catch.hpp>

using namespace symdex;
using namespace symdex::bench;
using symdex::test::TempDir;

TEST_CASE("floor: clang++-16 or clang-16 by the original compiler, -fsyntax-only, same flags",
          "[bench][peers]") {
    CompileCommand cxx;
    cxx.file = "/src/a.cc";
    cxx.arguments = {"/usr/bin/c++", "-I/src/include", "-DX=1", "-std=c++17"};
    CHECK(floorCommand(cxx) == std::vector<std::string>{"clang++-16", "-fsyntax-only",
                                                        "-I/src/include", "-DX=1", "-std=c++17",
                                                        "/src/a.cc"});
    CompileCommand c;
    c.file = "/src/b.c";
    c.arguments = {"/usr/bin/cc", "-O2"};
    CHECK(floorCommand(c) ==
          std::vector<std::string>{"clang-16", "-fsyntax-only", "-O2", "/src/b.c"});
    CompileCommand gxx = cxx;
    gxx.arguments[0] = "g++-12";
    CHECK(floorCommand(gxx).front() == "clang++-16");
}

TEST_CASE("ccls: a TU counts as indexed only with its cache file", "[bench][peers]") {
    CHECK(cclsCacheFileName("/src/db/db_impl.cc") == "@src@db@db_impl.cc.blob");
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "@@tmp@project");
    test::writeFile(dir.path() / "@@tmp@project" / "@src@a.cc.blob", "x");
    test::writeFile(dir.path() / "@@tmp@project" / "@src@a.cc", "x"); // the json twin: not a blob
    test::writeFile(dir.path() / "@@tmp@project" / "@src@b.cc", "x");
    CHECK(tusMissingFromCclsCache({"/src/a.cc", "/src/b.cc"}, dir.path()) ==
          std::vector<std::string>{"/src/b.cc"});
    CHECK(tusMissingFromCclsCache({"/src/a.cc"}, dir.path() / "nonexistent") ==
          std::vector<std::string>{"/src/a.cc"});
}

TEST_CASE("clangd: one shard per TU, matched by basename, dotted names included",
          "[bench][peers]") {
    TempDir dir;
    for (const char* shard : {"db_impl.cc.0123ABCD.idx", "env.cc.AAAA.idx", "env.cc.BBBB.idx",
                              "my.file.cc.CCCC.idx", "notashard.txt"})
        test::writeFile(dir.path() / shard, "x");
    CHECK(tusMissingFromClangdShards({"/a/db_impl.cc", "/a/env.cc", "/b/env.cc", "/c/my.file.cc"},
                                     dir.path())
              .empty());
    // Three TUs named env.cc need three shards.
    CHECK(tusMissingFromClangdShards({"/a/env.cc", "/b/env.cc", "/c/env.cc"}, dir.path()) ==
          std::vector<std::string>{"/c/env.cc"});
    CHECK(tusMissingFromClangdShards({"/a/notashard.txt"}, dir.path()).size() == 1);
}

TEST_CASE("LSP framing: messages split across reads, several in one buffer", "[bench][lsp]") {
    const QByteArray one = protocol::frame(QJsonObject{{"id", 1}, {"method", "initialize"}});
    const QByteArray two = protocol::frame(QJsonObject{{"method", "$/progress"}});
    CHECK(one.startsWith("Content-Length: "));
    protocol::FrameReader reader;
    reader.append(one.first(one.size() - 3));
    CHECK_FALSE(takeLspMessage(reader));
    reader.append(one.sliced(one.size() - 3) + two);
    std::optional<QJsonObject> first = takeLspMessage(reader);
    REQUIRE(first);
    CHECK((*first)["method"].toString() == "initialize");
    std::optional<QJsonObject> second = takeLspMessage(reader);
    REQUIRE(second);
    CHECK((*second)["method"].toString() == "$/progress");
    CHECK(reader.buffered() == 0);
    protocol::FrameReader noLength;
    noLength.append("Content-Type: x\r\n\r\n{}");
    CHECK_THROWS(takeLspMessage(noLength));
    protocol::FrameReader notAnObject;
    notAnObject.append(protocol::frame(QByteArray("[1, 2]")));
    CHECK_THROWS(takeLspMessage(notAnObject));
}

TEST_CASE("the peers' compile database: the first entry of each TU symdex indexes",
          "[bench][peers]") {
    TempDir dir;
    test::writeFile(dir.path() / "a.cc", "int a;\n");
    test::writeFile(dir.path() / "b.cc", "int b;\n");
    const std::string d = dir.path().string();
    test::writeFile(dir.path() / "compile_commands.json",
                    "[{\"directory\": \"" + d +
                        "\", \"file\": \"a.cc\", \"command\": \"c++ -DFIRST a.cc\"},"
                        " {\"directory\": \"" +
                        d + "\", \"file\": \"" + d +
                        "/a.cc\", \"command\": \"c++ -DSECOND a.cc\"},"
                        " {\"directory\": \"" +
                        d +
                        "\", \"file\": \"missing.cc\", \"command\": \"c++ missing.cc\"},"
                        " {\"directory\": \"" +
                        d + "\", \"file\": \"b.cc\", \"command\": \"c++ b.cc\"}]");
    std::string error;
    const std::optional<CompileDatabase> db =
        loadCompileDatabase((dir.path() / "compile_commands.json").string(), &error);
    REQUIRE(db);
    writeDeduplicatedDatabase(*db, dir.path() / "peer");
    const QJsonArray entries =
        QJsonDocument::fromJson(QByteArray::fromStdString(
                                    test::readFile(dir.path() / "peer" / "compile_commands.json")))
            .array();
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].toObject()["command"].toString() == "c++ -DFIRST a.cc");
    CHECK(entries[1].toObject()["file"].toString() == "b.cc");
}

TEST_CASE("child processes: exit status, stdout, and CPU of every thread from wait4",
          "[bench][process]") {
    std::string out;
    const ChildExit echo = runToCompletion({"sh", "-c", "echo hello; exit 3"}, {}, &out);
    CHECK(out == "hello\n");
    CHECK_FALSE(echo.succeeded());
    CHECK(echo.describe() == "exit status 3");
    // Two busy processes under one shell: the shell's rusage includes both, as the floor's
    // accounting relies on.
    const ChildExit busy = runToCompletion(
        {"sh", "-c",
         "for i in 1 2; do (i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done) & done; wait"},
        {}, nullptr);
    CHECK(busy.succeeded());
    CHECK(busy.userSeconds() + busy.sysSeconds() > 0.01);
    ChildProcess::Options env;
    env.environment = {"SYMDEX_BENCH_TEST=42"};
    runToCompletion({"sh", "-c", "echo $SYMDEX_BENCH_TEST"}, env, &out);
    CHECK(out == "42\n");
    CHECK_THROWS(ChildProcess::start({"/nonexistent/program"}, {}));
}
