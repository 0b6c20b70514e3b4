#include "indexer/parse_worker.h"

#include "indexer/probe_log.h"
#include "indexer/worker_protocol.h"
#include "store/encoding.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

extern char** environ;

namespace symdex {

namespace {

constexpr size_t kStderrTail = 8192;

std::string describeExit(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* name = strsignal(sig);
        return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
    }
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    return "ended with wait status " + std::to_string(status);
}

} // namespace

std::string workerErrorLine(std::string_view tail) {
    // A fatal error's own line names the cause; a sanitizer's report after it (libclang's crash
    // recovery jumping out of abort() can end in a SEGV under ASan) only says how it ended.
    std::string_view cause, other;
    while (!tail.empty()) {
        const size_t newline = tail.find('\n');
        const std::string_view line = tail.substr(0, newline);
        tail = newline == std::string_view::npos ? std::string_view() : tail.substr(newline + 1);
        if (line.find("FATAL ERROR") != std::string_view::npos ||
            line.find("LLVM ERROR") != std::string_view::npos)
            cause = line;
        else if (line.find("ERROR") != std::string_view::npos ||
                 line.find("terminate called") != std::string_view::npos)
            other = line;
    }
    return std::string((cause.empty() ? other : cause).substr(0, 300));
}

std::string defaultWorkerPath() {
    if (const char* env = std::getenv("SYMDEX_WORKER"); env && *env)
        return env;
    std::error_code ec;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return {};
    std::filesystem::path worker = self.parent_path() / "symdex-worker";
    return std::filesystem::exists(worker, ec) ? worker.string() : std::string();
}

ParseWorker::ParseWorker(WorkerOptions options) : options_(std::move(options)) {}

ParseWorker::~ParseWorker() {
    if (pid_ > 0)
        stop(/*kill=*/false);
    if (reached_ >= 0)
        ::close(reached_);
}

void ParseWorker::takeReached(WorkerOutcome& outcome) {
    std::string text;
    char buffer[65536];
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(reached_, buffer, sizeof buffer, at);
        if (n <= 0)
            break;
        text.append(buffer, size_t(n));
        at += n;
    }
    for (size_t begin = 0, end; (end = text.find('\n', begin)) != std::string::npos;
         begin = end + 1) {
        if (text[begin] == '?') {
            outcome.absent.push_back(text.substr(begin + 1, end - begin - 1));
        } else if (text[begin] == '@') {
            const size_t tab = text.find('\t', begin);
            if (tab != std::string::npos && tab < end)
                outcome.links.emplace_back(text.substr(begin + 1, tab - begin - 1),
                                           text.substr(tab + 1, end - tab - 1));
        } else
            outcome.reached.push_back(text.substr(begin, end - begin));
    }
    if (ftruncate(reached_, 0) != 0) {
        // Then the next TU's list starts with this one's: a longer record, nothing lost.
    }
}

bool ParseWorker::start(std::string* error) {
    int sockets[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
        *error = std::string("socketpair: ") + std::strerror(errno);
        return false;
    }
    int errPipe[2];
    if (pipe2(errPipe, O_CLOEXEC) != 0) {
        *error = std::string("pipe: ") + std::strerror(errno);
        ::close(sockets[0]);
        ::close(sockets[1]);
        return false;
    }
    if (reached_ < 0) {
        reached_ = memfd_create("symdex-reached", MFD_CLOEXEC);
        if (reached_ < 0 || fcntl(reached_, F_SETFL, O_APPEND) != 0) {
            *error = std::string("memfd_create: ") + std::strerror(errno);
            ::close(sockets[0]);
            ::close(sockets[1]);
            ::close(errPipe[0]);
            ::close(errPipe[1]);
            return false;
        }
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sockets[1], 3);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
    posix_spawn_file_actions_adddup2(&actions, reached_, 4);
    posix_spawn_file_actions_addclosefrom_np(&actions, 5);
    const std::string limit = std::to_string(options_.memoryLimitMb);
    std::vector<char*> argv{const_cast<char*>(options_.path.c_str()),
                            const_cast<char*>("--fd"),
                            const_cast<char*>("3"),
                            const_cast<char*>("--reached-fd"),
                            const_cast<char*>("4"),
                            const_cast<char*>("--memory-limit-mb"),
                            const_cast<char*>(limit.c_str()),
                            nullptr};
    pid_t pid = -1;
    const int rc =
        posix_spawn(&pid, options_.path.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(sockets[1]);
    ::close(errPipe[1]);
    if (rc != 0) {
        *error = "cannot start " + options_.path + ": " + std::strerror(rc);
        ::close(sockets[0]);
        ::close(errPipe[0]);
        return false;
    }
    fcntl(errPipe[0], F_SETFL, fcntl(errPipe[0], F_GETFL) | O_NONBLOCK);
    pid_ = pid;
    socket_ = sockets[0];
    stderr_ = errPipe[0];
    stderrTail_.clear();
    ++spawned_;
    return true;
}

void ParseWorker::drainStderr() {
    if (stderr_ < 0)
        return;
    char buffer[4096];
    for (;;) {
        ssize_t n = ::read(stderr_, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        stderrTail_.append(buffer, size_t(n));
    }
    if (stderrTail_.size() > kStderrTail)
        stderrTail_.erase(0, stderrTail_.size() - kStderrTail);
}

std::string ParseWorker::stop(bool kill) {
    if (kill)
        ::kill(pid_, SIGKILL);
    ::close(socket_); // a live worker reads end of file and exits
    socket_ = -1;
    int status = 0;
    pid_t done = 0;
    // A worker that does not exit within a second of its socket closing is killed.
    for (int i = 0; i < 100 && (done = waitpid(pid_, &status, WNOHANG)) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done == 0) {
        ::kill(pid_, SIGKILL);
        while ((done = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
        }
    }
    drainStderr();
    ::close(stderr_);
    stderr_ = -1;
    pid_ = -1;
    std::string how = done > 0 ? describeExit(status) : "could not be reaped";
    lastErrorLine_ = workerErrorLine(stderrTail_);
    if (!lastErrorLine_.empty())
        how += ": " + lastErrorLine_;
    return how;
}

WorkerOutcome ParseWorker::parse(const CompileCommand& command, size_t rank, FileClaimer& claimer,
                                 const PchTask& pch) {
    WorkerOutcome outcome = exchange(command, rank, claimer, pch);
    if (reached_ >= 0)
        takeReached(outcome); // and empty for the next TU
    return outcome;
}

WorkerOutcome ParseWorker::exchange(const CompileCommand& command, size_t rank,
                                    FileClaimer& claimer, const PchTask& pch) {
    WorkerOutcome outcome;
    if (pid_ < 0 && !start(&outcome.reason)) {
        outcome.kind = WorkerOutcome::NoWorker;
        return outcome;
    }
    ParseRequest request;
    request.command = command;
    request.rank = rank;
    request.indexMacros = options_.indexMacros;
    request.skipParsedBodies = options_.skipParsedBodies;
    request.denialsHold = options_.denialsHold;
    request.pchPath = pch.path;
    request.pchHeaders = pch.headers;
    if (!writeFrame(socket_, WorkerMessage::Parse, encodeParseRequest(request))) {
        outcome.reason = stop(/*kill=*/true);
        return outcome;
    }
    // The claims granted to this TU: a file lost to a lower rank meanwhile is not published.
    std::unordered_map<std::string, std::shared_ptr<const std::atomic<size_t>>> owners;
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    for (;;) {
        pollfd fds[2] = {{socket_, POLLIN, 0}, {stderr_, POLLIN, 0}};
        const int ready = ::poll(fds, 2, 100);
        if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
            stop(/*kill=*/true);
            outcome.kind = WorkerOutcome::Cancelled;
            return outcome;
        }
        if (options_.timeout.count() > 0 && std::chrono::steady_clock::now() > deadline) {
            const std::string how = stop(/*kill=*/true);
            outcome.kind = WorkerOutcome::TimedOut;
            char limit[32];
            std::snprintf(limit, sizeof limit, "%g", double(options_.timeout.count()) / 1000);
            outcome.reason = std::string("timed out after ") + limit +
                             " s (--tu-timeout); the worker was " + how;
            return outcome;
        }
        if (ready <= 0)
            continue;
        if (fds[1].revents)
            drainStderr();
        if (!fds[0].revents)
            continue;
        auto frame = readFrame(socket_);
        if (!frame) {
            outcome.reason = stop(/*kill=*/true);
            return outcome;
        }
        if (frame->first == WorkerMessage::Claim) {
            Reader reader(frame->second);
            std::string path(reader.string());
            std::optional<FileClaim> claim = claimer.claim(path, rank);
            if (claim)
                owners[path] = claim->owner;
            const std::optional<FileStamp> stamp =
                claim ? std::optional(claim->stamp) : std::nullopt;
            if (!writeFrame(socket_, WorkerMessage::ClaimAnswer, encodeClaimAnswer(stamp))) {
                outcome.reason = stop(/*kill=*/true);
                return outcome;
            }
            continue;
        }
        auto result =
            frame->first == WorkerMessage::Result ? decodeParseResult(frame->second) : std::nullopt;
        if (!result) {
            outcome.reason = "sent a malformed message; " + stop(/*kill=*/true);
            return outcome;
        }
        std::optional<IndexedTu> tu = std::move(result->first);
        outcome.pch = std::move(result->second);
        std::erase_if(tu->files, [&](const IndexedFile& file) {
            auto owner = owners.find(file.file.path);
            return owner == owners.end() || owner->second->load(std::memory_order_relaxed) != rank;
        });
        if (tu->record.status == TuStatus::Failed || tu->record.status == TuStatus::Crashed) {
            // libclang gave up on the TU, often by recovering from a crash or a fatal error: the
            // worker exits rather than parse on with state that may be left behind, and what it
            // printed about it is the best reason there is.
            stop(/*kill=*/false);
            if (tu->record.errorCount == 0 && !lastErrorLine_.empty())
                tu->record.firstError = lastErrorLine_;
        }
        outcome.kind = WorkerOutcome::Parsed;
        outcome.tu = std::move(*tu);
        return outcome;
    }
}

namespace {

/// The worker's FileClaimer: every claim is a question to the parent.
class RemoteClaimer : public FileClaimer {
public:
    RemoteClaimer(int fd, int reachedFd) : fd_(fd), reachedFd_(reachedFd) {}
    /// Starts a TU: whether refusals carry over from the TUs before it (ParseRequest). Never
    /// for its own main file, which it always extracts: an earlier TU that included that file
    /// (fmtlib's posix-mock-test.cc includes src/os.cc) was refused it because this TU had it.
    void startTu(bool denialsHold, const std::string& mainFile) {
        if (!denialsHold)
            denied_.clear();
        denied_.erase(mainFile);
        denialsHold_ = denialsHold;
    }

    std::optional<FileClaim> claim(const std::string& path, size_t rank) override {
        std::string payload;
        Writer(payload).string(path);
        const std::string line = path + "\n";
        if (::write(reachedFd_, line.data(), line.size()) != ssize_t(line.size()))
            _exit(3);
        if (denied_.contains(path))
            return std::nullopt; // no round trip
        if (!writeFrame(fd_, WorkerMessage::Claim, payload))
            _exit(3); // the parent is gone: nothing to parse for
        auto frame = readFrame(fd_);
        if (!frame || frame->first != WorkerMessage::ClaimAnswer)
            _exit(3);
        auto answer = decodeClaimAnswer(frame->second);
        if (!answer)
            _exit(3);
        if (!*answer) {
            if (denialsHold_)
                denied_.insert(path);
            return std::nullopt;
        }
        if (!owner_ || owner_->load() != rank)
            owner_ = std::make_shared<std::atomic<size_t>>(rank);
        return FileClaim{**answer, owner_};
    }
    // The parent releases the claims of a TU that did not parse.
    void release(size_t) override {}

private:
    int fd_;
    int reachedFd_;
    std::shared_ptr<std::atomic<size_t>> owner_;
    bool denialsHold_ = false;
    std::unordered_set<std::string> denied_; ///< refused to an earlier TU, so to this one too
};

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

} // namespace

int runParseWorker(int fd, int reachedFd, uint64_t memoryLimitMb) {
    // Die with the parent: a worker is never left parsing for nobody.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 3;
    if (memoryLimitMb > 0 && !sanitized()) {
        rlimit limit{memoryLimitMb << 20, memoryLimitMb << 20};
        setrlimit(RLIMIT_AS, &limit);
    }
    std::unique_ptr<ParseSession> session, pchSession;
    RemoteClaimer claimer(fd, reachedFd);
    while (auto frame = readFrame(fd)) {
        std::optional<ParseRequest> request =
            frame->first == WorkerMessage::Parse ? decodeParseRequest(frame->second) : std::nullopt;
        if (!request)
            return 2;
        if (!session)
            session = std::make_unique<ParseSession>(request->skipParsedBodies);
        if (!pchSession && !request->pchPath.empty() && request->pchHeaders.empty())
            pchSession = std::make_unique<ParseSession>(request->skipParsedBodies, true);
        claimer.startTu(request->denialsHold, request->command.file);
        ParseOptions options;
        options.indexMacros = request->indexMacros;
        PchReport report;
        options.pchPath = request->pchPath;
        options.pchReport = &report;
        options.pchSession = pchSession.get();
        // Only the parse's probes: the same scope as an in-process parse's (ProbeRecording).
        reportProbesTo(reachedFd);
        IndexedTu tu;
        if (!request->pchHeaders.empty()) {
            report = buildPrecompiledHeader(request->command, request->pchHeaders, request->pchPath,
                                            request->indexMacros);
            tu.mainFile = request->command.file;
            tu.record.status = report.mode == PchMode::Built ? TuStatus::Ok : TuStatus::Failed;
            tu.record.firstError = report.detail;
        } else {
            tu = parseTranslationUnit(*session, request->command, size_t(request->rank), claimer,
                                      options);
        }
        reportProbesTo(-1);
        if (!writeFrame(fd, WorkerMessage::Result, encodeParseResult(tu, report)))
            return 3;
        if (!request->pchHeaders.empty() && report.mode == PchMode::Built)
            continue;
        if (tu.record.status == TuStatus::Failed || tu.record.status == TuStatus::Crashed)
            _exit(
                0); // see ParseWorker::parse; _exit: what the crash leaked is not a leak to report
    }
    return 0;
}

} // namespace symdex
