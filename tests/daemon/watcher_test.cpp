// The watcher on a tree of a thousand files: it watches them a slice at a time (the daemon's
// thread also reads requests), every one of them in the end, within its budget, and a change of
// the last one watched is seen.
#include "daemon/index_service.h"
#include "daemon/watcher.h"
#include "test_util.h"

#include <QCoreApplication>
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <thread>

using namespace symdex;
using namespace symdex::daemon;
using namespace std::chrono_literals;

namespace {

/// Runs the event loop until `done()` or `timeout`; whether it was done.
template <typename Done> bool processUntil(Done&& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < deadline)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return done();
}

/// The QCoreApplication a test's watcher needs, with the arguments it keeps pointers to.
struct EventLoop {
    int argc = 1;
    char name[13] = "watcher_test";
    char* argv[2] = {name, nullptr};
    QCoreApplication app{argc, argv};
};

} // namespace

TEST_CASE("the watcher watches a thousand files a slice at a time, all of them in the end, within "
          "its budget",
          "[daemon][watcher]") {
    const EventLoop loop;
    test::TempDir dir;
    const std::filesystem::path src = dir.path() / "src";
    std::filesystem::create_directories(src);
    std::vector<std::string> files = {(dir.path() / "compile_commands.json").string()};
    std::ofstream(files.front()) << "[]";
    for (int i = 0; i < 1000; ++i) {
        files.push_back((src / ("f" + std::to_string(1000 + i) + ".cpp")).string());
        std::ofstream(files.back()) << "int f" << i << ";\n";
    }
    // The tree's directory, the database, src/ and the files.
    const size_t all = 1003;

    std::vector<std::string> changes, logs;
    auto onChanges = [&](std::vector<std::string> paths) {
        changes.insert(changes.end(), paths.begin(), paths.end());
    };
    auto log = [&](const std::string& line) { logs.push_back(line); };

    SECTION("all of them") {
        Watcher watcher(50ms, 100000, onChanges, log);
        watcher.setPaths(files, {});
        const size_t atOnce = watcher.watchedPaths();
        CHECK(atOnce > 0);
        CHECK(atOnce < all); // the rest in later turns of the event loop
        CHECK(processUntil([&] { return watcher.watchedPaths() == all; }, 20s));
        CHECK(logs.empty());
        std::ofstream(files.back(), std::ios::app) << "int g;\n";
        CHECK(processUntil(
            [&] {
                return std::find(changes.begin(), changes.end(), files.back()) != changes.end();
            },
            10s));
    }
    SECTION("within a budget of 300") {
        Watcher watcher(50ms, 300, onChanges, log);
        watcher.setPaths(files, {});
        CHECK(processUntil([&] { return !logs.empty(); }, 20s));
        CHECK(watcher.watchedPaths() == 300);
        REQUIRE(logs.size() == 1);
        CHECK_THAT(logs.front(), Catch::StartsWith("cannot watch 703 of 1003 paths"));
    }
}

TEST_CASE("the watcher reports what changed between the run's look and its watch, and nothing "
          "older",
          "[daemon][watcher]") {
    const EventLoop loop;
    test::TempDir dir;
    const std::filesystem::path src = dir.path() / "src", gen = dir.path() / "gen";
    std::filesystem::create_directories(src);
    const std::string old = (src / "old.cpp").string(), made = (gen / "made.cpp").string();
    std::ofstream(old) << "int old;\n";
    // A coarse clock tick (at most 10 ms) between the files written so far and the run's look.
    std::this_thread::sleep_for(50ms);

    std::vector<std::string> changes;
    auto onChanges = [&](std::vector<std::string> paths) {
        changes.insert(changes.end(), paths.begin(), paths.end());
    };
    auto has = [&](const std::string& path) {
        return std::find(changes.begin(), changes.end(), path) != changes.end();
    };
    Watcher watcher(50ms, 100000, onChanges, {});
    // The run looked (gen/ and made.cpp missing) and listed the paths to watch.
    const auto seenAt = coarseRealTime();
    const std::vector<std::string> files = {old, made};
    const std::vector<std::string> directories = {src.string(), gen.string()};

    SECTION("nothing changed since the look: nothing is reported") {
        watcher.setPaths(files, directories, seenAt);
        processUntil([] { return false; }, 300ms);
        CHECK(changes.empty());
    }
    SECTION("a directory and its file appeared after the look, before the watch") {
        std::filesystem::create_directories(gen);
        std::ofstream(made) << "int made;\n";
        watcher.setPaths(files, directories, seenAt);
        CHECK(processUntil([&] { return has(gen.string()) && has(made); }, 5s));
        CHECK(!has(old));
        CHECK(!has(src.string()));
    }
    SECTION("a file the run had read changed after the look, before the watch") {
        std::ofstream(old, std::ios::app) << "int older;\n";
        watcher.setPaths(files, directories, seenAt);
        CHECK(processUntil([&] { return has(old); }, 5s));
    }
    SECTION("without a time of the look (the daemon's start), nothing is reported") {
        std::filesystem::create_directories(gen);
        std::ofstream(made) << "int made;\n";
        watcher.setPaths(files, directories);
        processUntil([] { return false; }, 300ms);
        CHECK(changes.empty());
    }
    SECTION("paths watched before are not looked at again: their events count") {
        watcher.setPaths(files, directories, seenAt);
        processUntil([] { return false; }, 300ms);
        REQUIRE(changes.empty());
        std::ofstream(old, std::ios::app) << "int older;\n";
        CHECK(processUntil([&] { return has(old); }, 5s));
        changes.clear();
        // A second setPaths() with the same look: old.cpp is watched before, so only its event
        // (already delivered) told; nothing new is reported.
        watcher.setPaths(files, directories, seenAt);
        processUntil([] { return false; }, 300ms);
        CHECK(changes.empty());
    }
}
