#include "bench/floor_peer.h"

#include "bench/child_process.h"

#include <algorithm>
#include <stdexcept>

namespace symdex::bench {

std::vector<std::string> floorCommand(const CompileCommand& command) {
    const std::string compiler =
        command.arguments.empty()
            ? std::string()
            : std::filesystem::path(command.arguments.front()).filename().string();
    std::vector<std::string> argv{
        compiler.find("++") != std::string::npos ? "clang++-16" : "clang-16", "-fsyntax-only"};
    // compile_db.cpp already dropped -o, -c, -M* and -Werror: a compiler that only parses must
    // not stop at the first warning the original compiler would have let through.
    for (size_t i = 1; i < command.arguments.size(); ++i)
        argv.push_back(command.arguments[i]);
    argv.push_back(command.file);
    return argv;
}

FloorPeer::FloorPeer(const PeerSetup& setup) : log_(setup.workDirectory / "floor.log") {
    if (findExecutable("clang++-16").empty() || findExecutable("clang-16").empty())
        throw std::runtime_error("the floor needs clang-16 (apt-get install clang-16, or "
                                 "bench/peers.sh)");
    for (const CompileCommand& c : setup.database->commands)
        jobs_.push_back({floorCommand(c), c.directory});
}

RunRecord FloorPeer::run(unsigned threads, int round) {
    RunRecord run = peerRecord(name(), threads, round, jobs_.size());
    std::vector<ChildProcess> running;
    std::vector<std::string> failures;
    size_t next = 0;
    const double start = monotonicSeconds();
    try {
        while (next < jobs_.size() || !running.empty()) {
            while (next < jobs_.size() && running.size() < std::max(1u, threads)) {
                ChildProcess::Options options;
                options.workingDirectory = jobs_[next].directory;
                options.stderrPath = log_;
                running.push_back(ChildProcess::start(jobs_[next].argv, options));
                ++next;
            }
            ChildExit exit;
            const size_t done = ChildProcess::waitAny(running, &exit);
            running.erase(running.begin() + std::ptrdiff_t(done));
            run.userSeconds += exit.userSeconds();
            run.sysSeconds += exit.sysSeconds();
            run.peakRssMiB = std::max(run.peakRssMiB, exit.maxRssMiB());
            if (exit.succeeded())
                ++run.tusIndexed;
            else
                failures.push_back(exit.describe());
        }
    } catch (const std::exception& e) {
        failures.push_back(e.what());
    }
    run.wallSeconds = monotonicSeconds() - start;
    run.ok = failures.empty() && run.tusIndexed == jobs_.size();
    if (!run.ok)
        run.failure = std::to_string(jobs_.size() - run.tusIndexed) + " of " +
                      std::to_string(jobs_.size()) + " TUs did not parse cleanly (first: " +
                      (failures.empty() ? std::string("?") : failures.front()) + "; see " +
                      log_.string() + ")";
    return run;
}

} // namespace symdex::bench
