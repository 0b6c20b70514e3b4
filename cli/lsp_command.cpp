// `symdex lsp`: the editor's language server. It finds the symdexd serving the store, starting
// one (detached, logging to STORE/symdexd.log) when none runs, and hands it its stdin and stdout
// (protocol::kAdoptStdio): the daemon then reads the editor's requests and writes its answers
// itself, and this process only waits for the session's end. Where the daemon cannot take them
// (stdio a terminal, or SYMDEX_LSP_BRIDGE=1), it copies bytes between stdio and the daemon's
// socket instead. Either way framing and protocol are the daemon's: this process never parses
// a message, so it adds no failure mode of its own.
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "protocol/client.h"
#include "protocol/instance_lock.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/// Whether `fd` is a pipe or a socket: a descriptor the daemon may make non-blocking and serve.
/// A terminal's modes and flags are shared with the shell, so it is bridged instead.
bool streamLike(int fd) {
    struct stat st;
    return ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/// Hands stdin and stdout to the daemon; true when it serves them from now on.
bool handOver(protocol::RpcClient& client) {
    const char* bridgeOnly = std::getenv("SYMDEX_LSP_BRIDGE");
    if ((bridgeOnly && *bridgeOnly && std::strcmp(bridgeOnly, "0") != 0) ||
        !streamLike(STDIN_FILENO) || !streamLike(STDOUT_FILENO))
        return false;
    const int64_t id =
        client.sendPassing(protocol::kAdoptStdio, QJsonObject{}, {STDIN_FILENO, STDOUT_FILENO});
    const QJsonObject reply = client.waitForResponse(id, kStartTimeout);
    if (reply.contains("error")) {
        std::fprintf(stderr, "symdex lsp: symdexd does not serve stdio itself (%s); bridging\n",
                     qPrintable(reply.value("error").toObject().value("message").toString()));
        return false;
    }
    // This process keeps no copy open: the editor sees the end of the output when the daemon
    // closes it.
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        ::dup2(null, STDIN_FILENO);
        ::dup2(null, STDOUT_FILENO);
        ::close(null);
    }
    return true;
}

/// Waits until the daemon closes the connection (the session ended, or the daemon did).
void waitForEnd(int socketFd) {
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(socketFd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
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
    if (handOver(*client))
        waitForEnd(client->fd());
    else
        bridge(client->fd());
    return kExitOk;
}

} // namespace symdex::cli
