// Answers of any size (issue 18): the outline of a file of 100,000 functions and a find with a
// large limit, through symdexd's socket, the symdex CLI and the `symdex lsp` bridge. Requests are
// bounded (16 MiB), answers are not: a legitimate answer must arrive whole, however large, and
// several unread at once must not cost the client its connection. The file (5.7 MB) is generated
// at test time, never committed.
#include "bench/child_process.h"
#include "bench/lsp_connection.h"
#include "daemon_harness.h"

#include <QJsonArray>
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <set>
#include <thread>

using namespace symdex;
using namespace symdex::test;
using namespace std::chrono_literals;

namespace {

constexpr int kFunctions = 100000;

/// src/outline.cpp, kFunctions one-line functions outline_fn_NNNNNN, added to the database.
void addLargeFile(FixtureTree& tree) {
    std::string text;
    text.reserve(size_t(kFunctions) * 64);
    char line[96];
    for (int i = 0; i < kFunctions; ++i) {
        std::snprintf(line, sizeof line, "int outline_fn_%06d(int value) { return value + %d; }\n",
                      i, i);
        text += line;
    }
    writeFile(tree.root / "src/outline.cpp", text);
    tree.sources.push_back("src/outline.cpp");
    tree.writeDatabase();
}

struct CliRun {
    int exitStatus;
    std::string out;
    std::string err;
};

/// `symdex ARGS` in the tree's root.
CliRun runCli(const FixtureTree& tree, const std::string& args) {
    const std::filesystem::path errPath = tree.dir.path() / "cli.err";
    const std::string command = "cd '" + tree.root.string() + "' && " SYMDEX_CLI_PATH " " + args +
                                " 2>'" + errPath.string() + "'";
    FILE* p = ::popen(command.c_str(), "r");
    REQUIRE(p);
    CliRun run;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
        run.out.append(buf, n);
    const int status = ::pclose(p);
    run.exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(errPath);
    run.err.assign(std::istreambuf_iterator<char>(err), {});
    return run;
}

size_t lineCount(const std::string& text) {
    return size_t(std::count(text.begin(), text.end(), '\n'));
}

/// Requests the daemon's workers answered since `before` (a first symdex/status result), not
/// counting the `polls` status calls made since.
int answeredSince(protocol::RpcClient& status, int before, int polls) {
    return status.call("symdex/status").toObject()["requestsAnswered"].toInt() - before - polls;
}

/// The next answer through `lsp`, skipping notifications and the daemon's own requests.
QJsonObject nextAnswer(bench::LspConnection& lsp, double deadline) {
    for (;;) {
        std::optional<QJsonObject> message = lsp.receive(deadline);
        if (!message)
            FAIL("symdex lsp closed its stdout or sent no answer in time");
        if (!message->contains("method"))
            return *message;
    }
}

/// The golden tree plus src/outline.cpp, served by a daemon that has indexed it all.
struct LargeTree {
    // Indexing 100,000 functions is slow in the sanitizer builds and beside other jobs (a run of
    // CI beside callgrind jobs missed the default 120 s): a generous wait, not a measurement.
    LargeTree() { waitUntilIdle(*status, std::chrono::seconds(300)); }
    FixtureTree tree;
    const bool added = (addLargeFile(tree), true); // before the daemon starts on the tree
    DaemonProcess daemon{tree};
    std::unique_ptr<protocol::RpcClient> status = daemon.client(/*initialize=*/false);
};

} // namespace

TEST_CASE("answers: symdex symbols through symdexd prints all 100,000 symbols of a file",
          "[daemon][cli]") {
    LargeTree large;
    const CliRun direct = runCli(large.tree, "symbols src/outline.cpp --daemon never");
    const CliRun viaDaemon = runCli(large.tree, "symbols src/outline.cpp --daemon always");
    INFO(viaDaemon.err);
    CHECK(viaDaemon.exitStatus == 0);
    CHECK(lineCount(viaDaemon.out) == size_t(kFunctions));
    CHECK(viaDaemon.out == direct.out);
    CHECK(large.status->call("symdex/status").toObject()["state"].toString() == "idle");
}

TEST_CASE("answers: symdex find --limit through symdexd prints all 100,000 matches",
          "[daemon][cli]") {
    LargeTree large;
    const CliRun direct = runCli(large.tree, "find outline_fn_ --limit 150000 --daemon never");
    const CliRun viaDaemon = runCli(large.tree, "find outline_fn_ --limit 150000 --daemon always");
    INFO(viaDaemon.err);
    CHECK(viaDaemon.exitStatus == 0);
    CHECK(lineCount(viaDaemon.out) == size_t(kFunctions));
    CHECK(viaDaemon.out == direct.out);
}

TEST_CASE("answers: three unread documentSymbol answers of 100,000 symbols through symdex lsp",
          "[daemon][lsp]") {
    LargeTree large;
    bench::ChildProcess::Options options;
    options.pipeStdin = options.pipeStdout = true;
    options.stderrPath = large.tree.dir.path() / "lsp.err";
    bench::ChildProcess child = bench::ChildProcess::start(
        {SYMDEX_CLI_PATH, "lsp", "--root", large.tree.root.string()}, options);
    bench::LspConnection lsp(child);
    const double deadline = bench::monotonicSeconds() + 120;
    REQUIRE(lsp.send("initialize",
                     QJsonObject{{"processId", QJsonValue::Null},
                                 {"rootUri", QString::fromStdString(large.tree.uri(""))},
                                 {"capabilities", QJsonObject{}}},
                     1));
    CHECK(nextAnswer(lsp, deadline)["id"].toInt() == 1);
    REQUIRE(lsp.send("initialized", QJsonObject{}));

    const int before = large.status->call("symdex/status").toObject()["requestsAnswered"].toInt();
    const QJsonObject params{
        {"textDocument",
         QJsonObject{{"uri", QString::fromStdString(large.tree.uri("src/outline.cpp"))}}}};
    for (int id = 2; id <= 4; ++id)
        REQUIRE(lsp.send("textDocument/documentSymbol", params, id));
    // An editor busy elsewhere: all three answers (23 MB each, 69 MB together) wait in the daemon
    // before the first is read.
    int polls = 1;
    while (answeredSince(*large.status, before, polls) < 3) {
        REQUIRE(bench::monotonicSeconds() < deadline);
        ++polls;
        std::this_thread::sleep_for(50ms);
    }
    std::this_thread::sleep_for(300ms); // from the worker to the connection's buffer
    std::set<int> ids;
    for (int i = 0; i < 3; ++i) {
        const QJsonObject answer = nextAnswer(lsp, deadline); // in any order
        ids.insert(answer["id"].toInt());
        const QJsonArray symbols = answer["result"].toArray();
        CHECK(symbols.size() == kFunctions);
        if (!symbols.isEmpty()) {
            CHECK(symbols.first()["name"].toString() == "outline_fn_000000");
            CHECK(symbols.last()["name"].toString() == "outline_fn_099999");
        }
    }
    CHECK(ids == std::set<int>{2, 3, 4});
    REQUIRE(lsp.send("shutdown", QJsonObject{}, 5));
    CHECK(nextAnswer(lsp, deadline)["id"].toInt() == 5);
    REQUIRE(lsp.send("exit", QJsonObject{}));
    child.closeStdin();
    CHECK(child.wait().succeeded());
}
