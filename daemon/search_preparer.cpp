#include "daemon/search_preparer.h"

#include "store/symbol_store.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <malloc.h>
#include <optional>
#include <thread>

namespace symdex::daemon {

SearchPreparer::SearchPreparer(const SymbolStore& store,
                               std::function<void(const std::string&)> log,
                               std::function<bool()> busy)
    : store_(store), log_(std::move(log)), busy_(std::move(busy)), thread_([this] { loop(); }) {}

SearchPreparer::~SearchPreparer() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void SearchPreparer::request() {
    {
        std::lock_guard lock(mu_);
        wanted_ = true;
    }
    wake_.notify_one();
}

void SearchPreparer::loop() {
    for (;;) {
        {
            std::unique_lock lock(mu_);
            wake_.wait(lock, [this] { return wanted_ || stopping_; });
            if (stopping_)
                return;
            wanted_ = false;
        }
        // The pages first: the search's own reads then fault none in either. Each step on its
        // own: requests read what they need themselves, so a failure loses nothing but time.
        size_t mapped = 0;
        try {
            mapped = store_.prefaultMap();
        } catch (const std::exception& e) {
            log_(std::string("mapping the store's pages: ") + e.what());
        }
        try {
            const uint64_t snapshot = store_.prepareNameSearch();
            char line[128];
            std::snprintf(line, sizeof line,
                          "prepared for requests: snapshot %llu, %.1f MiB of data.mdb mapped, "
                          "name search read",
                          static_cast<unsigned long long>(snapshot), double(mapped) / (1 << 20));
            log_(line);
        } catch (const std::exception& e) {
            log_(std::string("preparing name search: ") + e.what());
        }
        // Last: the longest step (every block decoded once at start, then only those a run
        // rewrote), and searches answer without it meanwhile.
        const auto goOn = [this] {
            for (;;) {
                {
                    std::lock_guard lock(mu_);
                    if (stopping_)
                        return false;
                }
                if (!busy_ || !busy_())
                    return true;
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        };
        try {
            const std::optional<SummaryStats> made = store_.prepareSummaries(goOn);
            if (!made)
                continue; // stopping
            // The previous summaries were freed (unless a request still holds them): millions
            // of small blocks (their map's nodes), which malloc would otherwise keep as the
            // daemon's memory until reused.
            malloc_trim(0);
            const SummaryStats& s = *made;
            char line[160];
            std::snprintf(line, sizeof line,
                          "summarized %zu declarations in %zu blocks (%zu decoded, %zu kept) "
                          "and %zu names' declarations by id, %.1f MiB",
                          s.rows, s.blocks, s.decoded, s.copied, s.names,
                          double(s.bytes) / (1 << 20));
            log_(line);
        } catch (const std::exception& e) {
            log_(std::string("summarizing declarations: ") + e.what());
        }
    }
}

} // namespace symdex::daemon
