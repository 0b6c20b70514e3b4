#include "daemon/index_service.h"

#include "indexer/compile_db.h"
#include "store/lmdb.h"

#include <filesystem>
#include <pthread.h>
#include <time.h>
#include <unordered_set>

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

std::chrono::nanoseconds coarseRealTime() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::vector<std::string> includeDirectories(const CompileCommand& command) {
    static constexpr std::string_view kFlags[] = {"-I", "-iquote", "-isystem", "-idirafter",
                                                  "--include-directory="};
    std::vector<std::string> dirs;
    const std::vector<std::string>& args = command.arguments;
    for (size_t i = 0; i < args.size(); ++i) {
        for (std::string_view flag : kFlags) {
            if (!std::string_view(args[i]).starts_with(flag))
                continue;
            std::string dir = args[i].substr(flag.size());
            if (dir.empty() && !flag.ends_with('=') && i + 1 < args.size())
                dir = args[++i];
            if (!dir.empty())
                dirs.push_back(absolutePath(dir, command.directory));
            break;
        }
    }
    return dirs;
}

std::vector<std::string> watchDirectories(const CompileDatabase& db,
                                          const std::vector<std::string>& indexedFiles,
                                          size_t maxIncludeDirectories,
                                          const std::vector<std::string>& absentPaths) {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen;
    auto add = [&](std::string dir) {
        if (seen.insert(dir).second)
            out.push_back(std::move(dir));
    };
    auto parent = [](const std::string& file) {
        return std::filesystem::path(file).parent_path().string();
    };
    for (const CompileCommand& cmd : db.commands)
        add(parent(cmd.file));
    for (const std::string& file : db.missingFiles)
        add(parent(file));
    size_t includes = 0;
    for (const CompileCommand& cmd : db.commands)
        for (std::string& dir : includeDirectories(cmd))
            if (!seen.contains(dir) && includes++ < maxIncludeDirectories)
                add(std::move(dir));
    for (const std::string& file : indexedFiles)
        add(parent(file));
    // Where a TU looked for a file and found none ("gen/version.h" in an include directory's
    // existing subdirectory): the file appearing there makes that TU dirty.
    for (const std::string& path : absentPaths)
        add(parent(path));
    return out;
}

IndexService::IndexService(Store& store, IndexServiceOptions options, Callbacks callbacks)
    : store_(store), options_(std::move(options)), callbacks_(std::move(callbacks)),
      pendingRun_(options_.indexes) {}

void IndexService::start() {
    urgentThread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "index-urgent");
        urgentLoop();
    });
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "index-runner");
        loop();
    });
}

IndexService::~IndexService() {
    stop();
}

void IndexService::request(std::vector<std::string> changedPaths, bool force, bool pruneEmpty) {
    {
        std::lock_guard lock(mu_);
        pendingPaths_.insert(changedPaths.begin(), changedPaths.end());
        pendingRun_ = true;
        pendingForce_ |= force;
        pendingPrune_ |= pruneEmpty;
    }
    wake_.notify_all(); // the index runner (urgentLoop() waits on it too)
}

IndexStatus IndexService::status() const {
    std::lock_guard lock(mu_);
    IndexStatus st;
    // A run asked for and not yet begun (the first, or one after a change) is reported as
    // planning: "idle" promises that nothing is about to change the answers.
    st.state = state_ == IndexState::Idle && pendingRun_ ? IndexState::Planning : state_;
    st.runsStarted = runsStarted_;
    st.pendingChanges = pendingPaths_.size();
    st.runPending = pendingRun_;
    if (current_)
        st.progress = current_->progress();
    st.lastRun = lastRun_;
    return st;
}

void IndexService::prioritize(const std::string& path) {
    std::lock_guard lock(mu_);
    if (current_)
        current_->prioritize(path);
    else if (state_ != IndexState::Idle || pendingRun_)
        urgentPaths_.insert(path); // a run is starting: its Indexer gets it
}

bool IndexService::awaitDocument(const std::string& path, std::chrono::milliseconds timeout,
                                 int maxWaiting) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(mu_);
    if (waiting_ >= maxWaiting)
        return false;
    ++waiting_;
    const Indexer* asked = nullptr;
    bool ready = false;
    for (;;) {
        if (stopping_)
            break;
        FileState state = FileState::Ready;
        if (current_) {
            if (asked != current_) {
                current_->prioritize(path);
                asked = current_;
            }
            state = current_->fileState(path);
        } else if (state_ != IndexState::Idle || pendingRun_) {
            urgentPaths_.insert(path); // loading the database, or about to
            state = FileState::Planning;
        }
        if (state == FileState::Ready) {
            ready = true;
            break;
        }
        if (progressed_.wait_until(lock, deadline) == std::cv_status::timeout)
            break;
    }
    --waiting_;
    return ready;
}

void IndexService::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    wake_.notify_all();
    progressed_.notify_all();
    if (thread_.joinable())
        thread_.join();
    if (urgentThread_.joinable())
        urgentThread_.join();
}

void IndexService::urgentLoop() {
    for (;;) {
        Indexer* indexer;
        {
            std::unique_lock lock(mu_);
            wake_.wait(lock, [&] { return stopping_ || (current_ && currentRun_ != servedRun_); });
            if (stopping_)
                return;
            indexer = current_;
            servedRun_ = currentRun_;
            serving_ = true;
        }
        indexer->serveUrgent(); // returns when the run's parse phase ends
        {
            std::lock_guard lock(mu_);
            serving_ = false;
        }
        wake_.notify_all();
    }
}

void IndexService::loop() {
    for (;;) {
        std::vector<std::string> trigger;
        bool force, pruneEmpty;
        uint64_t run;
        {
            std::unique_lock lock(mu_);
            wake_.wait(lock, [&] { return stopping_ || pendingRun_; });
            if (stopping_)
                return;
            trigger.assign(pendingPaths_.begin(), pendingPaths_.end());
            force = pendingForce_;
            pruneEmpty = pendingPrune_;
            pendingPaths_.clear();
            pendingRun_ = pendingForce_ = pendingPrune_ = false;
            state_ = IndexState::Planning;
            run = ++runsStarted_;
        }
        if (callbacks_.started)
            callbacks_.started(run);
        IndexRunReport report = runOnce(run, std::move(trigger), force, pruneEmpty);
        {
            std::lock_guard lock(mu_);
            state_ = IndexState::Idle;
            lastRun_ = report;
            if (!pendingRun_)
                urgentPaths_.clear(); // nothing is queued for them any more
        }
        progressed_.notify_all();
        if (callbacks_.finished)
            callbacks_.finished(report);
    }
}

std::string IndexService::keptReason(const CompileDatabase& db) const {
    std::string reason = emptyDatabaseReason(db);
    if (reason.empty())
        return {};
    size_t tus = 0;
    store_.forEachTu([&](const std::string&, const TuRecord&) { ++tus; });
    if (tus == 0)
        return {}; // nothing to keep
    return reason + "; keeping the " + std::to_string(tus) +
           " TUs indexed before until it lists files that exist (symdex/index with "
           "\"pruneEmpty\": true empties the store)";
}

IndexRunReport IndexService::runOnce(uint64_t run, std::vector<std::string> trigger, bool force,
                                     bool pruneEmpty) {
    IndexRunReport report;
    report.run = run;
    report.startedAt = coarseRealTime();
    report.trigger = std::move(trigger);
    report.force = force;
    std::string error;
    std::optional<CompileDatabase> db = loadCompileDatabase(options_.database, &error);
    if (db) {
        report.databasePath = db->path;
        report.skipped = db->warnings;
        try {
            if (!pruneEmpty)
                report.kept = keptReason(*db);
        } catch (const std::exception& e) {
            report.error = std::string("reading the store failed: ") + e.what();
        }
    }
    if (!db) {
        report.error = error;
    } else if (report.kept.empty() && report.error.empty()) {
        IndexOptions indexOptions;
        indexOptions.threads = options_.threads;
        indexOptions.lowPriority = options_.lowPriority;
        indexOptions.tuTimeout = options_.tuTimeout;
        indexOptions.pch = options_.pchDirectory.empty() ? PchPolicy::Off : PchPolicy::Auto;
        indexOptions.pchDirectory = options_.pchDirectory;
        indexOptions.force = force;
        indexOptions.cancel = &stopping_;
        indexOptions.progressed = [this] {
            { std::lock_guard lock(mu_); } // a waiter between its check and its wait sees it
            progressed_.notify_all();
        };
        Indexer indexer(store_, indexOptions);
        {
            std::lock_guard lock(mu_);
            for (const std::string& path : urgentPaths_)
                indexer.prioritize(path);
            urgentPaths_.clear();
            current_ = &indexer;
            currentRun_ = run;
            state_ = IndexState::Indexing;
        }
        wake_.notify_all(); // urgentLoop()
        progressed_.notify_all();
        try {
            report.summary = indexer.run(*db);
        } catch (const std::exception& e) {
            report.error = std::string("indexing failed: ") + e.what();
        }
        std::unique_lock lock(mu_);
        current_ = nullptr;
        // urgentLoop() may still be on its way out of serveUrgent(): the Indexer must outlive it.
        wake_.wait(lock, [&] { return !serving_; });
    }
    std::vector<std::string> absent;
    try {
        store_.forEachFile([&](uint32_t, const FileRecord& f) { report.files.push_back(f.path); });
        store_.forEachAbsentPath(
            [&](uint32_t, const std::string& path) { absent.push_back(path); });
    } catch (const std::exception& e) {
        if (report.error.empty())
            report.error = std::string("reading the store failed: ") + e.what();
    }
    if (db)
        lastDirectories_ = watchDirectories(*db, report.files, 4096, absent);
    // An unreadable database (half written, say) keeps the directories watched until it is whole.
    report.directories = lastDirectories_;
    return report;
}

} // namespace symdex::daemon
