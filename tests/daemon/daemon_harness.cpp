#include "daemon_harness.h"

#include <QJsonArray>
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace symdex::test {

namespace {

using namespace std::chrono_literals;

pid_t spawn(const std::vector<std::string>& args, const std::string& logPath) {
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int out = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(out, STDERR_FILENO);
        ::dup2(out, STDOUT_FILENO);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

int exitStatus(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> daemonArgs(const FixtureTree& tree, const std::string& socket,
                                    const std::vector<std::string>& extra) {
    std::vector<std::string> args = {SYMDEXD_PATH, "--root", tree.root.string(), "--socket", socket,
                                     "--threads",  "2",      "--debounce",       "100"};
    // The daemon's default, SCHED_IDLE parse threads, gets no CPU at all while the tests run
    // beside it (ctest -j2) keep both cores busy: a run waits for them, and a test's wait runs
    // out (seen under ThreadSanitizer). The tests ask for normal priority unless they name one.
    if (std::find(extra.begin(), extra.end(), "--index-priority") == extra.end())
        args.insert(args.end(), {"--index-priority", "normal"});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

} // namespace

FixtureTree::FixtureTree() : root(dir.path() / "tree") {
    std::filesystem::create_directory(root);
    copyFixture("golden", root);
    sources = {"src/circle.cpp", "src/util.cpp", "src/main.cpp", "src/broken.cpp"};
    writeDatabase();
    ::mkdir((dir.path() / "run").c_str(), 0700);
}

std::string FixtureTree::uri(const std::string& rel) const {
    return "file://" + path(rel);
}

void FixtureTree::addSlowTus(int count) {
    writeFile(root / "include/slow.h",
              "#include <algorithm>\n#include <functional>\n#include <iostream>\n#include <map>\n"
              "#include <memory>\n#include <regex>\n#include <sstream>\n#include <string>\n"
              "#include <unordered_map>\n#include <vector>\n");
    for (int i = 0; i < count; ++i) {
        const std::string rel = "src/slow" + std::to_string(i) + ".cpp";
        writeFile(root / rel, "#include \"slow.h\"\nint slow" + std::to_string(i) + "() { return " +
                                  std::to_string(i) + "; }\n");
        sources.push_back(rel);
    }
    writeDatabase();
}

void FixtureTree::writeDatabase() {
    writeCompileDb(root, sources, {"-std=c++17", "-Iinclude"});
}

DaemonProcess::DaemonProcess(const FixtureTree& tree, std::vector<std::string> args)
    : socket_((tree.dir.path() / "run/symdexd.sock").string()),
      logPath_((tree.dir.path() / "symdexd.log").string()) {
    pid_ = spawn(daemonArgs(tree, socket_, args), logPath_);
    std::string error;
    for (auto deadline = std::chrono::steady_clock::now() + 30s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms)) {
        int status;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            FAIL("symdexd exited at start: " << log());
        }
        if (protocol::RpcClient::connect(socket_, &error))
            return;
    }
    FAIL("symdexd did not listen within 30 s: " << error << "\n" << log());
}

DaemonProcess::~DaemonProcess() {
    if (pid_ <= 0)
        return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 3000; ++i) {
        int status;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            checkExit(status);
            return;
        }
        std::this_thread::sleep_for(10ms);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    FAIL_CHECK("symdexd did not exit within 30 s of SIGTERM:\n" << log());
}

void DaemonProcess::checkExit(int status) const {
    // A sanitizer report in the daemon (a child process) must fail the test that ran it.
    const std::string text = log();
    if (exitStatus(status) != 0 || text.find("Sanitizer") != std::string::npos ||
        text.find("runtime error:") != std::string::npos)
        FAIL_CHECK("symdexd exited with status " << exitStatus(status) << ":\n" << text);
}

std::unique_ptr<protocol::RpcClient> DaemonProcess::client(bool initialize) const {
    std::string error;
    auto client = protocol::RpcClient::connect(socket_, &error);
    INFO(error);
    REQUIRE(client);
    if (initialize)
        client->initialize();
    return client;
}

int DaemonProcess::terminate() {
    REQUIRE(pid_ > 0);
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    checkExit(status);
    return exitStatus(status);
}

std::optional<int> DaemonProcess::waitForExit(std::chrono::milliseconds timeout) {
    REQUIRE(pid_ > 0);
    for (auto deadline = std::chrono::steady_clock::now() + timeout;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(10ms)) {
        int status;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            const std::string text = log();
            if (text.find("Sanitizer") != std::string::npos ||
                text.find("runtime error:") != std::string::npos)
                FAIL_CHECK("symdexd logged a sanitizer report:\n" << text);
            return exitStatus(status);
        }
    }
    return std::nullopt;
}

std::string DaemonProcess::log() const {
    return readFile(logPath_);
}

std::pair<int, std::string> runDaemonToExit(const FixtureTree& tree,
                                            const std::vector<std::string>& args) {
    const std::string logPath = (tree.dir.path() / "refused.log").string();
    std::vector<std::string> argv = {SYMDEXD_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = spawn(argv, logPath);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {exitStatus(status), readFile(logPath)};
}

QJsonObject waitUntilIdle(protocol::RpcClient& client, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const QJsonObject status = client.call("symdex/status").toObject();
        const QJsonObject queue = status["queue"].toObject();
        if (status["state"].toString() == "idle" && status["runs"].toInt() >= 1 &&
            !queue["runPending"].toBool() && queue["pendingChanges"].toInt() == 0) {
            // The runs waited for are over: their notifications must not answer a later wait.
            std::erase_if(client.notifications(), [](const QJsonObject& m) {
                return m["method"].toString() == "symdex/reindexed";
            });
            return status;
        }
        if (std::chrono::steady_clock::now() > deadline)
            FAIL("the daemon did not become idle");
        std::this_thread::sleep_for(20ms);
    }
}

QJsonObject waitForReindex(protocol::RpcClient& client, std::chrono::milliseconds timeout,
                           qint64 afterRun) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        std::optional<QJsonObject> note =
            client.waitForNotification("symdex/reindexed", std::max(left, 0ms));
        REQUIRE(note);
        const QJsonObject params = (*note)["params"].toObject();
        if (params["run"].toInteger() > afterRun)
            return params;
    }
}

QJsonObject positionParams(const std::string& uri, int line, int character) {
    return QJsonObject{{"textDocument", QJsonObject{{"uri", QString::fromStdString(uri)}}},
                       {"position", QJsonObject{{"line", line}, {"character", character}}}};
}

std::vector<std::string> locations(const QJsonValue& result, const FixtureTree& tree) {
    std::vector<std::string> out;
    const std::string prefix = "file://" + tree.root.string() + "/";
    for (const QJsonValue& v : result.toArray()) {
        const QJsonObject o = v.toObject();
        std::string uri = o["uri"].toString().toStdString();
        if (uri.starts_with(prefix))
            uri = uri.substr(prefix.size());
        const QJsonObject start = o["range"]["start"].toObject();
        const QJsonObject end = o["range"]["end"].toObject();
        out.push_back(uri + ":" + std::to_string(start["line"].toInt()) + ":" +
                      std::to_string(start["character"].toInt()) + "-" +
                      std::to_string(end["line"].toInt()) + ":" +
                      std::to_string(end["character"].toInt()));
    }
    return out;
}

std::vector<std::string> relativePaths(const QJsonValue& array, const FixtureTree& tree) {
    std::vector<std::string> out;
    const std::string prefix = tree.root.string() + "/";
    for (const QJsonValue& v : array.toArray()) {
        std::string p = v.toString().toStdString();
        out.push_back(p.starts_with(prefix) ? p.substr(prefix.size()) : p);
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace symdex::test
