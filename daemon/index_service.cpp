#include "daemon/index_service.h"

#include "indexer/compile_db.h"
#include "store/lmdb.h"

#include <pthread.h>

namespace symdex::daemon {

std::string_view indexStateName(IndexState state) {
    switch (state) {
    case IndexState::Idle:
        return "idle";
    case IndexState::Planning:
        return "planning";
    case IndexState::Indexing:
        return "indexing";
    }
    return "?";
}

IndexService::IndexService(SymbolStore& store, IndexServiceOptions options, Callbacks callbacks)
    : store_(store), options_(std::move(options)), callbacks_(std::move(callbacks)) {}

void IndexService::start() {
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "index-runner");
        loop();
    });
}

IndexService::~IndexService() {
    stop();
}

void IndexService::request(std::vector<std::string> changedPaths, bool force) {
    {
        std::lock_guard lock(mu_);
        pendingPaths_.insert(changedPaths.begin(), changedPaths.end());
        pendingRun_ = true;
        pendingForce_ |= force;
    }
    wake_.notify_one();
}

IndexStatus IndexService::status() const {
    std::lock_guard lock(mu_);
    IndexStatus st;
    st.state = state_;
    st.runsStarted = runsStarted_;
    st.pendingChanges = pendingPaths_.size();
    st.runPending = pendingRun_;
    if (current_)
        st.progress = current_->progress();
    st.lastRun = lastRun_;
    return st;
}

void IndexService::stop() {
    stopping_ = true;
    wake_.notify_one();
    if (thread_.joinable())
        thread_.join();
}

void IndexService::loop() {
    for (;;) {
        std::vector<std::string> trigger;
        bool force;
        uint64_t run;
        {
            std::unique_lock lock(mu_);
            wake_.wait(lock, [&] { return stopping_ || pendingRun_; });
            if (stopping_)
                return;
            trigger.assign(pendingPaths_.begin(), pendingPaths_.end());
            force = pendingForce_;
            pendingPaths_.clear();
            pendingRun_ = pendingForce_ = false;
            state_ = IndexState::Planning;
            run = ++runsStarted_;
        }
        if (callbacks_.started)
            callbacks_.started(run);
        IndexRunReport report = runOnce(run, std::move(trigger), force);
        {
            std::lock_guard lock(mu_);
            state_ = IndexState::Idle;
            lastRun_ = report;
        }
        if (callbacks_.finished)
            callbacks_.finished(report);
    }
}

IndexRunReport IndexService::runOnce(uint64_t run, std::vector<std::string> trigger, bool force) {
    IndexRunReport report;
    report.run = run;
    report.trigger = std::move(trigger);
    report.force = force;
    std::string error;
    std::optional<CompileDatabase> db = loadCompileDatabase(options_.database, &error);
    if (!db) {
        report.error = error;
    } else {
        report.databasePath = db->path;
        IndexOptions indexOptions;
        indexOptions.threads = options_.threads;
        indexOptions.lowPriority = options_.lowPriority;
        indexOptions.tuTimeout = options_.tuTimeout;
        indexOptions.force = force;
        indexOptions.cancel = &stopping_;
        Indexer indexer(store_, indexOptions);
        {
            std::lock_guard lock(mu_);
            current_ = &indexer;
            state_ = IndexState::Indexing;
        }
        try {
            report.summary = indexer.run(*db);
        } catch (const std::exception& e) {
            report.error = std::string("indexing failed: ") + e.what();
        }
        std::lock_guard lock(mu_);
        current_ = nullptr;
    }
    try {
        store_.forEachFile([&](uint32_t, const FileRecord& f) { report.files.push_back(f.path); });
    } catch (const std::exception& e) {
        if (report.error.empty())
            report.error = std::string("reading the store failed: ") + e.what();
    }
    return report;
}

} // namespace symdex::daemon
