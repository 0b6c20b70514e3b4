// Child processes for the benchmark: every measured run (symdex, the floor's compiler jobs, ccls,
// clangd) is a process of its own, so that wait4's rusage covers all of its threads, and nothing
// one run warms up is left to the next.
#pragma once

#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <vector>

namespace symdex::bench {

/// How a child ended and what it used, from wait4.
struct ChildExit {
    int status = 0;         ///< as waitpid reports it
    rusage usage{};         ///< the child and the descendants it waited for, all threads
    double wallSeconds = 0; ///< from spawn to the end of wait4

    bool succeeded() const;
    /// "exit status 1", "killed by signal 9", ...
    std::string describe() const;
    double userSeconds() const;
    double sysSeconds() const;
    /// ru_maxrss in MiB. On Linux a spawned child starts from its parent's high-water mark, so this
    /// is never below the bench process's own peak.
    double maxRssMiB() const;
};

/// A running child. Move-only; the destructor kills and reaps a child that was not waited for.
class ChildProcess {
public:
    struct Options {
        /// Working directory of the child; empty: the parent's.
        std::filesystem::path workingDirectory;
        /// Give the child a pipe on stdin (writeAll); otherwise /dev/null.
        bool pipeStdin = false;
        /// Give the child a pipe on stdout (readAll, stdoutFd); otherwise /dev/null.
        bool pipeStdout = false;
        /// Where the child's stderr goes; empty: /dev/null. Appended to.
        std::filesystem::path stderrPath;
        /// "NAME=VALUE" entries set in the child's environment on top of the parent's.
        std::vector<std::string> environment;
    };

    /// Starts `argv` (argv[0] a path, or a name looked up in PATH). Throws std::runtime_error when
    /// it cannot be started.
    static ChildProcess start(const std::vector<std::string>& argv, const Options& options);

    ChildProcess(ChildProcess&& other) noexcept;
    /// Kills and reaps the child this object held, if any, then takes over `other`'s.
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ~ChildProcess();

    pid_t pid() const { return pid_; }
    int stdoutFd() const { return stdoutFd_; }
    /// Writes everything to the child's stdin; false if the child closed it.
    bool writeAll(const std::string& data);
    /// Closes our end of the child's stdin (it sees end of file).
    void closeStdin();
    /// Reads the child's stdout until end of file.
    std::string readAll();
    /// Waits for the child to end. Call once.
    ChildExit wait();
    /// Sends SIGKILL (if still running); wait() must still follow.
    void kill();
    /// Waits for whichever of `children` ends first (they must be the only children this process
    /// has running) and returns its index; `exit` gets how it ended. The ended child is reaped.
    static size_t waitAny(std::vector<ChildProcess>& children, ChildExit* exit);

private:
    ChildProcess() = default;
    void closeFds();

    pid_t pid_ = -1;
    int stdinFd_ = -1;
    int stdoutFd_ = -1;
    double startSeconds_ = 0;
};

/// Runs `argv` to completion and returns its stdout in `output` (when non-null).
ChildExit runToCompletion(const std::vector<std::string>& argv,
                          const ChildProcess::Options& options, std::string* output);

/// The user and system CPU seconds a running process has used so far, all its threads (from
/// /proc/PID/stat, in clock ticks); false when it cannot be read.
bool processCpuSeconds(pid_t pid, double* userSeconds, double* sysSeconds);

/// A monotonic clock in seconds, the one every wall time of the benchmark is read from.
double monotonicSeconds();

/// The absolute path of an executable named `name` in PATH; empty if there is none.
std::string findExecutable(const std::string& name);

} // namespace symdex::bench
