#include "indexer/probe_log.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdlib>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <iterator>
#include <link.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex {

struct ProbeRecording::Sink {
    std::mutex mu;
    std::vector<std::string> paths;                         // Requires mu
    std::vector<std::pair<std::string, std::string>> links; // Requires mu
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

/// The C library's functions this module stands in front of. Each is looked up once, when the
/// module loads (resolveRealFunctions), not on its first call: that call may come from a signal
/// handler (a sanitizer's report of a crash stats files while it symbolizes), where dlsym()
/// allocates and deadlocks. A call before the module loaded looks its function up itself.
enum class Real { Open, Open64, Stat, Stat64, Lstat, Lstat64, Access, Opendir, Realpath, Count };
constexpr const char* kRealNames[] = {"open",    "open64", "stat",    "stat64",  "lstat",
                                      "lstat64", "access", "opendir", "realpath"};
static_assert(std::size(kRealNames) == size_t(Real::Count));
std::atomic<void*> realFunctions[size_t(Real::Count)];

template <typename Function> Function next(Real which) {
    std::atomic<void*>& slot = realFunctions[size_t(which)];
    void* function = slot.load(std::memory_order_acquire);
    if (!function) {
        function = dlsym(RTLD_NEXT, kRealNames[size_t(which)]);
        slot.store(function, std::memory_order_release);
    }
    return reinterpret_cast<Function>(function);
}

/// The addresses of a sanitizer build's runtime (GCC's libtsan or libasan), or none. Its
/// symbolizer opens and stats files while it writes a report or matches a race against the
/// suppressions (tests/tsan.supp, races inside libclang), and from there no memory may be
/// allocated or freed: the runtime routes malloc to an allocator of its own meanwhile, a note's
/// std::string freed by it trips its CHECK, and the CHECK's own report deadlocks (TSan CI of
/// 96be66d hung in index_test so). Calls from the runtime go straight to the C library.
/// A runtime linked into the program (clang's default) is not told apart; symdex's clang builds
/// are the fuzzers, which parse nothing.
std::atomic<uintptr_t> runtimeBegin{0}, runtimeEnd{0};

void findSanitizerRuntime() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    struct Search {
        uintptr_t address, begin = 0, end = 0;
    } search{reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "__sanitizer_print_stack_trace"))};
    if (!search.address)
        return;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto& search = *static_cast<Search*>(data);
            uintptr_t begin = UINTPTR_MAX, end = 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& segment = info->dlpi_phdr[i];
                if (segment.p_type != PT_LOAD)
                    continue;
                begin = std::min<uintptr_t>(begin, info->dlpi_addr + segment.p_vaddr);
                end = std::max<uintptr_t>(end, info->dlpi_addr + segment.p_vaddr + segment.p_memsz);
            }
            if (search.address < begin || search.address >= end)
                return 0;
            if (info->dlpi_name && *info->dlpi_name) { // not the program itself
                search.begin = begin;
                search.end = end;
            }
            return 1;
        },
        &search);
    runtimeBegin.store(search.begin, std::memory_order_relaxed);
    runtimeEnd.store(search.end, std::memory_order_relaxed);
#endif
}

bool fromSanitizerRuntime(const void* returnAddress) {
    const auto address = reinterpret_cast<uintptr_t>(returnAddress);
    return address >= runtimeBegin.load(std::memory_order_relaxed) &&
           address < runtimeEnd.load(std::memory_order_relaxed);
}

__attribute__((constructor)) void resolveRealFunctions() {
    for (size_t i = 0; i < size_t(Real::Count); ++i)
        next<void*>(Real(i));
    findSanitizerRuntime();
}

/// After a stat() or open() of `path` succeeded: if `path` itself is a symlink, notes it and
/// where it leads now (the file the parse got). The C library's own lstat() and realpath(), not
/// this module's. Keeps errno.
void noteLink(const char* path) {
    if (!path || !*path)
        return;
    const int fd = reportFd.load(std::memory_order_relaxed);
    if (fd < 0 && armed.load(std::memory_order_relaxed) == 0)
        return;
    const auto realLstat = next<int (*)(const char*, struct stat*)>(Real::Lstat);
    const auto realRealpath = next<char* (*)(const char*, char*)>(Real::Realpath);
    const int error = errno;
    struct stat st;
    if (realLstat && realRealpath && realLstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (char* target = realRealpath(path, nullptr)) {
            std::string name = absolute(path);
            if (fd >= 0) {
                const std::string line = "@" + name + "\t" + target + "\n";
                (void)!::write(fd, line.data(), line.size());
            } else if (std::shared_ptr<ProbeRecording::Sink> sink = threadNotes.bound.lock()) {
                // Unbound threads' links are not kept: a parse's include lookups come after its
                // first callback, which binds the thread.
                std::lock_guard lock(sink->mu);
                sink->links.emplace_back(std::move(name), target);
            }
            std::free(target);
        }
    }
    errno = error;
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
    if (fd >= 0 && (flags & O_ACCMODE) == O_RDONLY)
        noteLink(path);
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

std::vector<std::pair<std::string, std::string>> ProbeRecording::takeLinks() {
    std::vector<std::pair<std::string, std::string>> links;
    {
        std::lock_guard lock(sink_->mu);
        links.swap(sink_->links);
    }
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    return links;
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
    const auto real = symdex::next<symdex::OpenFunction>(symdex::Real::Open);
    if (real && symdex::fromSanitizerRuntime(__builtin_return_address(0)))
        return real(path, flags, mode);
    return symdex::openAndNote(real, path, flags, mode);
}

extern "C" int open64(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const mode_t mode = symdex::modeArgument(flags, args);
    va_end(args);
    const auto real = symdex::next<symdex::OpenFunction>(symdex::Real::Open64);
    if (real && symdex::fromSanitizerRuntime(__builtin_return_address(0)))
        return real(path, flags, mode);
    return symdex::openAndNote(real, path, flags, mode);
}

#define SYMDEX_NOTING_STAT(name, which, type, follows)                                             \
    extern "C" int name(const char* __restrict path, struct type* __restrict buf) noexcept {       \
        const auto real = symdex::next<int (*)(const char*, struct type*)>(symdex::Real::which);   \
        if (!real) {                                                                               \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        const int rc = real(path, buf);                                                            \
        if (symdex::fromSanitizerRuntime(__builtin_return_address(0)))                             \
            return rc;                                                                             \
        note(path, rc != 0);                                                                       \
        if (follows && rc == 0)                                                                    \
            symdex::noteLink(path);                                                                \
        return rc;                                                                                 \
    }

SYMDEX_NOTING_STAT(stat, Stat, stat, true)
SYMDEX_NOTING_STAT(stat64, Stat64, stat64, true)
SYMDEX_NOTING_STAT(lstat, Lstat, stat, false)
SYMDEX_NOTING_STAT(lstat64, Lstat64, stat64, false)

extern "C" int access(const char* path, int mode) noexcept {
    const auto real = symdex::next<int (*)(const char*, int)>(symdex::Real::Access);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    const int rc = real(path, mode);
    if (!symdex::fromSanitizerRuntime(__builtin_return_address(0)))
        note(path, rc != 0);
    return rc;
}

extern "C" DIR* opendir(const char* path) {
    const auto real = symdex::next<DIR* (*)(const char*)>(symdex::Real::Opendir);
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    DIR* dir = real(path);
    if (!symdex::fromSanitizerRuntime(__builtin_return_address(0)))
        note(path, !dir);
    return dir;
}

extern "C" char* realpath(const char* __restrict path, char* __restrict resolved) noexcept {
    const auto real = symdex::next<char* (*)(const char*, char*)>(symdex::Real::Realpath);
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    char* out = real(path, resolved);
    if (!symdex::fromSanitizerRuntime(__builtin_return_address(0)))
        note(path, !out);
    return out;
}
