// Prepares the store for requests on a thread of its own, when asked: at start and after each
// indexing run, and when PageCacheWarmer has read the store through. It maps the pages of
// data.mdb the page cache holds into the process (SymbolStore::prefaultMap), so that a request
// does not fault in each page it reads first (on this project's machines a fault of the map
// costs 5-20 us, bench/fault_cost, and a first workspace/symbol of a substring at 300k names
// took ~28 of them: docs/measurements.md), and loads the name search's vocabulary and initials
// counts of the latest snapshot (SymbolStore::prepareNameSearch) before a request needs them.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace symdex {
class SymbolStore;
}

namespace symdex::daemon {

class SearchPreparer {
public:
    /// Prepares once now; `log` gets a line for each pass and for a failure. Declarations are
    /// summarized a piece at a time, each after `busy()` (when given) says no request is being
    /// answered: the pass takes seconds at millions of names, and requests come first.
    SearchPreparer(const SymbolStore& store, std::function<void(const std::string&)> log,
                   std::function<bool()> busy = {});
    /// Stops after the pass under way, if any.
    ~SearchPreparer();
    SearchPreparer(const SearchPreparer&) = delete;
    SearchPreparer& operator=(const SearchPreparer&) = delete;

    /// Another pass, on the snapshot committed by then. Asks that come while a pass runs make
    /// one more pass, not one each.
    void request();

private:
    void loop();

    const SymbolStore& store_;
    std::function<void(const std::string&)> log_;
    std::function<bool()> busy_;
    std::mutex mu_;
    std::condition_variable wake_;
    bool wanted_ = true;    // Requires mu_
    bool stopping_ = false; // Requires mu_
    std::thread thread_;
};

} // namespace symdex::daemon
