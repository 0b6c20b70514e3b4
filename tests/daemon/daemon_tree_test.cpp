// symdexd follows the tree (issue 18): files that appear in the directories that matter are
// indexed, a file moved away and back comes back, an empty or all-missing compile database keeps
// the store (and says why), and SIGTERM at any moment of start-up is a clean exit.
#include "daemon/index_service.h"
#include "daemon_harness.h"

#include <QJsonArray>
#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace symdex;
using namespace symdex::test;
using namespace std::chrono_literals;
using daemon::includeDirectories;
using daemon::watchDirectories;
using protocol::RpcClient;

namespace {

size_t found(RpcClient& client, const std::string& name) {
    return size_t(client.call("symdex/find", QJsonObject{{"pattern", QString::fromStdString(name)}})
                      .toArray()
                      .size());
}

/// Polls symdex/find until `name` has `count` matches; false after `timeout`.
bool waitForCount(RpcClient& client, const std::string& name, size_t count,
                  std::chrono::milliseconds timeout = 30s) {
    for (auto deadline = std::chrono::steady_clock::now() + timeout;;
         std::this_thread::sleep_for(50ms)) {
        if (found(client, name) == count)
            return true;
        if (std::chrono::steady_clock::now() > deadline)
            return false;
    }
}

bool contains(const QJsonValue& array, const std::string& needle) {
    for (const QJsonValue& v : array.toArray())
        if (v.toString().toStdString().find(needle) != std::string::npos)
            return true;
    return false;
}

} // namespace

TEST_CASE("daemon tree: the directories watched are those of the entries, their include "
          "directories and the indexed files",
          "[watch]") {
    CompileDatabase db;
    db.commands.push_back(
        {"/t/src/a.cpp",
         "/t/build",
         {"c++", "-I../inc", "-iquote", "q", "-isystem/sys", "-idirafter", "after",
          "--include-directory=/x", "-include", "pre.h", "-isysroot", "/r"}});
    db.missingFiles = {"/t/gen/b.cpp"};
    CHECK(includeDirectories(db.commands[0]) ==
          std::vector<std::string>{"/t/inc", "/t/build/q", "/sys", "/t/build/after", "/x"});
    CHECK(watchDirectories(db, {"/t/inc/h.h", "/usr/include/stdio.h"}) ==
          std::vector<std::string>{"/t/src", "/t/gen", "/t/inc", "/t/build/q", "/sys",
                                   "/t/build/after", "/x", "/usr/include"});
    CHECK(watchDirectories(db, {}, 2) ==
          std::vector<std::string>{"/t/src", "/t/gen", "/t/inc", "/t/build/q"});
}

TEST_CASE("daemon tree: a database entry whose file is missing at start is indexed when it "
          "appears",
          "[daemon][watch]") {
    FixtureTree tree;
    tree.sources.push_back("src/late.cpp");
    tree.sources.push_back("gen/made.cpp"); // its directory does not exist either
    tree.writeDatabase();
    DaemonProcess daemon(tree);
    auto client = daemon.client();
    const QJsonObject status = waitUntilIdle(*client);
    CHECK(status["tus"].toInt() == 4);
    CHECK(found(*client, "lateFunction") == 0);

    writeFile(tree.root / "src/late.cpp", "int lateFunction() { return 1; }\n");
    CHECK(waitForCount(*client, "lateFunction", 1));

    std::filesystem::create_directory(tree.root / "gen");
    writeFile(tree.root / "gen/made.cpp", "int madeFunction() { return 2; }\n");
    CHECK(waitForCount(*client, "madeFunction", 1));
    CHECK(waitUntilIdle(*client)["tus"].toInt() == 6);
}

TEST_CASE("daemon tree: a source moved away and back is indexed again", "[daemon][watch]") {
    FixtureTree tree;
    writeFile(tree.root / "src/moving.cpp", "int movingFunction() { return 3; }\n");
    tree.sources.push_back("src/moving.cpp");
    tree.writeDatabase();
    DaemonProcess daemon(tree);
    auto client = daemon.client();
    waitUntilIdle(*client);
    REQUIRE(found(*client, "movingFunction") == 1);

    const std::filesystem::path aside = tree.dir.path() / "moving.cpp";
    std::filesystem::rename(tree.root / "src/moving.cpp", aside);
    CHECK(waitForCount(*client, "movingFunction", 0)); // a clean index of this tree has no TU
    std::filesystem::rename(aside, tree.root / "src/moving.cpp");
    CHECK(waitForCount(*client, "movingFunction", 1));
    // And once more: the second round trip must work as the first.
    std::filesystem::rename(tree.root / "src/moving.cpp", aside);
    CHECK(waitForCount(*client, "movingFunction", 0));
    std::filesystem::rename(aside, tree.root / "src/moving.cpp");
    CHECK(waitForCount(*client, "movingFunction", 1));
}

TEST_CASE("daemon tree: a header created in an include directory starts a run", "[daemon][watch]") {
    FixtureTree tree;
    // gen/ does not exist yet: a generated-header directory a build creates later.
    writeCompileDb(tree.root, tree.sources, {"-std=c++17", "-Iinclude", "-Igen"});
    DaemonProcess daemon(tree);
    auto client = daemon.client();
    const int runs = waitUntilIdle(*client)["runs"].toInt();
    // Runs do not feed themselves: nothing a run writes lies in a watched directory.
    std::this_thread::sleep_for(600ms);
    REQUIRE(waitUntilIdle(*client)["runs"].toInt() == runs);

    SECTION("an existing include directory") {
        writeFile(tree.root / "include/version.h", "#define VERSION 2\n");
        const QJsonObject run = waitForReindex(*client, 60s, runs);
        CHECK(contains(run["trigger"], tree.path("include")));
    }
    SECTION("an include directory that did not exist") {
        std::filesystem::create_directory(tree.root / "gen");
        writeFile(tree.root / "gen/version.h", "#define VERSION 2\n");
        const QJsonObject run = waitForReindex(*client, 60s, runs);
        CHECK(run["error"].isUndefined());
        const qint64 after = waitUntilIdle(*client)["runs"].toInteger();
        // gen/ is watched itself now: a second header there starts another run.
        writeFile(tree.root / "gen/config.h", "#define CONFIG 1\n");
        CHECK(contains(waitForReindex(*client, 60s, after)["trigger"], tree.path("gen")));
    }
}

TEST_CASE("daemon tree: short of inotify watches, it logs what it left out and still serves",
          "[daemon][watch]") {
    FixtureTree tree;
    DaemonProcess daemon(tree, {"--max-watches", "3"});
    auto client = daemon.client();
    waitUntilIdle(*client);
    CHECK(found(*client, "Circle") > 0);
    // The database and the entries' directory come first: a new source there is still seen.
    // How many paths there are depends on what the TUs looked for in vain, too.
    const std::string log = daemon.log();
    const size_t line = log.find("symdexd: cannot watch ");
    REQUIRE(line != std::string::npos);
    CHECK(log.find(" paths", line) != std::string::npos);
    writeFile(tree.root / "src/added.cpp", "int addedFunction() { return 4; }\n");
    tree.sources.push_back("src/added.cpp");
    tree.writeDatabase();
    CHECK(waitForCount(*client, "addedFunction", 1));
}

TEST_CASE("daemon tree: an empty or all-missing compile database keeps the store",
          "[daemon][watch]") {
    FixtureTree tree;
    DaemonProcess daemon(tree);
    auto client = daemon.client();
    // Runs up to this one are over; their notification may still be on its way.
    const qint64 runsBefore = waitUntilIdle(*client)["runs"].toInteger();
    REQUIRE(found(*client, "Circle") > 0);
    const size_t circles = found(*client, "Circle");

    SECTION("the database becomes []") {
        // Replaced whole (a rename), as build tools write it: written in place, the watcher may
        // start a run on the empty file between the truncation and the write. Written outside
        // the watched directory: a new file beside the database starts a run too.
        writeFile(tree.dir.path() / "compile_commands.json.new", "[]\n");
        std::filesystem::rename(tree.dir.path() / "compile_commands.json.new",
                                tree.root / "compile_commands.json");
        const QJsonObject run = waitForReindex(*client, 60s, runsBefore);
        const std::string kept = run["kept"].toString().toStdString();
        CHECK(kept.find("'" + tree.path("compile_commands.json") + "' has no entries") !=
              std::string::npos);
        const QJsonObject status = waitUntilIdle(*client);
        CHECK(status["tus"].toInt() == 4);
        CHECK(status["lastRun"]["kept"].toString() == run["kept"].toString());
        CHECK(found(*client, "Circle") == circles);
        CHECK(daemon.log().find("has no entries") != std::string::npos);

        tree.writeDatabase();
        const QJsonObject back = waitForReindex(*client, 60s, run["run"].toInteger());
        CHECK(back["kept"].isUndefined());
        CHECK(back["tusTotal"].toInt() == 4);
        CHECK(found(*client, "Circle") == circles);
    }
    SECTION("every entry names a missing file, then the files come back") {
        const std::filesystem::path aside = tree.dir.path() / "src-aside";
        std::filesystem::rename(tree.root / "src", aside);
        INFO("daemon log:\n" << daemon.log());
        const QJsonObject run = waitForReindex(*client, 60s, runsBefore);
        CHECK(run["kept"].toString().toStdString().find("none of the 4 files") !=
              std::string::npos);
        CHECK(run["skipped"].toArray().size() == 4);
        CHECK(contains(run["skipped"], tree.path("src/circle.cpp") + "' does not exist; skipped"));
        const QJsonObject status = waitUntilIdle(*client);
        CHECK(status["tus"].toInt() == 4);
        CHECK(found(*client, "Circle") == circles);
        CHECK(daemon.log().find(tree.path("src/util.cpp") + "' does not exist; skipped") !=
              std::string::npos);

        std::filesystem::rename(aside, tree.root / "src");
        const QJsonObject back = waitForReindex(*client, 60s, run["run"].toInteger());
        CHECK(back["kept"].isUndefined());
        CHECK(back["skipped"].toArray().isEmpty());
        CHECK(back["tusTotal"].toInt() == 4);
        CHECK(found(*client, "Circle") == circles);
    }
    SECTION("some entries missing: their TUs go, and the skipped entries are reported") {
        const std::filesystem::path aside = tree.dir.path() / "util.cpp";
        std::filesystem::rename(tree.root / "src/util.cpp", aside);
        const QJsonObject run = waitForReindex(*client, 60s, runsBefore);
        CHECK(run["kept"].isUndefined());
        CHECK(run["tusRemoved"].toInt() == 1);
        CHECK(run["skipped"].toArray().size() == 1);
        CHECK(daemon.log().find(tree.path("src/util.cpp") + "' does not exist; skipped") !=
              std::string::npos);
        CHECK(waitUntilIdle(*client)["tus"].toInt() == 3);
    }
    SECTION("symdex/index with pruneEmpty drops everything") {
        writeFile(tree.dir.path() / "compile_commands.json.new", "[]\n");
        std::filesystem::rename(tree.dir.path() / "compile_commands.json.new",
                                tree.root / "compile_commands.json");
        CHECK_FALSE(waitForReindex(*client, 60s, runsBefore)["kept"].isUndefined());
        const qint64 emptied = waitUntilIdle(*client)["runs"].toInteger();
        client->call("symdex/index", QJsonObject{{"pruneEmpty", true}});
        const QJsonObject run = waitForReindex(*client, 60s, emptied);
        CHECK(run["kept"].isUndefined());
        CHECK(run["tusRemoved"].toInt() == 4);
        CHECK(waitUntilIdle(*client)["tus"].toInt() == 0);
        CHECK(found(*client, "Circle") == 0);
    }
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// Not under sanitizers: their runtimes initialize after .preinit_array, so symdexd installs its
// handlers in main there, after the libraries' initializers.
TEST_CASE("daemon tree: SIGTERM at any moment of start-up exits 0 with a log line",
          "[daemon][signal]") {
    // What no program can help: a signal that lands while ld.so is still mapping and relocating
    // the libraries (libLLVM's relocations: ~5 ms idle, far more on a loaded machine) finds the
    // default action, as no code of the program has run yet. So the child runs with
    // LD_DEBUG=libs: a kill after which ld.so had begun calling initializers ("calling
    // init") found the program running and must end in a clean exit. Before the fix the
    // handlers came after the libraries' initializers and Qt's start, ~70 ms of which every kill
    // died by signal.
    FixtureTree tree;
    const std::string run = (tree.dir.path() / "run").string();
    const std::string logPath = (tree.dir.path() / "early.log").string();
    const std::string ldPrefix = (tree.dir.path() / "ld").string();
    const std::string exe = std::filesystem::canonical(SYMDEXD_PATH).string();
    std::vector<std::string> env = {"LD_DEBUG=libs", "LD_DEBUG_OUTPUT=" + ldPrefix};
    for (char** e = environ; *e; ++e)
        if (!std::string_view(*e).starts_with("LD_DEBUG"))
            env.push_back(*e);
    std::vector<char*> envp;
    for (std::string& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    int running = 0;
    for (int i = 0; i < 20; ++i) {
        // 0-475 ms: on a loaded machine ld.so alone can take 150 ms.
        const auto delay = std::chrono::milliseconds(i * 25);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const int out = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            ::dup2(out, STDERR_FILENO);
            ::dup2(out, STDOUT_FILENO);
            ::execle(exe.c_str(), exe.c_str(), "--root", tree.root.c_str(), "--socket",
                     (run + "/s.sock").c_str(), "--threads", "1", nullptr, envp.data());
            ::_exit(127);
        }
        // The delay counts from the exec: before it, the child is still this test binary.
        const std::string exeLink = "/proc/" + std::to_string(pid) + "/exe";
        for (int k = 0; k < 20000; ++k) {
            std::error_code ec;
            if (std::filesystem::read_symlink(exeLink, ec) == exe)
                break;
            std::this_thread::sleep_for(100us);
        }
        std::this_thread::sleep_for(delay);
        ::kill(pid, SIGTERM);
        int status = 0;
        ::waitpid(pid, &status, 0);
        const std::string ldLog = ldPrefix + "." + std::to_string(pid);
        // "calling init" comes after symdexd's preinit returned (not "calling preinit", printed
        // before it runs).
        const bool pastLoader = readFile(ldLog).find("calling init:") != std::string::npos;
        std::filesystem::remove(ldLog);
        if (!pastLoader)
            continue;
        ++running;
        const std::string log = readFile(logPath);
        INFO("SIGTERM " << delay.count() << " ms after exec; log:\n" << log);
        CHECK((WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status)) == 0);
        CHECK(log.find("symdexd: signal 15, stopping") != std::string::npos);
    }
    // Most kills find the program running, even on a loaded machine.
    CHECK(running >= 3);
}
#endif

#ifdef SYMDEX_CLI_PATH
TEST_CASE("symdex index on an empty compile database keeps the store unless --prune-empty",
          "[cli][watch]") {
    FixtureTree tree;
    auto run = [&](const std::string& args) {
        const std::string command = "cd '" + tree.root.string() + "' && " SYMDEX_CLI_PATH " " +
                                    args + " 2>&1; echo \"exit $?\"";
        std::string out;
        FILE* p = ::popen(command.c_str(), "r");
        REQUIRE(p);
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
            out.append(buf, n);
        ::pclose(p);
        return out;
    };
    REQUIRE(run("index -q -p .").find("exit 0") != std::string::npos);
    const std::string db = tree.path("compile_commands.json");
    writeFile(db, "[]\n");
    const std::string refused = run("index -q -p .");
    INFO(refused);
    CHECK(refused.find("symdex index: the compilation database '" + db +
                       "' has no entries; the store '" + tree.path(".symdex") +
                       "' keeps its 4 TUs (pass --prune-empty to remove them)") !=
          std::string::npos);
    CHECK(refused.find("exit 2") != std::string::npos);
    CHECK(run("find Circle").find("exit 0") != std::string::npos);

    writeCompileDb(tree.root, {"src/gone.cpp"}, {"-std=c++17"});
    const std::string missing = run("index -q -p .");
    CHECK(missing.find("src/gone.cpp' does not exist; skipped") != std::string::npos);
    CHECK(missing.find("none of the 1 files named by '" + db + "' exists") != std::string::npos);
    CHECK(missing.find("exit 2") != std::string::npos);
    CHECK(run("find Circle").find("exit 0") != std::string::npos);

    const std::string pruned = run("index -q -p . --prune-empty");
    CHECK(pruned.find("exit 0") != std::string::npos);
    CHECK(pruned.find("removed: 4 TUs") != std::string::npos);
    CHECK(run("find Circle").find("exit 1") != std::string::npos);
}
#endif
