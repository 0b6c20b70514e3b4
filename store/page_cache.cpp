#include "store/page_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <pthread.h>
#include <sched.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace symdex {

namespace {

constexpr size_t kChunk = 256u << 10;

/// The calling thread to the idle classes of CPU and I/O: its reads and copies wait while a
/// query runs or faults pages in (the first answer after a start above all).
void idlePriority() {
    const sched_param none{};
    ::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &none);
    constexpr int kWhoProcess = 1, kClassIdle = 3, kClassShift = 13; // linux/ioprio.h
    ::syscall(SYS_ioprio_set, kWhoProcess, 0, kClassIdle << kClassShift);
}

std::string mebibytes(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1u << 20));
    return text;
}

} // namespace

bool worthReadingAhead(uint64_t fileBytes, uint64_t availableBytes) {
    return fileBytes <= availableBytes / 2;
}

std::optional<uint64_t> availableMemory() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name;
        uint64_t kib = 0;
        if (fields >> name >> kib && name == "MemAvailable:")
            return kib * 1024;
    }
    return std::nullopt;
}

uint64_t readAhead(const std::filesystem::path& file, const std::atomic<bool>& stop,
                   const std::function<bool()>& busy) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    // Read, not posix_fadvise(WILLNEED): the kernel caps each advice at its readahead window
    // (128 KiB by default), and a read says when the pages are there. The copy costs ~0.1 s of
    // CPU a GiB.
    std::vector<char> buffer(kChunk);
    uint64_t done = 0;
    while (!stop.load()) {
        if (busy && busy()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), off_t(done));
        if (n <= 0)
            break;
        done += uint64_t(n);
    }
    ::close(fd);
    return done;
}

PageCacheWarmer::PageCacheWarmer(std::filesystem::path file,
                                 std::function<void(const std::string&)> log,
                                 std::function<bool()> busy, std::function<void()> readThrough)
    : thread_([this, file = std::move(file), log = std::move(log), busy = std::move(busy),
               readThrough = std::move(readThrough)] {
          std::error_code ec;
          const uint64_t size = std::filesystem::file_size(file, ec);
          if (ec)
              return;
          const std::optional<uint64_t> available = availableMemory();
          if (available && !worthReadingAhead(size, *available)) {
              log("not reading " + file.string() + " (" + mebibytes(size) +
                  ") into the page cache: more than half of the " + mebibytes(*available) +
                  " available; queries read its pages as they need them");
              return;
          }
          idlePriority();
          const auto start = std::chrono::steady_clock::now();
          const uint64_t bytes = readAhead(file, stop_, busy);
          const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
          char seconds[32];
          std::snprintf(seconds, sizeof seconds, "%.2f", took.count());
          log("read " + mebibytes(bytes) + " of " + file.string() + " into the page cache (" +
              seconds + " s)");
          if (readThrough && !stop_ && bytes >= size)
              readThrough();
      }) {}

PageCacheWarmer::~PageCacheWarmer() {
    stop_ = true;
    wait();
}

void PageCacheWarmer::wait() {
    if (thread_.joinable())
        thread_.join();
}

} // namespace symdex
