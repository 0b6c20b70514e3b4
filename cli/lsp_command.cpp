// `symdex lsp`: the editor's language server. A byte-for-byte bridge between stdio and the
// socket of the symdexd serving the store, which it starts (detached, logging to
// STORE/symdexd.log) when none runs. Framing and protocol are the daemon's: the bridge never
// parses a message, so it adds no failure mode of its own.
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "protocol/client.h"
#include "protocol/instance_lock.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace symdex::cli {

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(20);

/// symdexd beside this executable (the build tree and an install put them together), else the
/// PATH's.
std::string symdexdPath() {
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        const std::filesystem::path beside =
            std::filesystem::path(std::string(self, size_t(n))).parent_path() / "symdexd";
        if (::access(beside.c_str(), X_OK) == 0)
            return beside.string();
    }
    return "symdexd";
}

/// Starts symdexd detached from this process's session; returns its pid.
pid_t startDaemon(const std::vector<std::string>& args, const std::filesystem::path& log) {
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        throw UsageError{std::string("fork: ") + std::strerror(errno)};
    if (pid == 0) {
        ::setsid(); // survives the editor closing the bridge's terminal or process group
        const int in = ::open("/dev/null", O_RDONLY);
        const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        ::dup2(in, STDIN_FILENO);
        ::dup2(out >= 0 ? out : in, STDOUT_FILENO);
        ::dup2(out >= 0 ? out : in, STDERR_FILENO);
        ::execvp(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

/// Connects to the daemon of `store`, starting one with `startArgs` if none runs.
std::unique_ptr<protocol::RpcClient> connectOrStart(const std::filesystem::path& store,
                                                    const std::vector<std::string>& startArgs) {
    std::string error;
    if (auto info = protocol::findDaemon(store))
        if (auto client = protocol::RpcClient::connect(info->socketPath, &error))
            return client;
    std::filesystem::create_directories(store);
    const std::filesystem::path log = store / "symdexd.log";
    const pid_t child = startDaemon(startArgs, log);
    bool childExited = false;
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
        // Another bridge may have started the daemon first: ours then exits, theirs serves.
        if (auto info = protocol::findDaemon(store))
            if (auto client = protocol::RpcClient::connect(info->socketPath, &error))
                return client;
        int status;
        if (!childExited && ::waitpid(child, &status, WNOHANG) == child)
            childExited = true;
        else if (childExited)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw UsageError{"symdexd did not start (" + startArgs.front() + "); see " + log.string()};
}

/// Writes all of `data` to `fd`; false when the other side is gone.
bool writeAll(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

/// Copies stdin to the socket and the socket to stdout until either side closes.
void bridge(int socketFd) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {socketFd, POLLIN, 0}};
    char buf[65536];
    for (;;) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (int i = 0; i < 2; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return; // the editor or the daemon closed
            if (!writeAll(i == 0 ? socketFd : STDOUT_FILENO, buf, size_t(n)))
                return;
        }
    }
}

} // namespace

int runLsp(const QStringList& args) {
    QCommandLineParser parser;
    parser.addOption(QCommandLineOption(
        "root", "The source tree (default: the store's parent, else the current directory).",
        "DIR"));
    addDatabaseOption(parser);
    addStoreOption(parser);
    parser.addOption(
        QCommandLineOption("threads", "Indexer threads of a daemon this starts.", "N"));
    if (!parseCommandLine(parser, args,
                          "Language server on stdio for editors: bridges to the symdexd serving "
                          "the store, starting one if none runs."))
        return kExitOk;
    const std::filesystem::path cwd = std::filesystem::current_path();
    std::filesystem::path root = parser.isSet("root")
                                     ? std::filesystem::absolute(parser.value("root").toStdString())
                                     : std::filesystem::path();
    std::filesystem::path store;
    if (parser.isSet("store") || root.empty())
        store = storeDirectory(parser);
    else
        store = root / ".symdex";
    if (root.empty())
        root = store.filename() == ".symdex" ? store.parent_path() : cwd;

    std::vector<std::string> startArgs = {symdexdPath(), "--root", root.lexically_normal(),
                                          "--store", store.lexically_normal()};
    if (parser.isSet("p"))
        startArgs.insert(startArgs.end(),
                         {"-p", std::filesystem::absolute(parser.value("p").toStdString())});
    if (parser.isSet("threads"))
        startArgs.insert(startArgs.end(),
                         {"--threads", std::to_string(parseThreadCount(parser.value("threads")))});
    std::signal(SIGPIPE, SIG_IGN);
    std::unique_ptr<protocol::RpcClient> client = connectOrStart(store, startArgs);
    bridge(client->fd());
    return kExitOk;
}

} // namespace symdex::cli
