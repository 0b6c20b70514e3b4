// The daemon's indexing: one `index-runner` thread that runs the incremental Indexer (itself on
// a TBB arena) whenever files changed or a client asked, reloading the compile database each
// time so a new one is picked up without a restart. Requests arriving during a run are merged
// into the next one. Queries never wait for it: they read the store on other threads.
//
// A database that lists no file that exists (`[]`, a checkout that moved, a volume not mounted)
// does not empty the store: the run indexes nothing, keeps every TU, and says why
// (IndexRunReport::kept); a request with `pruneEmpty` drops them. A database where only some
// files are missing is indexed as a clean index of the same tree would be: those TUs are removed,
// and indexed again when their files come back (the watcher watches their directories).
#pragma once

#include "indexer/indexer.h"
#include "store/store.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace symdex::daemon {

enum class IndexState { Idle, Planning, Indexing };
std::string_view indexStateName(IndexState state);

struct IndexServiceOptions {
    /// compile_commands.json or the directory holding it; re-read before every run.
    std::string database;
    /// Indexer threads; 0: all hardware threads.
    unsigned threads = 0;
    /// Parse under SCHED_IDLE (IndexOptions::lowPriority), so queries get the CPU first.
    bool lowPriority = true;
    /// IndexOptions::tuTimeout (--tu-timeout).
    std::chrono::milliseconds tuTimeout{std::chrono::minutes(5)};
    /// IndexOptions::pchDirectory: the store's `pch/` (empty: no precompiled prefixes).
    std::string pchDirectory;
    /// False for a read-only daemon's: no first run is pending (and start() is not called).
    bool indexes = true;
};

/// What one run did, for notifications and symdex/status.
struct IndexRunReport {
    uint64_t run = 0; ///< 1, 2, ... within this daemon
    /// CLOCK_REALTIME_COARSE before the run read anything (the database, a file): a path whose
    /// ctime is not earlier may have changed after the run saw it (Watcher::setPaths()).
    std::chrono::nanoseconds startedAt{0};
    std::vector<std::string> trigger; ///< changed paths that caused the run; empty: start/all
    bool force = false;
    std::string error; ///< the database could not be read, or the store failed; nothing indexed
    std::string databasePath; ///< the compile_commands.json the run read
    /// Entries of the database the run skipped, one message each (missing files, repeats).
    std::vector<std::string> skipped;
    /// Why the run indexed nothing and kept the store (emptyDatabaseReason); empty otherwise.
    std::string kept;
    IndexSummary summary;           ///< parsedTus: exactly the TUs re-parsed
    std::vector<std::string> files; ///< every file the store knows after the run (to watch)
    /// Directories where a file appearing can change the index (watchDirectories()).
    std::vector<std::string> directories;
};

/// Now by CLOCK_REALTIME_COARSE, the clock Linux stamps a file's ctime with: a change made after
/// this call has a ctime not earlier than what it returns (a finer clock may read later than the
/// stamp of a change that follows it).
std::chrono::nanoseconds coarseRealTime();

/// A consistent picture for symdex/status.
struct IndexStatus {
    IndexState state = IndexState::Idle;
    uint64_t runsStarted = 0;
    size_t pendingChanges = 0; ///< changed paths waiting for the next run
    bool runPending = false;   ///< a run will start after this one (or now)
    IndexProgress progress;    ///< of the current run (meaningful unless Idle)
    std::optional<IndexRunReport> lastRun;
};

/// Include directories of one command (-I, -iquote, -isystem, -idirafter, in both spellings),
/// absolute, in command-line order.
std::vector<std::string> includeDirectories(const CompileCommand& command);

/// The directories to watch for files that appear: those of every entry's main file (existing or
/// not), then the include directories of the commands (at most `maxIncludeDirectories`), then the
/// directories of `indexedFiles`, then those of `absentPaths` (what TUs looked for in vain); each
/// once, in that order (the order of priority when inotify watches run short).
std::vector<std::string> watchDirectories(const CompileDatabase& db,
                                          const std::vector<std::string>& indexedFiles,
                                          size_t maxIncludeDirectories = 4096,
                                          const std::vector<std::string>& absentPaths = {});

class IndexService {
public:
    struct Callbacks {
        /// Called on the index thread when a run starts.
        std::function<void(uint64_t run)> started;
        /// Called on the index thread when a run ended (also on error or cancellation).
        std::function<void(const IndexRunReport&)> finished;
    };

    IndexService(Store& store, IndexServiceOptions options, Callbacks callbacks);
    /// Starts the thread; the first run starts at once.
    void start();
    /// stop().
    ~IndexService();

    /// Asks for a run: after `changedPaths` changed (empty: re-check everything), re-parsing
    /// every TU when `force`; with `pruneEmpty`, a database that lists no existing file empties
    /// the store instead of being refused. Thread-safe; never blocks on a run.
    void request(std::vector<std::string> changedPaths, bool force, bool pruneEmpty = false);
    IndexStatus status() const;

    /// Open files first (Indexer::prioritize): the TU of `path` is parsed before every other one
    /// not yet started, in this run or, if one is about to start, the next. Thread-safe; never
    /// blocks on a run.
    void prioritize(const std::string& path);
    /// For a request on the document `path`: prioritizes it and, while its TU is queued (or the
    /// run starting may find it out of date), waits for it to be parsed, at most `timeout`. True
    /// if the store then holds what the run made of it; false on timeout, when `maxWaiting`
    /// requests wait already (each holds a query thread), or when stopping. A request answers
    /// from the store either way.
    bool awaitDocument(const std::string& path, std::chrono::milliseconds timeout, int maxWaiting);
    /// Stops the current run after the TUs being parsed (their results are committed), and joins
    /// the thread. Later requests are ignored.
    void stop();

private:
    void loop();
    /// The `index-urgent` thread: parses urgent TUs of each run (Indexer::serveUrgent) at normal
    /// priority; started before any thread goes to SCHED_IDLE, which it could not leave.
    void urgentLoop();
    IndexRunReport runOnce(uint64_t run, std::vector<std::string> trigger, bool force,
                           bool pruneEmpty);
    /// Why a run of `db` must keep the store (the reason, naming the database); empty if not.
    std::string keptReason(const CompileDatabase& db) const;

    Store& store_;
    const IndexServiceOptions options_;
    const Callbacks callbacks_;
    std::atomic<bool> stopping_{false};        // read by the Indexer between TUs
    std::vector<std::string> lastDirectories_; // only the index thread touches it

    std::set<std::string> pendingPaths_;
    bool pendingRun_; // initially: the first run (IndexServiceOptions::indexes)
    bool pendingForce_ = false;
    bool pendingPrune_ = false;
    IndexState state_ = IndexState::Idle;
    uint64_t runsStarted_ = 0;
    Indexer* current_ = nullptr; // the running Indexer
    std::optional<IndexRunReport> lastRun_;
    std::set<std::string> urgentPaths_; ///< for the next run's Indexer
    int waiting_ = 0;                   ///< requests in awaitDocument()
    uint64_t currentRun_ = 0;           ///< the run current_ belongs to
    uint64_t servedRun_ = 0;            ///< the run urgentLoop() serves (or served last)
    bool serving_ = false;              ///< urgentLoop() is in served_->serveUrgent()
    mutable std::mutex mu_;             // guards the members above, from pendingPaths_ on
    std::condition_variable wake_;
    std::condition_variable progressed_; ///< a TU was parsed, a run planned, started or ended

    std::thread thread_;
    std::thread urgentThread_;
};

} // namespace symdex::daemon
