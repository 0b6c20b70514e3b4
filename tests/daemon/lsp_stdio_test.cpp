// `symdex lsp` hands the editor's stdin and stdout to symdexd (protocol::kAdoptStdio): the daemon
// reads the requests and writes the answers itself, the bridge process keeps no copy of either and
// only waits, and the session ends as a whole: the editor closing its pipes ends the bridge, the
// bridge dying ends the daemon's side. SYMDEX_LSP_BRIDGE=1 keeps the byte-copying bridge.
#include "bench/child_process.h"
#include "bench/lsp_connection.h"
#include "daemon_harness.h"

#include <QJsonArray>
#include <catch2/catch.hpp>

#include <climits>
#include <csignal>
#include <fcntl.h>
#include <set>
#include <thread>
#include <unistd.h>

using namespace symdex;
using namespace symdex::test;
using namespace std::chrono_literals;

namespace {

/// What /proc/PID/fd/FD points at ("pipe:[123]", "/dev/null"), or "" if it is not open.
std::string fdTarget(pid_t pid, int fd) {
    char target[PATH_MAX];
    const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    return n > 0 ? std::string(target, size_t(n)) : std::string();
}

/// Everything process `pid` has open.
std::set<std::string> openTargets(pid_t pid) {
    std::set<std::string> targets;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
        std::error_code ec;
        const std::filesystem::path target = std::filesystem::read_symlink(entry.path(), ec);
        if (!ec)
            targets.insert(target.string());
    }
    return targets;
}

/// How many of process `pid`'s descriptors point at `target`.
size_t countOpen(pid_t pid, const std::string& target) {
    size_t n = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
        std::error_code ec;
        n += std::filesystem::read_symlink(entry.path(), ec) == target && !ec;
    }
    return n;
}

int connections(protocol::RpcClient& status) {
    return status.call("symdex/status").toObject()["connections"].toInt();
}

/// Polls until the daemon counts `expected` connections; the last count.
int waitForConnections(protocol::RpcClient& status, int expected) {
    int now = connections(status);
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         now != expected && std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(20ms))
        now = connections(status);
    return now;
}

/// The next answer (a message with an id and no method), skipping notifications.
QJsonObject nextAnswer(bench::LspConnection& lsp, double deadline) {
    for (;;) {
        std::optional<QJsonObject> message = lsp.receive(deadline);
        if (!message)
            FAIL("symdex lsp closed its stdout or sent no answer in time");
        if (message->contains("id") && !message->contains("method"))
            return *message;
    }
}

struct LspSession {
    bench::ChildProcess child;
    bench::LspConnection lsp;
    LspSession(const FixtureTree& tree, std::vector<std::string> environment)
        : child(start(tree, std::move(environment))), lsp(child) {}

    static bench::ChildProcess start(const FixtureTree& tree, std::vector<std::string> env) {
        bench::ChildProcess::Options options;
        options.pipeStdin = options.pipeStdout = true;
        options.stderrPath = tree.dir.path() / "lsp.err";
        options.environment = std::move(env);
        return bench::ChildProcess::start({SYMDEX_CLI_PATH, "lsp", "--root", tree.root.string()},
                                          options);
    }

    /// initialize, then workspace/symbol "helper" until the index holds it: the answer's
    /// location.
    QJsonObject start(const FixtureTree& tree) {
        const double deadline = bench::monotonicSeconds() + 60;
        REQUIRE(lsp.send("initialize",
                         QJsonObject{{"processId", QJsonValue::Null},
                                     {"rootUri", QString::fromStdString(tree.uri(""))},
                                     {"capabilities", QJsonObject{}}},
                         1));
        CHECK(nextAnswer(lsp, deadline)["id"].toInt() == 1);
        REQUIRE(lsp.send("initialized", QJsonObject{}));
        for (int id = 2;; ++id) {
            REQUIRE(lsp.send("workspace/symbol", QJsonObject{{"query", "helper"}}, id));
            const QJsonArray found = nextAnswer(lsp, deadline)["result"].toArray();
            if (!found.isEmpty())
                return found.first().toObject()["location"].toObject();
            REQUIRE(bench::monotonicSeconds() < deadline);
            std::this_thread::sleep_for(50ms);
        }
    }
};

} // namespace

TEST_CASE("symdex lsp hands the editor's stdin and stdout to symdexd, which answers on them "
          "itself, and the session ends as a whole",
          "[daemon][lsp]") {
    FixtureTree tree;
    DaemonProcess daemon(tree);
    auto status = daemon.client();
    REQUIRE(connections(*status) == 1);

    LspSession session(tree, {});
    const QJsonObject location = session.start(tree);
    CHECK(location["uri"].toString().toStdString() == tree.uri("src/main.cpp"));
    CHECK(location["range"].toObject()["start"].toObject()["line"].toInt() == 2);

    // The bridge keeps neither pipe; the daemon holds the one whose other end is ours.
    const pid_t bridge = session.child.pid();
    CHECK(fdTarget(bridge, STDIN_FILENO) == "/dev/null");
    CHECK(fdTarget(bridge, STDOUT_FILENO) == "/dev/null");
    const std::string ourStdout = fdTarget(::getpid(), session.child.stdoutFd());
    REQUIRE(ourStdout.starts_with("pipe:["));
    CHECK(openTargets(daemon.pid()).contains(ourStdout));
    // The status client, the bridge's connection and the session on the pipes.
    CHECK(connections(*status) == 3);

    const double deadline = bench::monotonicSeconds() + 30;
    REQUIRE(session.lsp.send("shutdown", QJsonObject{}, 100));
    CHECK(nextAnswer(session.lsp, deadline)["id"].toInt() == 100);
    REQUIRE(session.lsp.send("exit", QJsonObject{}));
    session.child.closeStdin();
    CHECK(session.child.wait().succeeded());
    CHECK(waitForConnections(*status, 1) == 1);
    CHECK_FALSE(openTargets(daemon.pid()).contains(ourStdout));

    SECTION("the bridge killed: the daemon closes the editor's pipes") {
        LspSession killed(tree, {});
        killed.start(tree);
        CHECK(connections(*status) == 3);
        killed.child.kill(); // reaped below: wait() closes our end of its stdout
        // End of output reaches the editor (nobody holds the write end any more), not the
        // deadline.
        const double eofBy = bench::monotonicSeconds() + 20;
        while (killed.lsp.receive(eofBy)) {
        }
        CHECK(bench::monotonicSeconds() < eofBy);
        killed.child.wait();
        CHECK(waitForConnections(*status, 1) == 1);
    }
}

TEST_CASE("with SYMDEX_LSP_BRIDGE=1 symdex lsp copies the bytes itself", "[daemon][lsp]") {
    FixtureTree tree;
    DaemonProcess daemon(tree);
    auto status = daemon.client();
    LspSession session(tree, {"SYMDEX_LSP_BRIDGE=1"});
    const QJsonObject location = session.start(tree);
    CHECK(location["uri"].toString().toStdString() == tree.uri("src/main.cpp"));
    CHECK(fdTarget(session.child.pid(), STDIN_FILENO).starts_with("pipe:["));
    const std::string ourStdout = fdTarget(::getpid(), session.child.stdoutFd());
    CHECK_FALSE(openTargets(daemon.pid()).contains(ourStdout));
    CHECK(connections(*status) == 2);
    session.child.closeStdin();
    CHECK(session.child.wait().succeeded());
}

TEST_CASE("symdex/adoptStdio needs exactly two descriptors and a connection serving no session",
          "[daemon][lsp][protocol]") {
    FixtureTree tree;
    DaemonProcess daemon(tree);
    auto asking = daemon.client(/*initialize=*/false);
    auto failure = [&](const std::vector<int>& fds) -> std::string {
        const QJsonObject reply = asking->waitForResponse(
            asking->sendPassing(protocol::kAdoptStdio, QJsonObject{}, fds), 10s);
        if (!reply.contains("error"))
            return "adopted";
        CHECK(reply["error"].toObject()["code"].toInt() == protocol::kInvalidParams);
        return reply["error"].toObject()["message"].toString().toStdString();
    };
    const size_t nullsBefore = countOpen(daemon.pid(), "/dev/null");
    CHECK_THAT(failure({}), Catch::Contains("SCM_RIGHTS") && Catch::Contains("got 0"));
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    REQUIRE(null >= 0);
    CHECK_THAT(failure({null}), Catch::Contains("got 1"));
    CHECK_THAT(failure({null, null, null}), Catch::Contains("got 3"));
    // The connection still serves as any other.
    CHECK(asking->initialize()["capabilities"].isObject());
    CHECK_THAT(failure({null, null}), Catch::Contains("serves a session already"));
    ::close(null);
    // The refused descriptors were closed, not kept.
    CHECK(countOpen(daemon.pid(), "/dev/null") == nullsBefore);
    CHECK(asking->call("symdex/status").toObject()["connections"].toInt() == 1);
}
