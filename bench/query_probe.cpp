#include "bench/query_probe.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <pthread.h>
#include <set>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace symdex {

QueryProbe::QueryProbe(const Store& store, std::vector<std::string> names, double rate)
    : store_(store), names_(std::move(names)), rate_(rate) {
    if (names_.empty() || rate_ <= 0)
        return;
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "query-probe");
        // Wake up on time: with the default 50 us timer slack, oversleeping would dominate the
        // latency of a lookup that takes a few microseconds (it is measured from its due time).
        prctl(PR_SET_TIMERSLACK, 1UL);
        loop();
    });
}

QueryProbe::~QueryProbe() {
    stop();
}

ProbeResult QueryProbe::stop() {
    stop_ = true;
    if (thread_.joinable())
        thread_.join();
    return result_;
}

ProbeResult QueryProbe::runFor(uint64_t queries) {
    limit_ = queries;
    if (thread_.joinable())
        thread_.join();
    return result_;
}

void QueryProbe::loop() {
    using Clock = std::chrono::steady_clock;
    const auto interval = std::chrono::nanoseconds(int64_t(1e9 / rate_));
    const auto start = Clock::now();
    for (uint64_t i = 0; !stop_.load(std::memory_order_relaxed) && i < limit_.load(); ++i) {
        const auto due = start + i * interval;
        std::this_thread::sleep_until(due);
        const std::string& name = names_[(i / 2) % names_.size()];
        const bool definition = i % 2 == 1;
        std::vector<uint64_t> usrs = store_.resolveName(name);
        bool found = !usrs.empty();
        if (definition && found) {
            std::vector<SymbolHit> hits = store_.occurrences(usrs.front());
            found = std::any_of(hits.begin(), hits.end(),
                                [](const SymbolHit& h) { return h.symbol.isDefinition(); });
        }
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - due);
        (definition ? result_.definitionLookups : result_.nameLookups).record(uint64_t(ns.count()));
        result_.found += found;
    }
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    result_.userSeconds = double(usage.ru_utime.tv_sec) + double(usage.ru_utime.tv_usec) / 1e6;
    result_.sysSeconds = double(usage.ru_stime.tv_sec) + double(usage.ru_stime.tv_usec) / 1e6;
}

std::vector<std::string> sampleNames(const Store& store, size_t count) {
    std::set<std::string> paths;
    store.forEachFile([&](uint32_t, const FileRecord& f) { paths.insert(f.path); });
    std::vector<std::string> all;
    std::set<std::string> seen;
    for (const std::string& path : paths) {
        for (const Symbol& s : store.fileSymbols(path).value_or(std::vector<Symbol>{})) {
            const bool wanted = s.isDefinition() &&
                                (s.kind == SymbolKind::Function || s.kind == SymbolKind::Method ||
                                 s.kind == SymbolKind::Class || s.kind == SymbolKind::Struct ||
                                 s.kind == SymbolKind::Variable);
            if (wanted && seen.insert(s.qualifiedName).second)
                all.push_back(s.qualifiedName);
        }
    }
    if (all.size() <= count)
        return all;
    std::vector<std::string> sample;
    for (size_t i = 0; i < count; ++i)
        sample.push_back(all[i * all.size() / count]);
    return sample;
}

} // namespace symdex
