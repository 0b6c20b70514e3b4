// symdex-worker: the process a TU is parsed in (parse_worker.h). Started by the indexer with its
// socket on fd 3; not meant to be run by hand.
//
// It also keeps libclang from reading anything but regular files and directories (guardOpens), and
// reports every path a parse probed in vain beside the files it reached (runParseWorker); both
// through the C library functions probe_log.cpp defines for the executable.
#include "indexer/parse_worker.h"
#include "indexer/probe_log.h"

#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>

int main(int argc, char** argv) {
    int fd = -1, reachedFd = -1;
    uint64_t memoryLimitMb = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string option = argv[i];
        if (option == "--fd")
            fd = std::atoi(argv[i + 1]);
        else if (option == "--reached-fd")
            reachedFd = std::atoi(argv[i + 1]);
        else if (option == "--memory-limit-mb")
            memoryLimitMb = std::strtoull(argv[i + 1], nullptr, 10);
    }
    if (fd < 0 || fcntl(fd, F_GETFD) < 0 || reachedFd < 0 || fcntl(reachedFd, F_GETFD) < 0) {
        const char message[] = "symdex-worker: started by the symdex indexer only\n";
        (void)!write(2, message, sizeof message - 1);
        return 2;
    }
    symdex::guardOpens();
    return symdex::runParseWorker(fd, reachedFd, memoryLimitMb);
}
