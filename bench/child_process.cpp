#include "bench/child_process.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace symdex::bench {

namespace {

double seconds(const timeval& t) {
    return double(t.tv_sec) + double(t.tv_usec) / 1e6;
}

void closeIfOpen(int& fd) {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

/// posix_spawn file actions, destroyed with the object.
class SpawnActions {
public:
    SpawnActions() { posix_spawn_file_actions_init(&actions_); }
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
    posix_spawn_file_actions_t* get() { return &actions_; }

private:
    posix_spawn_file_actions_t actions_;
};

} // namespace

bool ChildExit::succeeded() const {
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string ChildExit::describe() const {
    if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

double ChildExit::userSeconds() const {
    return seconds(usage.ru_utime);
}

double ChildExit::sysSeconds() const {
    return seconds(usage.ru_stime);
}

double ChildExit::maxRssMiB() const {
    return double(usage.ru_maxrss) / 1024.0; // Linux reports KiB
}

bool processCpuSeconds(pid_t pid, double* userSeconds, double* sysSeconds) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat))
        return false;
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    int i = 3;
    for (; i <= 15 && fields >> field; ++i) {
        if (i == 14)
            utime = std::stoull(field);
        else if (i == 15)
            stime = std::stoull(field);
    }
    if (i <= 15)
        return false; // the line ended before stime: no figure rather than a zero one
    const double tick = double(::sysconf(_SC_CLK_TCK));
    *userSeconds = double(utime) / tick;
    *sysSeconds = double(stime) / tick;
    return true;
}

double monotonicSeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string findExecutable(const std::string& name) {
    if (name.find('/') != std::string::npos)
        return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (size_t begin = 0; begin <= dirs.size();) {
        size_t end = dirs.find(':', begin);
        if (end == std::string::npos)
            end = dirs.size();
        const std::string candidate =
            (end > begin ? dirs.substr(begin, end - begin) : std::string(".")) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        begin = end + 1;
    }
    return {};
}

ChildProcess ChildProcess::start(const std::vector<std::string>& argv, const Options& options) {
    if (argv.empty())
        throw std::runtime_error("no command to run");
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if ((options.pipeStdin && ::pipe2(in, O_CLOEXEC) != 0) ||
        (options.pipeStdout && ::pipe2(out, O_CLOEXEC) != 0))
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    SpawnActions actions;
    // dup2 clears FD_CLOEXEC on the target, so only the child's 0/1/2 survive the exec.
    if (options.pipeStdin)
        posix_spawn_file_actions_adddup2(actions.get(), in[0], STDIN_FILENO);
    else
        posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (options.pipeStdout)
        posix_spawn_file_actions_adddup2(actions.get(), out[1], STDOUT_FILENO);
    else
        posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (!options.stderrPath.empty())
        posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, options.stderrPath.c_str(),
                                         O_WRONLY | O_CREAT | O_APPEND, 0644);
    else
        posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    if (!options.workingDirectory.empty())
        posix_spawn_file_actions_addchdir_np(actions.get(), options.workingDirectory.c_str());

    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // The parent's environment with the overrides replacing variables of the same name.
    std::vector<std::string> overrides = options.environment;
    std::vector<char*> env;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        const std::string_view name = entry.substr(0, entry.find('='));
        const bool replaced = std::any_of(overrides.begin(), overrides.end(), [&](auto& o) {
            return std::string_view(o).substr(0, o.find('=')) == name;
        });
        if (!replaced)
            env.push_back(*e);
    }
    for (std::string& o : overrides)
        env.push_back(o.data());
    env.push_back(nullptr);
    ChildProcess child;
    child.startSeconds_ = monotonicSeconds();
    const int rc =
        ::posix_spawnp(&child.pid_, args[0], actions.get(), nullptr, args.data(), env.data());
    closeIfOpen(in[0]);
    closeIfOpen(out[1]);
    child.stdinFd_ = in[1];
    child.stdoutFd_ = out[0];
    if (rc != 0) {
        child.pid_ = -1;
        throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
    }
    return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), stdinFd_(other.stdinFd_), stdoutFd_(other.stdoutFd_),
      startSeconds_(other.startSeconds_) {
    other.pid_ = -1;
    other.stdinFd_ = other.stdoutFd_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this == &other)
        return *this;
    closeFds();
    if (pid_ > 0) {
        kill();
        wait();
    }
    pid_ = std::exchange(other.pid_, -1);
    stdinFd_ = std::exchange(other.stdinFd_, -1);
    stdoutFd_ = std::exchange(other.stdoutFd_, -1);
    startSeconds_ = other.startSeconds_;
    return *this;
}

ChildProcess::~ChildProcess() {
    closeFds();
    if (pid_ > 0) {
        kill();
        wait();
    }
}

void ChildProcess::closeFds() {
    closeIfOpen(stdinFd_);
    closeIfOpen(stdoutFd_);
}

bool ChildProcess::writeAll(const std::string& data) {
    // A child that exited must not kill us with SIGPIPE: report it instead.
    static const bool ignored = (std::signal(SIGPIPE, SIG_IGN), true);
    (void)ignored;
    for (size_t done = 0; done < data.size();) {
        const ssize_t n = ::write(stdinFd_, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += size_t(n);
    }
    return true;
}

void ChildProcess::closeStdin() {
    closeIfOpen(stdinFd_);
}

std::string ChildProcess::readAll() {
    std::string out;
    char buf[65536];
    for (ssize_t n; stdoutFd_ >= 0 && (n = ::read(stdoutFd_, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        out.append(buf, size_t(n));
    }
    return out;
}

ChildExit ChildProcess::wait() {
    ChildExit exit;
    if (pid_ <= 0)
        return exit;
    while (::wait4(pid_, &exit.status, 0, &exit.usage) < 0 && errno == EINTR) {
    }
    exit.wallSeconds = monotonicSeconds() - startSeconds_;
    pid_ = -1;
    closeFds();
    return exit;
}

size_t ChildProcess::waitAny(std::vector<ChildProcess>& children, ChildExit* exit) {
    for (;;) {
        ChildExit ended;
        const pid_t pid = ::wait4(-1, &ended.status, 0, &ended.usage);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
        for (size_t i = 0; i < children.size(); ++i) {
            if (children[i].pid_ != pid)
                continue;
            ended.wallSeconds = monotonicSeconds() - children[i].startSeconds_;
            children[i].pid_ = -1;
            children[i].closeFds();
            *exit = ended;
            return i;
        }
        // Not one of ours (cannot happen while the contract holds): keep waiting for ours.
    }
}

void ChildProcess::kill() {
    if (pid_ > 0)
        ::kill(pid_, SIGKILL);
}

ChildExit runToCompletion(const std::vector<std::string>& argv,
                          const ChildProcess::Options& options, std::string* output) {
    ChildProcess::Options o = options;
    o.pipeStdout = output != nullptr;
    ChildProcess child = ChildProcess::start(argv, o);
    if (output)
        *output = child.readAll();
    return child.wait();
}

} // namespace symdex::bench
