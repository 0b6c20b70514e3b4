#include "daemon/daemon.h"

#include "daemon/index_service.h"
#include "daemon/mailbox.h"
#include "daemon/runtime_paths.h"
#include "daemon/search_preparer.h"
#include "daemon/server.h"
#include "daemon/watcher.h"
#include "indexer/compile_db.h"
#include "store/lmdb.h"
#include "store/page_cache.h"
#include "store/symbol_store.h"

#include <QJsonDocument>

#include <chrono>
#include <cstdio>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace symdex::daemon {

Daemon::Daemon(DaemonOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
    progressTimer_.setInterval(options_.progressInterval);
    connect(&progressTimer_, &QTimer::timeout, this, &Daemon::reportProgress);
    storeCheckTimer_.setInterval(std::chrono::seconds(1));
    connect(&storeCheckTimer_, &QTimer::timeout, this, &Daemon::checkStore);
}

namespace {

/// Returns once coarseRealTime(), which stamps a run's start (IndexService) and files' ctimes
/// alike, has passed `path`'s ctime, waiting 20 ms at most. The store's directory, made in the
/// tree a moment ago (its default, ROOT/.symdex), changed its parent: within the same 4 ms tick
/// as the first run's start, the watcher took that for a change the run may have missed, and
/// ran again (daemon_tree_test, where the tree's root is watched for a missing include
/// directory: 1 run in about 40).
void waitPastChange(const std::filesystem::path& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return;
    const auto changed =
        std::chrono::seconds(st.st_ctim.tv_sec) + std::chrono::nanoseconds(st.st_ctim.tv_nsec);
    for (int i = 0; i < 20 && coarseRealTime() <= changed; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::optional<std::pair<dev_t, ino_t>> fileId(const std::filesystem::path& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return std::make_pair(st.st_dev, st.st_ino);
}

} // namespace

Daemon::~Daemon() {
    stop();
}

bool Daemon::resolvePaths(std::string* error) {
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path().string();
    root_ = canonicalPath(absolutePath(options_.root.string(), cwd));
    if (!std::filesystem::is_directory(root_, ec)) {
        *error = "--root '" + root_ + "' is not a directory";
        return false;
    }
    if (options_.store.empty())
        options_.store = std::filesystem::path(root_) / ".symdex";
    options_.store = absolutePath(options_.store.string(), cwd);
    if (options_.database.empty())
        options_.database = std::filesystem::exists(root_ + "/compile_commands.json", ec)
                                ? root_
                                : root_ + "/build";
    options_.database = absolutePath(options_.database, cwd);
    databaseFile_ = std::filesystem::is_directory(options_.database, ec)
                        ? options_.database + "/compile_commands.json"
                        : options_.database;

    std::filesystem::path socketDir;
    if (options_.socketPath.empty()) {
        socketPath_ = defaultSocketPath(options_.store).string();
        socketDir = socketDirectory();
    } else {
        socketPath_ = absolutePath(options_.socketPath, cwd);
        socketDir = std::filesystem::path(socketPath_).parent_path();
    }
    return ensurePrivateDirectory(socketDir, error);
}

bool Daemon::start(std::string* error) {
    if (!resolvePaths(error))
        return false;
    if (options_.readOnly && !std::filesystem::exists(options_.store / "data.mdb")) {
        *error = "--read-only: '" + options_.store.string() +
                 "' holds no store (a read-only daemon serves one that symdex index or symdex "
                 "merge wrote)";
        return false;
    }
    lock_ = protocol::InstanceLock::acquire(options_.store, socketPath_, error);
    if (!lock_)
        return false;
    try {
        StoreOptions storeOptions;
        storeOptions.directory = options_.store;
        storeOptions.readOnly = options_.readOnly;
        store_ = SymbolStore::open(storeOptions);
    } catch (const StoreError& e) {
        *error = e.what();
        return false;
    }
    const auto directoryId = fileId(options_.store);
    const auto dataId = fileId(options_.store / "data.mdb");
    if (!directoryId || !dataId) {
        *error = "cannot stat the store '" + options_.store.string() + "' or its data.mdb";
        return false;
    }
    storeDirectoryId_ = *directoryId;
    dataFileId_ = *dataId;
    mailbox_ = std::make_unique<Mailbox>();
    IndexService::Callbacks callbacks;
    callbacks.started = [this](uint64_t run) { mailbox_->post([this, run] { runStarted(run); }); };
    callbacks.finished = [this](const IndexRunReport& report) {
        mailbox_->post([this, report] { runFinished(report); });
    };
    indexer_ = std::make_unique<IndexService>(
        *store_,
        IndexServiceOptions{options_.database, options_.indexThreads, options_.lowIndexPriority,
                            options_.tuTimeout, (options_.store / "pch").string(),
                            !options_.readOnly},
        callbacks);
    context_.reset(new ServerContext{*store_, *indexer_, root_, options_.store.string(),
                                     socketPath_, nullptr});
    context_->readOnly = options_.readOnly;
    ServerOptions serverOptions;
    serverOptions.queryThreads = options_.queryThreads;
    server_ = std::make_unique<Server>(*context_, *mailbox_, serverOptions);
    // The Server, not server_: workers may ask while stop() resets server_.
    context_->serverFigures = [server = server_.get()] { return server->figures(); };
    context_->maxDocumentWaits = int(server_->queryThreads()) - 1;
    if (!server_->listen(socketPath_, error))
        return false;
    if (options_.readOnly) {
        std::fprintf(stderr, "symdexd: pid %d serving %s read-only on %s (root %s)\n",
                     int(::getpid()), options_.store.c_str(), socketPath_.c_str(), root_.c_str());
        startPreparing();
        storeCheckTimer_.start();
        return true;
    }
    watcher_ = std::make_unique<Watcher>(
        options_.debounce, options_.maxWatches ? options_.maxWatches : defaultWatchBudget(),
        [this](std::vector<std::string> paths) {
            std::fprintf(stderr, "symdexd: %zu path(s) changed, first %s\n", paths.size(),
                         paths.front().c_str());
            checkStore(); // no run into a store that is gone
            if (!storeLost_)
                indexer_->request(std::move(paths), false);
        },
        [](const std::string& line) { std::fprintf(stderr, "symdexd: %s\n", line.c_str()); });
    watcher_->setPaths({databaseFile_}, {});
    std::fprintf(stderr, "symdexd: pid %d serving %s on %s (root %s, database %s)\n",
                 int(::getpid()), options_.store.c_str(), socketPath_.c_str(), root_.c_str(),
                 options_.database.c_str());
    startPreparing();
    waitPastChange(options_.store.parent_path());
    indexer_->start();
    storeCheckTimer_.start();
    return true;
}

void Daemon::startPreparing() {
    // The store's pages mapped and what name searches keep in memory read now, rather than by
    // the first requests (daemon/search_preparer.h).
    preparedCommit_ = store_->lastCommitId();
    searchPreparer_ = std::make_unique<SearchPreparer>(
        *store_,
        [](const std::string& line) { std::fprintf(stderr, "symdexd: %s\n", line.c_str()); },
        [server = server_.get()] { return server->answering(); });
    // The store's pages into the page cache while the first requests come: a query on a cold
    // cache waits for the disk at every page it touches (store/page_cache.h). Once it holds
    // them, the preparer maps them. The warmer stops before the preparer does (stop()).
    warmer_ = std::make_unique<PageCacheWarmer>(
        options_.store / "data.mdb",
        [](const std::string& line) { std::fprintf(stderr, "symdexd: %s\n", line.c_str()); },
        [server = server_.get()] { return server->answering(); },
        [preparer = searchPreparer_.get()] { preparer->request(); });
}

bool Daemon::storeInPlace(std::string* why) const {
    // The directory first: when it is gone, that is the clearest thing to say.
    const std::filesystem::path data = options_.store / "data.mdb";
    const auto directoryId = fileId(options_.store);
    if (directoryId != storeDirectoryId_) {
        *why = "'" + options_.store.string() + "' " +
               (directoryId ? "is another directory now" : "was deleted");
        return false;
    }
    if (!lock_->stillInPlace(why))
        return false;
    const auto dataId = fileId(data);
    if (dataId != dataFileId_) {
        *why = "'" + data.string() + "' " + (dataId ? "is another file now" : "was deleted");
        return false;
    }
    return true;
}

void Daemon::checkStore() {
    if (storeLost_ || stopped_ || !lock_)
        return;
    std::string why;
    if (storeInPlace(&why)) {
        // A read-only daemon's store changes by other processes' commits, which no run of its
        // own announces: each new one is prepared too (its pages mapped, its vocabulary read).
        if (options_.readOnly && searchPreparer_)
            if (const uint64_t commit = store_->lastCommitId(); commit != preparedCommit_) {
                preparedCommit_ = commit;
                searchPreparer_->request();
            }
        return;
    }
    storeLost_ = true;
    storeCheckTimer_.stop();
    std::fprintf(stderr,
                 "symdexd: the store '%s' was deleted or replaced (%s); exiting so that no "
                 "client is answered from it and a new daemon can start\n",
                 options_.store.c_str(), why.c_str());
    emit storeLost();
}

void Daemon::runStarted(uint64_t run) {
    if (!server_)
        return;
    checkStore(); // a run was asked for (symdex/index, didSave): stop it if the store is gone
    server_->indexRunStarted(run);
    progressTimer_.start();
}

void Daemon::reportProgress() {
    if (!server_)
        return;
    const IndexStatus st = indexer_->status();
    if (st.state == IndexState::Indexing && !st.progress.planning)
        server_->indexProgress(uint32_t(st.progress.tusDone), uint32_t(st.progress.tusToParse));
}

void Daemon::runFinished(const IndexRunReport& report) {
    if (!server_)
        return;
    progressTimer_.stop();
    const IndexSummary& s = report.summary;
    const auto run = static_cast<unsigned long long>(report.run);
    logSkipped(report);
    if (!report.error.empty())
        std::fprintf(stderr, "symdexd: run %llu: %s\n", run, report.error.c_str());
    else if (!report.kept.empty())
        std::fprintf(stderr, "symdexd: run %llu: indexed nothing: %s\n", run, report.kept.c_str());
    else
        std::fprintf(stderr, "symdexd: run %llu: parsed %zu of %zu TUs in %.2f s%s\n",
                     static_cast<unsigned long long>(report.run), s.tusParsed, s.tusTotal,
                     s.wallSeconds, s.cancelled ? " (cancelled)" : "");
    // A TU that failed or crashed is logged once, by the run that met it, with the reason.
    for (const TuFailure& f : s.failures)
        if (f.status == TuStatus::Failed || f.status == TuStatus::Crashed)
            std::fprintf(stderr, "symdexd: run %llu: %s %s: %s\n",
                         static_cast<unsigned long long>(report.run), f.file.c_str(),
                         std::string(tuStatusName(f.status)).c_str(),
                         f.firstError.empty() ? "(no reason given)" : f.firstError.c_str());
    if (!s.isolationNote.empty())
        std::fprintf(stderr, "symdexd: run %llu: %s\n", static_cast<unsigned long long>(report.run),
                     s.isolationNote.c_str());
    // Before the clients hear of the run: their next searches then find the new snapshot
    // prepared, or being prepared (they share what the preparer loads).
    if (searchPreparer_)
        searchPreparer_->request();
    server_->indexRunFinished(!report.error.empty()  ? QString::fromStdString(report.error)
                              : !report.kept.empty() ? QString::fromStdString(report.kept)
                                                     : QString("%1 TUs parsed").arg(s.tusParsed));
    server_->broadcast(protocol::makeNotification("symdex/reindexed", runReportJson(report)));
    std::vector<std::string> watch;
    watch.reserve(report.files.size() + 1);
    watch.push_back(databaseFile_); // first: the last to go when inotify watches run short
    watch.insert(watch.end(), report.files.begin(), report.files.end());
    watcher_->setPaths(watch, report.directories, report.startedAt);
}

void Daemon::logSkipped(const IndexRunReport& report) {
    const auto run = static_cast<unsigned long long>(report.run);
    if (report.skipped.empty()) {
        loggedSkipped_.clear();
        return;
    }
    // Every run says it; the lines themselves only when they changed, so that a run per save does
    // not repeat a long list.
    if (report.skipped == loggedSkipped_) {
        std::fprintf(stderr,
                     "symdexd: run %llu: %zu database entries skipped, as in the run before\n", run,
                     report.skipped.size());
        return;
    }
    loggedSkipped_ = report.skipped;
    constexpr size_t kShown = 20;
    for (size_t i = 0; i < report.skipped.size() && i < kShown; ++i)
        std::fprintf(stderr, "symdexd: run %llu: warning: %s\n", run, report.skipped[i].c_str());
    if (report.skipped.size() > kShown)
        std::fprintf(stderr, "symdexd: run %llu: warning: ... and %zu more like these\n", run,
                     report.skipped.size() - kShown);
}

void Daemon::stop() {
    if (stopped_)
        return;
    stopped_ = true;
    progressTimer_.stop();
    storeCheckTimer_.stop();
    watcher_.reset();
    warmer_.reset();
    if (server_)
        server_->close(); // no new requests
    if (indexer_)
        indexer_->stop(); // the run ends after the TUs being parsed, and flushes
    if (store_) {
        try {
            store_->flush();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "symdexd: committing at exit failed: %s\n", e.what());
        }
    }
    // After the indexer: a pass waiting for the store-wide lock (LockMode::Global) that a TU's
    // extraction holds gets it once the indexer has stopped.
    searchPreparer_.reset();
    server_.reset(); // joins the query workers
    indexer_.reset();
    context_.reset();
    mailbox_.reset();
    store_.reset();
    if (lock_) { // the socket file went with server_
        lock_.reset();
        std::fprintf(stderr, "symdexd: stopped\n");
    }
}

} // namespace symdex::daemon
