// fault_cost: what a page fault costs on this machine, for a file mapped shared (as LMDB maps
// data.mdb: the kernel maps the cached pages around the one faulted, 16 or more, "fault-around")
// and for anonymous memory (the heap's new pages, small pages asked for), and what
// MADV_POPULATE_READ takes for the whole file.
//
//   fault_cost FILE [ROUNDS]
//
// Each round maps FILE afresh and reads one byte of each page, then writes one byte of each page of
// 64 MiB of anonymous memory; minor and major faults come from getrusage. FILE should be in the
// page cache (read it once first) to time faults rather than the disk.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

long faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt + usage.ru_majflt;
}

/// Reads one byte of each page of `bytes` at `p`; the faults it took and the seconds.
std::pair<long, double> read(const volatile char* p, size_t bytes, size_t page) {
    const long before = faults();
    const double start = now();
    char sum = 0;
    for (size_t i = 0; i < bytes; i += page)
        sum = char(sum + p[i]);
    const double seconds = now() - start;
    (void)sum;
    return {faults() - before, seconds};
}

/// Writes one byte of each page (as malloc's new heap pages are first touched: each a zeroed
/// page of its own).
std::pair<long, double> write(volatile char* p, size_t bytes, size_t page) {
    const long before = faults();
    const double start = now();
    for (size_t i = 0; i < bytes; i += page)
        p[i] = 1;
    return {faults() - before, now() - start};
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: fault_cost FILE [ROUNDS]\n");
        return 2;
    }
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
    const int fd = open(argv[1], O_RDONLY);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        std::fprintf(stderr, "fault_cost: cannot read %s: %s\n", argv[1], std::strerror(errno));
        return 1;
    }
    const size_t size = size_t(st.st_size), page = size_t(sysconf(_SC_PAGESIZE));
    const size_t anonBytes = size_t(64) << 20;
    for (int round = 0; round < rounds; ++round) {
        void* file = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        void* again = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        void* anon =
            mmap(nullptr, anonBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (file == MAP_FAILED || again == MAP_FAILED || anon == MAP_FAILED) {
            std::fprintf(stderr, "fault_cost: mmap: %s\n", std::strerror(errno));
            return 1;
        }
        const auto [fileFaults, fileSeconds] = read(static_cast<char*>(file), size, page);
        munmap(file, size);

        const double start = now();
        const int populated = madvise(again, size, MADV_POPULATE_READ);
        const double populateSeconds = now() - start;
        munmap(again, size);

        madvise(anon, anonBytes, MADV_NOHUGEPAGE); // malloc's heap is in small pages
        const auto [anonFaults, anonSeconds] = write(static_cast<char*>(anon), anonBytes, page);
        munmap(anon, anonBytes);

        std::printf("round %d: file %zu pages, %ld faults, %.2f us a fault (%.1f pages each); "
                    "MADV_POPULATE_READ of it %.2f ms%s; anonymous %.2f us a fault (%.1f pages "
                    "each)\n",
                    round + 1, size / page, fileFaults, fileSeconds * 1e6 / double(fileFaults),
                    double(size / page) / double(fileFaults), populateSeconds * 1e3,
                    populated == 0 ? "" : " (refused)", anonSeconds * 1e6 / double(anonFaults),
                    double(anonBytes / page) / double(anonFaults));
    }
    return 0;
}
