#include "daemon/search_preparer.h"

#include "store/symbol_store.h"

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
        try {
            // The pages first: the search's own reads then fault none in either.
            store_.prefaultMap();
            store_.prepareNameSearch();
        } catch (const std::exception& e) {
            // Searches read what they need themselves: nothing is lost but time.
            log_(std::string("preparing the store for requests: ") + e.what());
        }
    }
}

} // namespace symdex::daemon
