#include "daemon/search_preparer.h"

#include "store/symbol_store.h"

#include <cstdio>
#include <exception>

namespace symdex::daemon {

SearchPreparer::SearchPreparer(const SymbolStore& store,
                               std::function<void(const std::string&)> log)
    : store_(store), log_(std::move(log)), thread_([this] { loop(); }) {}

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
    }
}

} // namespace symdex::daemon
