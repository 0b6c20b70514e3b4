// Indexing a compilation database into a SymbolStore: decide which TUs are out of date, parse
// them on a oneTBB arena, extract each header once per run, publish results to the store's
// writer, and drop what left the tree.
#pragma once

#include "indexer/compile_db.h"
#include "indexer/option_values.h"
#include "indexer/tu_parser.h"
#include "store/store.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symdex {

struct LoadedPch; // indexer/pch.h

/// How libclang's skip-parsed-bodies session (CXIndexOpt_SkipParsedBodiesInSession) is shared.
/// PerThread is the default: on LevelDB it used about 10% less CPU than Shared at 2 threads
/// (docs/measurements.md, "Choosing the extraction API"; the reasons: docs/design.md), and only it
/// keeps a run's result independent of timing. A shared session is snapshotted when libclang starts
/// a TU's frontend action, a moment the scheduler cannot order: a header's owner may then find its
/// bodies already parsed by a higher-ranked TU and skip them (counted in
/// IndexSummary::filesWithSkippedBodies).
enum class SessionMode {
    PerThread, ///< one session per thread: a header's bodies are parsed once per thread
    Shared,    ///< one session for all threads: once per run; results may depend on timing
    None,      ///< no body skipping
};

/// Shared precompiled prefixes (indexer/pch.h).
enum class PchPolicy {
    Off,  ///< every TU parsed plain
    Auto, ///< a PCH per configuration worth one; TUs parse against it where that changes nothing
};

/// Where a TU is parsed.
enum class Isolation {
    /// In a symdex-worker child process (parse_worker.h): a crash, a hang or a memory blow-up of
    /// libclang costs that TU only. Needs SessionMode::PerThread or None and LockMode::PerFile;
    /// otherwise, or when no worker executable is found, the run parses in-process.
    Process,
    /// On the arena's threads, in this process: a TU that kills libclang kills the run.
    InProcess,
};

struct IndexOptions {
    /// Worker threads parsing TUs; 0 means all hardware threads.
    unsigned threads = 0;
    SessionMode session = SessionMode::PerThread;
    /// Extract macro definitions and expansions.
    bool indexMacros = true;
    /// Re-parse every TU even when the store says it is up to date.
    bool force = false;
    /// Parse threads run under SCHED_IDLE (per thread; the threads libclang starts inherit it),
    /// like clangd's background index: queries answered by other threads of the process, or by
    /// other processes, get the CPU first, and indexing takes what they leave. On an otherwise
    /// idle machine the parse threads still get every core. The daemon sets it; `symdex index`
    /// does not by default.
    bool lowPriority = false;
    /// When it becomes true, no further TU starts; the run commits what it parsed and returns
    /// (the daemon's shutdown). TUs left unparsed stay out of date for the next run. Not owned.
    const std::atomic<bool>* cancel = nullptr;
    Isolation isolation = Isolation::Process;
    /// The symdex-worker executable; empty: defaultWorkerPath() (beside this executable).
    std::string workerPath;
    /// A TU whose parse takes longer is stopped and recorded as crashed ("timed out"); 0: none.
    /// Only a parse in a worker can be stopped.
    std::chrono::milliseconds tuTimeout{std::chrono::minutes(5)};
    /// Address-space limit of each worker in MiB (RLIMIT_AS; 0: none): a TU that needs more fails
    /// alone instead of pushing the machine into swap.
    uint64_t workerMemoryLimitMb = 16384;
    PchPolicy pch = PchPolicy::Off;
    /// Where PCHs are kept between runs (the store's `pch/`); empty: no PCHs.
    std::string pchDirectory;
    /// Tests: start at most this many TUs, then end as a cancelled run does (0: no limit). Makes
    /// "interrupted after the first commit" deterministic.
    size_t stopAfterTusForTest = 0;
    /// Called when planning ends, after each TU is published and when the parse phase ends, on
    /// whichever thread did it and with no lock of the Indexer held: what waits on
    /// Indexer::fileState() looks again.
    std::function<void()> progressed;
};

/// Where a file stands in a run (Indexer::fileState).
enum class FileState {
    Planning, ///< the run has not yet decided which TUs are out of date
    Queued,   ///< its TU is out of date and not yet parsed in this run
    Ready,    ///< its TU is up to date or was parsed in this run, or no TU of the run has it
};

/// A snapshot of a run in progress (summed from per-thread counters on demand).
struct IndexProgress {
    size_t tusToParse = 0; ///< out-of-date TUs this run parses
    size_t tusDone = 0;    ///< of those, finished (parsed, failed or crashed)
    size_t symbols = 0;
    size_t references = 0;
    bool planning = true; ///< still checking which TUs are up to date
};

struct TuFailure {
    std::string file;
    TuStatus status;
    uint32_t errorCount;
    std::string firstError;
};

struct IndexSummary {
    size_t tusTotal = 0;    ///< TUs in the compilation database
    size_t tusUpToDate = 0; ///< skipped: nothing they read changed
    size_t tusParsed = 0;
    size_t tusWithErrors = 0; ///< parsed, with error diagnostics
    size_t tusFailed = 0;     ///< libclang could not parse them
    size_t tusCrashed = 0;    ///< libclang crashed on them
    size_t tusRemoved = 0;    ///< left the compilation database
    size_t filesExtracted = 0;
    size_t filesRemoved = 0;
    size_t filesWithSkippedBodies = 0; ///< extracted with some bodies skipped (shared session)
    size_t claimTakeovers = 0; ///< headers re-extracted by a lower-ranked TU (header_claims.h)
    /// Headers extracted by re-parsing their owner after the parses: the owner was up to date
    /// while the store's version came from elsewhere (its owner left, failed or stopped including
    /// them), or a failed TU gave them back after others had skipped them.
    size_t headersRecovered = 0;
    size_t symbols = 0;    ///< extracted this run
    size_t references = 0; ///< extracted this run
    unsigned threads = 0;
    double wallSeconds = 0, userSeconds = 0, sysSeconds = 0;
    /// Wall time of the parse phase, when all `threads` were busy: threads x this is the
    /// thread-time lock waits are a share of.
    double parseWallSeconds = 0;
    CommitStats commits;
    /// Lock acquisitions of the whole process during the run (other threads' queries included).
    LockTelemetry locks;
    std::vector<TuFailure> failures; ///< TUs with errors, failed or crashed, in database order
    /// Headers extracted in this run whose owner's parse had errors in them, by path (a TU's
    /// counts are its main file's: docs/dependencies.md).
    std::vector<TuFailure> headerErrors;
    std::vector<std::string> parsedTus; ///< main files of the TUs parsed, in database order
    bool cancelled = false;             ///< IndexOptions::cancel stopped the run early
    /// TUs were parsed in worker processes (Isolation::Process in effect).
    bool isolated = false;
    /// Why the run parsed in-process although Isolation::Process was asked for; empty otherwise.
    std::string isolationNote;
    size_t workersStarted = 0; ///< worker processes started (one per thread, plus restarts)
    /// Parses by PchMode (tu_parser.h): how many TUs were parsed against a PCH, how many plain
    /// and why; PCHs built and failed.
    std::array<size_t, kPchModes> pchModes{};
    std::vector<std::string> pchNotes; ///< a PCH that could not be built, and why
    /// "main file: mode: detail" of each TU parsed whole although a PCH was there, sorted.
    std::vector<std::string> pchFallbacks;
};

class Indexer {
public:
    Indexer(Store& store, IndexOptions options);
    ~Indexer();

    /// Brings the store up to date with `db`. Store errors propagate as StoreError; a bad TU
    /// never does.
    IndexSummary run(const CompileDatabase& db);
    /// Thread-safe; cheap enough to poll a few times a second.
    IndexProgress progress() const;
    unsigned threads() const { return threads_; }

    // Open files first. An editor's document jumps the queue: its TU (the one whose main file it
    // is, or the one that owns it as a header in the store) is parsed before any other that has
    // not started, in a session and worker of its own. A fresh session because the others' are
    // shared by TUs taken in rank order, which is what keeps header ownership independent of
    // timing (header_claims.h): a TU taken out of order must neither skip bodies another parsed
    // nor leave its parses and claim refusals behind for a lower rank. So a run with urgent TUs
    // stores exactly what a run without them does.

    /// Moves the TU of `path` to the front, if it is out of date and not started. Thread-safe;
    /// before planning ends (or before run()), remembered until it does.
    void prioritize(const std::string& path);
    /// Thread-safe and cheap (a lookup under a mutex).
    FileState fileState(const std::string& path) const;
    /// Parses urgent TUs as prioritize() queues them, on the calling thread and at its scheduling
    /// priority, until this run's parse phase ends (returns at once if it has). The daemon calls
    /// it from a thread of normal priority, so that the TU an editor waits for does not share
    /// the CPU at SCHED_IDLE with the background parses. Without it, the arena's threads take
    /// urgent TUs between their own.
    void serveUrgent();

    /// Progress counters of one arena slot: written only by the thread in that slot, read by
    /// progress() (relaxed atomics, each slot on its own cache line).
    struct alignas(64) SlotCounters {
        std::atomic<size_t> tusDone{0};
        std::atomic<size_t> files{0};
        std::atomic<size_t> filesWithSkippedBodies{0};
        std::atomic<size_t> symbols{0};
        std::atomic<size_t> references{0};
    };

private:
    struct Run;      // one run's state (indexer.cpp)
    struct PchGroup; // a configuration's PCH in a run (indexer.cpp)
    void findOutOfDate(Run& run) const;
    std::unordered_map<std::string, size_t> keptOwners(const Run& run) const;
    bool upToDate(Run& run, const TuRecord& tu, bool storeMustHoldIt) const;
    void removeVanishedTus(Run& run);
    void parseAll(Run& run);
    struct Parser; // one thread's way to parse: a libclang session, or a worker process
    void parseAndPublish(Run& run, size_t tu, Parser& parser, FileClaimer& claimer,
                         SlotCounters& counters);
    std::optional<IndexedTu> parseIn(Run& run, size_t tu, Parser& parser, FileClaimer& claimer);
    /// parseIn's parse, against `pch` if not empty; `report` says how that went.
    std::optional<IndexedTu> parseWith(Run& run, size_t tu, Parser& parser, FileClaimer& claimer,
                                       const std::string& pch, PchReport& report);
    void chooseIsolation(Run& run);
    /// Takes the next urgent TU no thread has started; false if none.
    bool takeUrgent(Run& run, size_t* tu);
    /// Parses an urgent TU in a fresh session or worker.
    void parseUrgent(Run& run, size_t tu, SlotCounters& counters);
    /// Ends the parse phase: no urgent TU starts after it, and it returns once none is parsing.
    /// Idempotent; run() calls it however it ends.
    void endParsePhase();
    void reconcileOwners(Run& run);
    /// PCHs: groups the run's TUs, takes up the PCHs of earlier runs still valid, and removes
    /// the others (invalid, replaced, or of a configuration no longer in the database).
    void planPchs(Run& run);
    /// Removes the PCHs a group replaced with one it built this run.
    void removeUnusedPchs(Run& run);
    /// The PCH `tu` is to be parsed against (null: none yet).
    std::shared_ptr<const LoadedPch> pchFor(Run& run, size_t tu);
    /// Counts `tu`'s report, and builds its group's PCH once enough plain parses said what
    /// their own files include.
    void notePch(Run& run, size_t tu, const PchReport& report, Parser& parser, TuStatus status);
    /// Builds `group`'s planned PCH on this thread, unless it is not Planned (any more).
    void buildPlanned(Run& run, PchGroup& group, Parser& parser);
    /// Builds `group`'s PCH of `headers` on this thread and makes it the group's if it builds.
    void buildPch(Run& run, PchGroup& group, const std::vector<std::string>& headers,
                  Parser& parser);
    static std::vector<std::string> plannedHeaders(const Run& run, const std::vector<size_t>& tus);
    void cleanUp(Run& run);
    void summarize(Run& run);

    Store& store_;
    IndexOptions options_;
    unsigned threads_;
    std::unique_ptr<SlotCounters[]> slots_; // one per arena slot, and one for serveUrgent()
    std::atomic<size_t> tusToParse_{0};
    std::atomic<bool> planning_{true};

    mutable std::mutex urgentMu_; // guards the members below
    std::condition_variable urgentChanged_;
    Run* live_ = nullptr;                  ///< the run, from the end of planning to parseEnded_
    bool parseEnded_ = false;              ///< endParsePhase() was called
    std::vector<std::string> urgentPaths_; ///< prioritize()d before planning ended
    std::deque<size_t> urgentQueue_;       ///< TUs, in the order prioritize() named them
    int urgentServers_ = 0;                ///< threads in serveUrgent()
};

} // namespace symdex
