#include "indexer/probe_log.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex {

struct ProbeRecording::Sink {
    std::mutex mu;
    std::vector<std::string> paths; // Requires mu
};

namespace {

std::atomic<int> reportFd{-1};
std::atomic<bool> openGuard{false};
/// Live ProbeRecordings; notes are taken only while there is one.
std::atomic<int> armed{0};
/// Moves on each time recording is armed from nothing: a thread's older notes are dropped.
std::atomic<uint64_t> armedEpoch{0};

struct ThreadNotes {
    std::weak_ptr<ProbeRecording::Sink> bound;
    ProbeRecording::Sink* boundRaw = nullptr;
    std::vector<std::string> pending;
    uint64_t epoch = 0;
};
thread_local ThreadNotes threadNotes;

std::string absolute(const char* path) {
    if (path[0] == '/')
        return path;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return path;
    std::string out = cwd;
    if (out != "/")
        out.push_back('/');
    return out + path;
}

/// Notes `path` if the call that returned `failed` failed for want of it. Keeps errno.
void note(const char* path, bool failed) {
    if (!failed || !path || !*path)
        return;
    const int error = errno;
    if (error != ENOENT && error != ENOTDIR)
        return;
    if (const int fd = reportFd.load(std::memory_order_relaxed); fd >= 0) {
        const std::string line = "?" + absolute(path) + "\n";
        (void)!::write(fd, line.data(), line.size());
    } else if (armed.load(std::memory_order_relaxed) > 0) {
        ThreadNotes& notes = threadNotes;
        if (std::shared_ptr<ProbeRecording::Sink> sink = notes.bound.lock()) {
            std::lock_guard lock(sink->mu);
            sink->paths.push_back(absolute(path));
        } else {
            const uint64_t epoch = armedEpoch.load(std::memory_order_relaxed);
            if (notes.epoch != epoch) {
                notes.pending.clear();
                notes.epoch = epoch;
            }
            notes.pending.push_back(absolute(path));
        }
    }
    errno = error;
}

template <typename Function> Function next(const char* name) {
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

using OpenFunction = int (*)(const char*, int, ...);

int guardedOpen(OpenFunction real, const char* path, int flags, mode_t mode) {
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    // Only plain reads are checked: libclang writes nothing a worker cares about.
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_DIRECTORY | O_PATH)))
        return real(path, flags, mode);
    const int fd = real(path, flags | O_NONBLOCK, mode);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
        ::close(fd);
        errno = ENOTSUP; // clang: "cannot open file '/dev/zero': Operation not supported"
        return -1;
    }
    if (!(flags & O_NONBLOCK))
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int openAndNote(OpenFunction real, const char* path, int flags, mode_t mode) {
    int fd;
    if (openGuard.load(std::memory_order_relaxed)) {
        fd = guardedOpen(real, path, flags, mode);
    } else if (!real) {
        errno = ENOSYS;
        return -1;
    } else {
        fd = real(path, flags, mode);
    }
    if (!(flags & O_CREAT))
        note(path, fd < 0);
    return fd;
}

mode_t modeArgument(int flags, va_list args) {
    return (flags & (O_CREAT | O_TMPFILE)) ? mode_t(va_arg(args, int)) : 0;
}

} // namespace

ProbeRecording::ProbeRecording() : sink_(std::make_shared<Sink>()) {
    if (armed.fetch_add(1) == 0)
        armedEpoch.fetch_add(1);
    // libclang may parse on this very thread (LIBCLANG_NOTHREADS): nothing it noted before counts.
    threadNotes.pending.clear();
}

ProbeRecording::~ProbeRecording() {
    armed.fetch_sub(1);
}

void ProbeRecording::bindThisThread() {
    ThreadNotes& notes = threadNotes;
    if (notes.boundRaw == sink_.get() && !notes.bound.expired())
        return;
    notes.bound = sink_;
    notes.boundRaw = sink_.get();
    std::lock_guard lock(sink_->mu);
    if (notes.epoch == armedEpoch.load(std::memory_order_relaxed))
        sink_->paths.insert(sink_->paths.end(), notes.pending.begin(), notes.pending.end());
    notes.pending.clear();
}

std::vector<std::string> ProbeRecording::take() {
    std::vector<std::string> paths;
    {
        std::lock_guard lock(sink_->mu);
        paths.swap(sink_->paths);
    }
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    return paths;
}

void reportProbesTo(int fd) {
    reportFd = fd;
}

void guardOpens() {
    openGuard = true;
}

} // namespace symdex

using symdex::note;

extern "C" int open(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const mode_t mode = symdex::modeArgument(flags, args);
    va_end(args);
    static const auto real = symdex::next<symdex::OpenFunction>("open");
    return symdex::openAndNote(real, path, flags, mode);
}

extern "C" int open64(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const mode_t mode = symdex::modeArgument(flags, args);
    va_end(args);
    static const auto real = symdex::next<symdex::OpenFunction>("open64");
    return symdex::openAndNote(real, path, flags, mode);
}

#define SYMDEX_NOTING_STAT(name, type)                                                             \
    extern "C" int name(const char* __restrict path, struct type* __restrict buf) noexcept {       \
        static const auto real = symdex::next<int (*)(const char*, struct type*)>(#name);          \
        if (!real) {                                                                               \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        const int rc = real(path, buf);                                                            \
        note(path, rc != 0);                                                                       \
        return rc;                                                                                 \
    }

SYMDEX_NOTING_STAT(stat, stat)
SYMDEX_NOTING_STAT(stat64, stat64)
SYMDEX_NOTING_STAT(lstat, stat)
SYMDEX_NOTING_STAT(lstat64, stat64)

extern "C" int access(const char* path, int mode) noexcept {
    static const auto real = symdex::next<int (*)(const char*, int)>("access");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    const int rc = real(path, mode);
    note(path, rc != 0);
    return rc;
}

extern "C" DIR* opendir(const char* path) {
    static const auto real = symdex::next<DIR* (*)(const char*)>("opendir");
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    DIR* dir = real(path);
    note(path, !dir);
    return dir;
}

extern "C" char* realpath(const char* __restrict path, char* __restrict resolved) noexcept {
    static const auto real = symdex::next<char* (*)(const char*, char*)>("realpath");
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    char* out = real(path, resolved);
    note(path, !out);
    return out;
}
