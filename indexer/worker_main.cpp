// symdex-worker: the process a TU is parsed in (parse_worker.h). Started by the indexer with its
// socket on fd 3; not meant to be run by hand.
//
// It also keeps libclang from reading anything but regular files and directories: an #include of
// a FIFO would block the parse until something writes to it, one of /dev/zero would read until
// memory runs out. libLLVM opens every source file with open(2), so this executable defines open()
// and open64(): a read-only open is made non-blocking, and what it opened is refused with ENOTSUP
// unless it is a regular file or a directory; everything else goes to the C library's open (found
// with dlsym(RTLD_NEXT)). Only this executable defines them; the rest of symdex is unaffected.
#include "indexer/parse_worker.h"

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using OpenFunction = int (*)(const char*, int, ...);

OpenFunction realOpen() {
    static OpenFunction real = reinterpret_cast<OpenFunction>(dlsym(RTLD_NEXT, "open"));
    return real;
}

int guardedOpen(const char* path, int flags, mode_t mode) {
    OpenFunction real = realOpen();
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

mode_t modeArgument(int flags, va_list args) {
    return (flags & (O_CREAT | O_TMPFILE)) ? mode_t(va_arg(args, int)) : 0;
}

} // namespace

extern "C" int open(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const mode_t mode = modeArgument(flags, args);
    va_end(args);
    return guardedOpen(path, flags, mode);
}

extern "C" int open64(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const mode_t mode = modeArgument(flags, args);
    va_end(args);
    return guardedOpen(path, flags, mode);
}

int main(int argc, char** argv) {
    int fd = -1;
    uint64_t memoryLimitMb = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string option = argv[i];
        if (option == "--fd")
            fd = std::atoi(argv[i + 1]);
        else if (option == "--memory-limit-mb")
            memoryLimitMb = std::strtoull(argv[i + 1], nullptr, 10);
    }
    if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
        const char message[] = "symdex-worker: started by the symdex indexer only (no --fd)\n";
        (void)!write(2, message, sizeof message - 1);
        return 2;
    }
    return symdex::runParseWorker(fd, memoryLimitMb);
}
