#include "bench/ccls_peer.h"

#include "bench/child_process.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <atomic>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

namespace symdex::bench {

std::string cclsCacheFileName(const std::string& sourcePath) {
    std::string name = sourcePath;
    for (char& c : name)
        if (c == '/' || c == ':')
            c = '@';
    return name + ".blob";
}

std::vector<std::string> tusMissingFromCclsCache(const std::vector<std::string>& tus,
                                                 const std::filesystem::path& cacheDirectory) {
    // ccls nests the files under a directory named after the project root: search the tree.
    std::set<std::string> present;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(cacheDirectory, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec))
            present.insert(it->path().filename().string());
    std::vector<std::string> missing;
    for (const std::string& tu : tus)
        if (!present.count(cclsCacheFileName(tu)))
            missing.push_back(tu);
    return missing;
}

CclsPeer::CclsPeer(const PeerSetup& setup)
    : project_(setup.workDirectory / "project"), cache_(setup.workDirectory / "cache"),
      log_(setup.workDirectory / "ccls.log"), timeoutSeconds_(setup.timeoutSeconds) {
    if (findExecutable("ccls").empty())
        throw std::runtime_error("the ccls peer needs ccls (apt-get install ccls, or "
                                 "bench/peers.sh)");
    for (const CompileCommand& c : setup.database->commands)
        tus_.push_back(c.file);
    writeDeduplicatedDatabase(*setup.database, project_);
}

RunRecord CclsPeer::run(unsigned threads, int round) {
    RunRecord run = peerRecord(name(), threads, round, tus_.size());
    std::filesystem::remove_all(cache_);
    const QJsonObject init{{"cache", QJsonObject{{"directory", QString::fromStdString(cache_)}}},
                           {"index", QJsonObject{{"threads", int(threads)}}}};
    const std::string initJson = QJsonDocument(init).toJson(QJsonDocument::Compact).toStdString();
    ChildProcess::Options options;
    options.stderrPath = log_;
    try {
        ChildProcess child = ChildProcess::start(
            {"ccls", "--index=" + project_.string(), "--init=" + initJson, "--log-file=stderr"},
            options);
        // A watchdog: ccls has no timeout of its own in this mode.
        const pid_t pid = child.pid();
        std::atomic<bool> finished{false};
        std::thread watchdog([&] {
            const double deadline = monotonicSeconds() + timeoutSeconds_;
            while (!finished && monotonicSeconds() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (!finished)
                ::kill(pid, SIGKILL);
        });
        const ChildExit exit = child.wait();
        finished = true;
        watchdog.join();
        run.wallSeconds = exit.wallSeconds;
        run.userSeconds = exit.userSeconds();
        run.sysSeconds = exit.sysSeconds();
        run.peakRssMiB = exit.maxRssMiB();
        const std::vector<std::string> missing = tusMissingFromCclsCache(tus_, cache_);
        run.tusIndexed = tus_.size() - missing.size();
        if (!exit.succeeded())
            run.failure = "ccls: " + exit.describe() + " (log: " + log_.string() + ")";
        else if (!missing.empty())
            run.failure = std::to_string(missing.size()) +
                          " TUs have no cache file (first: " + missing.front() + ")";
    } catch (const std::exception& e) {
        run.failure = e.what();
    }
    run.ok = run.failure.empty();
    std::filesystem::remove_all(cache_); // large for big trees, and never reused
    return run;
}

} // namespace symdex::bench
