// Reading a store into the page cache ahead of its first queries. The store is mapped, not
// loaded: a query that touches a page the kernel does not hold waits for the disk. At 2M names,
// right after a restart on a cold cache, a definition took 4-20 ms where it takes 0.2 ms warm,
// and the first workspace/symbol 190 ms where it takes 17 (bench/definition_probe.py). clangd
// pays the other way: it reads its whole index into memory before its answers are complete.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace symdex {

/// Whether a file of `fileBytes` is read ahead when `availableBytes` of memory are available: at
/// most half of it, so that warming the store does not push everything else out of the cache.
bool worthReadingAhead(uint64_t fileBytes, uint64_t availableBytes);

/// The kernel's MemAvailable (/proc/meminfo) in bytes; nullopt when it cannot be read.
std::optional<uint64_t> availableMemory();

/// Reads `file` through, 256 KiB at a time, so that the page cache holds it; waits while `busy()`
/// (when given) says queries are being answered, so that its reads never delay theirs; stops
/// early once `stop` is set; returns the bytes read. Nothing is mapped: the pages are reclaimable
/// cache, charged to no process's resident set.
uint64_t readAhead(const std::filesystem::path& file, const std::atomic<bool>& stop,
                   const std::function<bool()>& busy = {});

/// readAhead() of a store's data file on a thread of its own at idle CPU and I/O priority, when
/// worthReadingAhead() says so; `log` gets one line saying what was done, and `readThrough`
/// (when given) is called on that thread once the whole file was read (symdexd then maps the
/// pages in: SymbolStore::prefaultMap). The destructor stops the thread between two chunks and
/// joins it.
class PageCacheWarmer {
public:
    PageCacheWarmer(std::filesystem::path file, std::function<void(const std::string&)> log,
                    std::function<bool()> busy = {}, std::function<void()> readThrough = {});
    ~PageCacheWarmer();
    PageCacheWarmer(const PageCacheWarmer&) = delete;
    PageCacheWarmer& operator=(const PageCacheWarmer&) = delete;

    /// Waits until the thread has read the whole file (or stopped, or decided not to). For tests.
    void wait();

private:
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

} // namespace symdex
