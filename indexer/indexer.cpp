#include "indexer/indexer.h"

#include "indexer/file_stamps.h"
#include "indexer/header_claims.h"
#include "indexer/parse_worker.h"
#include "indexer/pch.h"
#include "indexer/shards.h"
#include "store/encoding.h"

#include <tbb/concurrent_vector.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace symdex {

namespace {

double seconds(const timeval& tv) {
    return double(tv.tv_sec) + double(tv.tv_usec) / 1e6;
}

/// User and system CPU seconds of this process plus its reaped children (the parse workers).
std::pair<double, double> cpuSeconds() {
    rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return {seconds(self.ru_utime) + seconds(children.ru_utime),
            seconds(self.ru_stime) + seconds(children.ru_stime)};
}

/// Names a TBB worker thread `indexer-N` (visible in top -H, perf, gdb) when it starts parsing.
/// Not through a tbb::task_scheduler_observer: oneTBB frees an observer's proxy on a worker thread
/// when one is still using it, and LeakSanitizer found it not freed by exit in some runs. The
/// thread that called run() also parses in the arena, and keeps its own name.
void nameWorker(std::thread::id caller, int slot) {
    thread_local int named = -1;
    if (std::this_thread::get_id() == caller || named == slot)
        return;
    named = slot;
    const std::string name = "indexer-" + std::to_string(slot);
    pthread_setname_np(pthread_self(), name.c_str());
}

/// While it lives, the calling thread runs under SCHED_IDLE (IndexOptions::lowPriority); the
/// previous policy comes back after. SCHED_IDLE, not a nice value: a nice value is relative to the
/// rest of the process, which may itself run niced (a query client under `nice -n 19` would be no
/// more urgent than a parse thread at nice 19), while SCHED_IDLE is below every normal thread.
class IdlePriority {
public:
    explicit IdlePriority(bool enable) {
        if (!enable)
            return;
        sched_param param{};
        int policy = 0;
        if (pthread_getschedparam(pthread_self(), &policy, &param) != 0 || policy == SCHED_IDLE)
            return;
        sched_param idle{};
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) == 0)
            previous_ = std::pair(policy, param);
    }
    ~IdlePriority() {
        // Going back needs RLIMIT_NICE room (root has it); otherwise the thread stays idle, which
        // for the threads that index (TBB's workers, the daemon's index runner) changes nothing.
        if (previous_)
            pthread_setschedparam(pthread_self(), previous_->first, &previous_->second);
    }
    IdlePriority(const IdlePriority&) = delete;
    IdlePriority& operator=(const IdlePriority&) = delete;

private:
    std::optional<std::pair<int, sched_param>> previous_;
};

/// What the store held when the run started, read from one snapshot.
struct StoredState {
    std::unordered_map<uint32_t, FileRecord> files;
    std::unordered_map<std::string, uint64_t> hashes; ///< path -> content hash
    std::unordered_map<std::string, TuRecord> tus;    ///< main file -> record
    std::unordered_map<std::string, uint32_t> ids;    ///< path -> file id
    std::unordered_map<uint32_t, std::string> absent; ///< TuRecord::absentIds -> path

    explicit StoredState(const Store& store) {
        const StoreSnapshot snapshot = store.snapshot();
        snapshot.forEachAbsentPath(
            [&](uint32_t id, const std::string& path) { absent.emplace(id, path); });
        snapshot.forEachFile([&](uint32_t id, const FileRecord& record) {
            hashes.emplace(record.path, record.contentHash);
            ids.emplace(record.path, id);
            files.emplace(id, record);
        });
        snapshot.forEachTu(
            [&](const std::string& path, const TuRecord& record) { tus.emplace(path, record); });
    }
};

} // namespace

Indexer::Indexer(Store& store, IndexOptions options)
    : store_(store), options_(options),
      threads_(options.threads ? options.threads
                               : std::max(1u, std::thread::hardware_concurrency())),
      slots_(new SlotCounters[threads_ + 1]) {}

Indexer::~Indexer() = default;

IndexProgress Indexer::progress() const {
    IndexProgress p;
    p.planning = planning_.load(std::memory_order_relaxed);
    p.tusToParse = tusToParse_.load(std::memory_order_relaxed);
    for (unsigned i = 0; i <= threads_; ++i) {
        p.tusDone += slots_[i].tusDone.load(std::memory_order_relaxed);
        p.symbols += slots_[i].symbols.load(std::memory_order_relaxed);
        p.references += slots_[i].references.load(std::memory_order_relaxed);
    }
    return p;
}

/// A configuration's PCH in a run (indexer/pch.h): its headers chosen from the text of the TUs,
/// or, where that chose none or did not build, from the first plain parses.
struct Indexer::PchGroup {
    std::mutex mu;
    /// Planned: its headers are chosen (`planned`) and the first thread free builds it;
    /// Collecting: plain parses choose them.
    enum State { Planned, Collecting, Building, Ready, Off } state = Collecting; // Requires mu
    std::vector<std::string> planned; ///< Planned: the headers
    std::string stem;                 ///< pchDirectory/KEY: its PCHs are STEM-HEADERS.pch
    size_t representative;            ///< a TU of the group: its command is the configuration
    size_t samples = 0;               ///< plain parses counted
    std::vector<std::string> order;   ///< spellings, first seen first
    std::unordered_map<std::string, size_t> counts; ///< spelling -> samples including it
    std::shared_ptr<const LoadedPch> loaded;        ///< Ready: the PCH in use
    size_t builds = 0;                              ///< this run
    size_t attempts = 0;                            ///< parses against the current PCH
    size_t incomplete = 0; ///< of those, fallbacks for including less than it
};

/// The state of one run, shared by its phases.
struct Indexer::Run {
    const CompileDatabase& db;
    const size_t n; ///< TUs in the database
    tbb::task_arena arena;
    const std::thread::id caller = std::this_thread::get_id();
    FileStamps stamps;
    const StoredState before;
    IndexSummary summary;

    /// StoredState::absent id -> 1 still absent, 0 exists now, -1 not looked at yet (phase 1):
    /// a path is checked once however many TUs looked for it, without hashing it each time.
    std::unordered_map<uint32_t, std::atomic<int8_t>> absentNow;
    std::vector<char> dirty;                    ///< [tu]: out of date (phase 1)
    tbb::concurrent_vector<FileRecord> touched; ///< unchanged files with new stamps (phase 1)
    /// [tu]: its global rank, the order of a clean run: main file by size, largest first (long
    /// TUs start first), then database order. Decides header ownership (header_claims.h).
    std::vector<size_t> rankOf;
    std::unordered_map<std::string, size_t> tuOf; ///< main file -> tu
    std::vector<size_t> order;                    ///< dirty TUs in rank order
    uint64_t generation = 0;
    ParseOptions parseOptions;
    bool isolated = false;       ///< parses run in worker processes
    WorkerOptions workerOptions; ///< when isolated
    // Per TU, each written only by the thread parsing it:
    std::vector<std::vector<std::string>> included;
    std::vector<std::vector<std::string>> extracted; ///< the files its publication carried
    std::vector<std::vector<std::string>> absent;    ///< IndexedTu::absentPaths
    std::vector<TuRecord> results;
    std::vector<char> parsed;
    std::vector<std::vector<TuFailure>> headerErrors; ///< headers it extracted with errors
    /// [tu]: kWaiting, then kStarted by the one thread that parses it, then kDone.
    std::unique_ptr<std::atomic<uint8_t>[]> stage;
    static constexpr uint8_t kWaiting = 0, kStarted = 1, kDone = 2;
    FileClaimer* claims = nullptr; ///< the parse phase's claim table
    std::atomic<size_t> workersStarted{0};

    std::deque<PchGroup> pchGroups;
    std::vector<PchGroup*> pchGroupOf; ///< [tu], null: no PCH for it
    std::array<std::atomic<size_t>, kPchModes> pchModes{};
    std::mutex pchNotesMu;
    std::vector<std::string> pchNotes;     // Requires pchNotesMu
    std::vector<std::string> pchFallbacks; // Requires pchNotesMu

    Run(const CompileDatabase& database, unsigned threads, const Store& store)
        : db(database), n(database.commands.size()), arena(static_cast<int>(threads)),
          before(store), dirty(n, 0), rankOf(n, 0), included(n), extracted(n), absent(n),
          results(n), parsed(n, 0), headerErrors(n), stage(new std::atomic<uint8_t>[n]) {
        for (size_t i = 0; i < n; ++i)
            stage[i] = kWaiting;
    }

    /// True for the one caller that moves `tu` from waiting to started.
    bool start(size_t tu) {
        uint8_t expected = kWaiting;
        return stage[tu].compare_exchange_strong(expected, kStarted);
    }

    /// The TU a document belongs to: the one whose main file it is, else the store's owner of it.
    std::optional<size_t> tuOfDocument(const std::string& path) const {
        if (auto it = tuOf.find(path); it != tuOf.end())
            return it->second;
        return storedOwner(path);
    }

    /// The TU of the store's owner of `path`, if that owner is in the database; nullopt otherwise.
    std::optional<size_t> storedOwner(const std::string& path) const {
        auto id = before.ids.find(path);
        if (id == before.ids.end())
            return std::nullopt;
        auto owner = before.files.find(before.files.at(id->second).ownerFileId);
        if (owner == before.files.end())
            return std::nullopt;
        auto tu = tuOf.find(owner->second.path);
        return tu == tuOf.end() ? std::nullopt : std::optional(tu->second);
    }
};

namespace {

/// Grants each re-parsed TU exactly the headers it was assigned (Indexer::extractOrphans).
class GrantedClaims : public FileClaimer {
public:
    GrantedClaims(FileStamps& stamps, size_t rank, const std::vector<std::string>& paths)
        : stamps_(stamps), owner_(std::make_shared<std::atomic<size_t>>(rank)),
          paths_(paths.begin(), paths.end()) {}
    std::optional<FileClaim> claim(const std::string& path, size_t) override {
        if (!paths_.contains(path))
            return std::nullopt;
        std::optional<FileStamp> stamp = stamps_.hashed(path);
        return stamp ? std::optional(FileClaim{*stamp, owner_}) : std::nullopt;
    }
    void release(size_t) override {}

private:
    FileStamps& stamps_;
    std::shared_ptr<std::atomic<size_t>> owner_;
    std::unordered_set<std::string> paths_;
};

} // namespace

/// One thread's way to parse: a worker process, or a libclang session in this process.
struct Indexer::Parser {
    ParseSession* session = nullptr;     ///< in-process
    ParseSession* pchSession = nullptr;  ///< in-process, parses against a PCH
    std::unique_ptr<ParseWorker> worker; ///< isolated
};

namespace {

/// The record of a TU whose worker died twice or timed out: crashed, with the reason, and the
/// files it had reached with their current hashes, so that it is parsed again only once one of
/// them (or its command) changes.
IndexedTu crashedTu(const CompileCommand& command, const WorkerOutcome& outcome, FileStamps& stamps,
                    std::string reason, uint32_t millis) {
    IndexedTu tu;
    tu.mainFile = command.file;
    tu.record.commandHash = command.hash();
    tu.record.status = TuStatus::Crashed;
    tu.record.firstError = std::move(reason);
    tu.record.parseMillis = millis;
    tu.absentPaths = outcome.absent;
    std::unordered_set<std::string> seen{command.file};
    tu.includedFiles.push_back(command.file);
    for (const std::string& path : outcome.reached)
        if (seen.insert(path).second)
            tu.includedFiles.push_back(path);
    for (const std::string& path : tu.includedFiles) {
        std::optional<FileStamp> stamp = stamps.hashed(path);
        tu.includedHashes.push_back(stamp ? stamp->contentHash : 0);
    }
    return tu;
}

} // namespace

IndexSummary Indexer::run(const CompileDatabase& db) {
    const auto wallStart = std::chrono::steady_clock::now();
    // This process and its reaped children: the parse workers' CPU time is the run's too.
    const std::pair<double, double> usageStart = cpuSeconds();
    const CommitStats commitsStart = store_.commitStats();
    const LockTelemetry locksStart = LockTelemetry::snapshot();
    // A merged store indexed here no longer holds what the shards' merge wrote: the next merge
    // into it takes every shard again (indexer/shards.h).
    if (auto merged = store_.snapshot().metaValue(kMergeMetaKey); merged && !merged->empty()) {
        StoreEdit edit;
        edit.setMeta.emplace_back(kMergeMetaKey, std::string());
        store_.apply(std::move(edit));
    }
    for (unsigned i = 0; i <= threads_; ++i) {
        slots_[i].tusDone = 0;
        slots_[i].files = 0;
        slots_[i].filesWithSkippedBodies = 0;
        slots_[i].symbols = 0;
        slots_[i].references = 0;
    }
    planning_ = true;

    {
        std::lock_guard lock(urgentMu_);
        parseEnded_ = false;
    }
    std::unique_ptr<Run> state;
    try {
        state = std::make_unique<Run>(db, threads_, store_);
    } catch (...) {
        endParsePhase(); // serveUrgent() must not wait for a run that never comes
        throw;
    }
    Run& run = *state;
    // Declared after the run, so destroyed before it: no urgent parse outlives it.
    struct ParsePhaseGuard {
        Indexer& indexer;
        ~ParsePhaseGuard() { indexer.endParsePhase(); }
    } parsePhaseGuard{*this};
    run.summary.tusTotal = run.n;
    run.summary.threads = threads_;
    findOutOfDate(run);
    removeVanishedTus(run);
    parseAll(run);
    cleanUp(run);
    summarize(run);
    removeUnusedPchs(run);

    IndexSummary& summary = run.summary;
    const std::pair<double, double> usageEnd = cpuSeconds();
    summary.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    summary.userSeconds = usageEnd.first - usageStart.first;
    summary.sysSeconds = usageEnd.second - usageStart.second;
    const CommitStats commitsEnd = store_.commitStats();
    summary.commits.commits = commitsEnd.commits - commitsStart.commits;
    summary.commits.tusCommitted = commitsEnd.tusCommitted - commitsStart.tusCommitted;
    summary.commits.mapGrowths = commitsEnd.mapGrowths - commitsStart.mapGrowths;
    summary.commits.commitSeconds = commitsEnd.commitSeconds - commitsStart.commitSeconds;
    summary.locks = LockTelemetry::snapshot() - locksStart;
    return summary;
}

bool Indexer::upToDate(Run& run, const TuRecord& tu, bool storeMustHoldIt) const {
    // Nothing the parse looked for in vain may exist now: a header that appeared (generated, or
    // shadowing the one found, earlier in the include path) changes what the TU includes.
    for (uint32_t id : tu.absentIds) {
        auto state = run.absentNow.find(id);
        if (state == run.absentNow.end())
            return false;
        int8_t now = state->second.load(std::memory_order_relaxed);
        if (now < 0) {
            now = run.stamps.stillAbsent(run.before.absent.at(id)) ? 1 : 0;
            state->second.store(now, std::memory_order_relaxed);
        }
        if (now == 0)
            return false;
    }
    // Every name the parse reached a file by through a symlink must still lead to that file.
    for (const TuRecord::Alias& alias : tu.aliases) {
        auto name = run.before.absent.find(alias.nameId);
        auto file = alias.fileIndex < tu.fileIds.size()
                        ? run.before.files.find(tu.fileIds[alias.fileIndex])
                        : run.before.files.end();
        if (name == run.before.absent.end() || file == run.before.files.end() ||
            run.stamps.resolved(name->second) != file->second.path)
            return false;
    }
    // Every file must hold what this TU read when it was last parsed (TuRecord::filesDigest), and
    // the store must hold that content too: a header whose owner was interrupted is stale in the
    // store even when this TU saw its current version.
    if (tu.filesDigest == 0)
        return false; // a file's content was unknown
    std::vector<const FileRecord*> records;
    records.reserve(tu.fileIds.size());
    std::vector<uint64_t> hashes; // what the store holds of each file
    hashes.reserve(tu.fileIds.size());
    for (uint32_t id : tu.fileIds) {
        auto file = run.before.files.find(id);
        if (file == run.before.files.end())
            return false;
        records.push_back(&file->second);
        hashes.push_back(file->second.contentHash);
    }
    if (storeMustHoldIt && filesDigest(hashes) != tu.filesDigest)
        return false;
    // Then what each file holds now: the store's hash while its stamp is unchanged, else hashed.
    for (size_t k = 0; k < records.size(); ++k) {
        const FileRecord& record = *records[k];
        std::optional<FileStamp> now = run.stamps.stat(record.path);
        if (!now)
            return false;
        FileStamp recorded;
        recorded.mtimeNs = record.mtimeNs;
        recorded.size = record.size;
        recorded.ctimeNs = record.ctimeNs;
        recorded.inode = record.inode;
        if (now->sameStat(recorded))
            continue;
        std::optional<FileStamp> hashed = run.stamps.hashed(record.path);
        if (!hashed)
            return false;
        hashes[k] = hashed->contentHash;
        if (record.contentHash == hashed->contentHash) { // touched, not changed
            FileRecord stamp = record;
            stamp.mtimeNs = hashed->mtimeNs;
            stamp.size = hashed->size;
            stamp.ctimeNs = hashed->ctimeNs;
            stamp.inode = hashed->inode;
            run.touched.push_back(stamp);
        }
    }
    return filesDigest(hashes) == tu.filesDigest;
}

void Indexer::findOutOfDate(Run& run) const {
    // A changed command, or any file the TU read changed (mtime and size first; the content hash
    // decides), or a path it looked for in vain exists.
    for (const auto& [id, path] : run.before.absent)
        run.absentNow[id] = -1;
    run.arena.execute([&] {
        tbb::parallel_for(size_t(0), run.n, [&](size_t i) {
            const CompileCommand& cmd = run.db.commands[i];
            auto stored = run.before.tus.find(cmd.file);
            if (options_.force || stored == run.before.tus.end() ||
                stored->second.status == TuStatus::Failed ||
                stored->second.commandHash != cmd.hash()) {
                run.dirty[i] = 1;
                return;
            }
            // A crashed TU is not parsed again until something it read changes: no crash loop.
            // It extracted nothing, so the store need not hold what it read.
            const bool crashed = stored->second.status == TuStatus::Crashed;
            if (!upToDate(run, stored->second, /*storeMustHoldIt=*/!crashed))
                run.dirty[i] = 1;
        });
    });

    // Ranks: largest main file first, so that the run does not end waiting on one big TU that
    // started last. Only what is on disk now decides, never an earlier run (not the parse times
    // it recorded): header ownership follows rank, and must be what a clean run would choose.
    std::vector<uint64_t> size(run.n, 0);
    std::vector<size_t> byRank(run.n);
    for (size_t i = 0; i < run.n; ++i) {
        std::optional<FileStamp> st = run.stamps.stat(run.db.commands[i].file);
        size[i] = st ? st->size : 0;
        byRank[i] = i;
        run.tuOf.emplace(run.db.commands[i].file, i);
    }
    const std::vector<uint8_t> tier = pchTiers(run.db);
    std::stable_sort(byRank.begin(), byRank.end(), [&](size_t a, size_t b) {
        return tier[a] != tier[b] ? tier[a] < tier[b] : size[a] > size[b];
    });
    for (size_t r = 0; r < run.n; ++r)
        run.rankOf[byRank[r]] = r;
    for (size_t i : byRank)
        if (run.dirty[i])
            run.order.push_back(i);
    run.summary.tusUpToDate = run.n - run.order.size();
}

std::unordered_map<std::string, size_t> Indexer::keptOwners(const Run& run) const {
    // What the store holds for a file stands only while the TU that extracted it is up to date:
    // a TU parsed again (its flags, its main file or a header before this one may have changed)
    // extracts again what it owns, and a file whose owner left the database has none.
    std::unordered_map<std::string, size_t> kept;
    for (const auto& [path, id] : run.before.ids) {
        std::optional<size_t> owner = run.storedOwner(path);
        if (!owner || run.dirty[*owner])
            continue;
        auto stored = run.before.tus.find(run.db.commands[*owner].file);
        if (stored != run.before.tus.end() && parsedWell(stored->second))
            kept.emplace(path, run.rankOf[*owner]);
    }
    for (size_t i = 0; i < run.n; ++i)
        if (!run.dirty[i])
            kept[run.db.commands[i].file] = 0; // its own TU's, and that is up to date
    return kept;
}

void Indexer::removeVanishedTus(Run& run) {
    std::unordered_set<std::string> inDb;
    for (const CompileCommand& cmd : run.db.commands)
        inDb.insert(cmd.file);
    StoreEdit removals;
    for (const auto& [path, record] : run.before.tus)
        if (!inDb.contains(path))
            removals.removeTus.push_back(path);
    run.summary.tusRemoved = removals.removeTus.size();
    if (!removals.removeTus.empty())
        store_.apply(std::move(removals));
}

void Indexer::parseAll(Run& run) {
    // Each TU's main file is its own; headers go to the lowest-ranked TU that reaches them.
    // Ranks are places in `order`, the order TUs start in (see header_claims.h).
    const std::unordered_map<std::string, size_t> kept = keptOwners(run);
    HeaderClaims claims(run.stamps, run.before.hashes, kept, run.n, options_.force);
    for (size_t i : run.order)
        claims.preclaim(run.db.commands[i].file, run.rankOf[i]);
    static std::atomic<uint64_t> runs{0};
    run.generation = (uint64_t(getpid()) << 32) | ++runs;
    tusToParse_ = run.order.size();
    run.claims = &claims;

    planPchs(run);
    run.parseOptions.indexMacros = options_.indexMacros;
    if (store_.lockMode() == LockMode::Global)
        run.parseOptions.extractionLock = &store_.globalLock();
    chooseIsolation(run);
    // Planning is over: from here on, documents are looked up in this run, and urgent TUs start.
    {
        std::lock_guard lock(urgentMu_);
        live_ = &run;
        for (const std::string& path : urgentPaths_)
            if (std::optional<size_t> tu = run.tuOfDocument(path); tu && run.dirty[*tu])
                urgentQueue_.push_back(*tu);
        urgentPaths_.clear();
        planning_ = false;
    }
    urgentChanged_.notify_all();
    if (options_.progressed)
        options_.progressed();
    std::vector<std::unique_ptr<ParseSession>> sessions, pchSessions;
    if (!run.order.empty() && !run.isolated) {
        const bool skip = options_.session != SessionMode::None;
        const size_t count = options_.session == SessionMode::PerThread ? threads_ : 1;
        for (size_t i = 0; i < count; ++i) {
            sessions.push_back(std::make_unique<ParseSession>(skip));
            if (!run.pchGroups.empty())
                pchSessions.push_back(std::make_unique<ParseSession>(skip, true));
        }
    }
    const size_t limit = options_.stopAfterTusForTest ? options_.stopAfterTusForTest : SIZE_MAX;
    auto cancelled = [&] {
        return options_.cancel && options_.cancel->load(std::memory_order_relaxed);
    };
    std::atomic<size_t> next{0};
    // The PCHs whose headers the text chose are built before any TU, the one its group needs
    // first first (its lowest rank), each by the next thread free: with more threads than such
    // PCHs the others start on the TUs meanwhile, and a TU of a group that starts before its PCH
    // is ready is parsed plain (the TUs of configurations without a PCH rank first, so most
    // groups' TUs start after it). The build's libclang session is its own: no TU's body
    // skipping depends on it (header_claims.h). An urgent TU may have started a build already
    // (parseIn): the state is read under the group's lock.
    std::vector<PchGroup*> planned;
    for (PchGroup& group : run.pchGroups) {
        std::lock_guard lock(group.mu);
        if (group.state == PchGroup::Planned)
            planned.push_back(&group);
    }
    std::sort(planned.begin(), planned.end(), [&](const PchGroup* a, const PchGroup* b) {
        return run.rankOf[a->representative] < run.rankOf[b->representative];
    });
    std::atomic<size_t> nextBuild{0};
    const auto parseStart = std::chrono::steady_clock::now();
    if (!run.order.empty())
        run.arena.execute([&] {
            tbb::parallel_for(
                size_t(0), size_t(threads_),
                [&](size_t) {
                    const int slot = tbb::this_task_arena::current_thread_index();
                    nameWorker(run.caller, slot);
                    const IdlePriority priority(options_.lowPriority);
                    Parser parser;
                    if (run.isolated)
                        parser.worker = std::make_unique<ParseWorker>(run.workerOptions);
                    else {
                        const size_t k = sessions.size() == 1 ? 0 : size_t(slot);
                        parser.session = sessions[k].get();
                        parser.pchSession = pchSessions.empty() ? nullptr : pchSessions[k].get();
                    }
                    // One ticket per TU, taken in rank order; an urgent TU first, if any, then
                    // the planned PCHs' builds.
                    for (size_t k, tu, b; !cancelled();) {
                        if (takeUrgent(run, &tu)) {
                            parseUrgent(run, tu, slots_[slot]);
                            continue;
                        }
                        if (nextBuild.load(std::memory_order_relaxed) < planned.size() &&
                            (b = nextBuild.fetch_add(1)) < planned.size()) {
                            buildPlanned(run, *planned[b], parser);
                            continue;
                        }
                        k = next.fetch_add(1, std::memory_order_relaxed);
                        if (k >= std::min(run.order.size(), limit))
                            break;
                        if (!run.start(tu = run.order[k]))
                            continue; // parsed as an urgent TU
                        parseAndPublish(run, tu, parser, claims, slots_[slot]);
                        run.stage[tu] = Run::kDone;
                        slots_[slot].tusDone.fetch_add(1, std::memory_order_relaxed);
                        if (options_.progressed)
                            options_.progressed();
                    }
                    if (parser.worker)
                        run.workersStarted += parser.worker->spawned();
                },
                tbb::static_partitioner());
        });
    endParsePhase();
    if (!cancelled() && run.order.size() <= limit)
        reconcileOwners(run);
    run.summary.parseWallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - parseStart).count();
    run.summary.claimTakeovers = claims.takeovers();
    run.summary.workersStarted += run.workersStarted.load();
}

void Indexer::prioritize(const std::string& path) {
    {
        std::lock_guard lock(urgentMu_);
        if (parseEnded_)
            return;
        if (!live_) {
            urgentPaths_.push_back(path);
            return;
        }
        std::optional<size_t> tu = live_->tuOfDocument(path);
        if (!tu || !live_->dirty[*tu] || live_->stage[*tu] != Run::kWaiting)
            return;
        urgentQueue_.push_back(*tu);
    }
    urgentChanged_.notify_all();
}

FileState Indexer::fileState(const std::string& path) const {
    std::lock_guard lock(urgentMu_);
    if (parseEnded_)
        return FileState::Ready;
    if (!live_)
        return FileState::Planning;
    std::optional<size_t> tu = live_->tuOfDocument(path);
    if (!tu || !live_->dirty[*tu] || live_->stage[*tu] == Run::kDone)
        return FileState::Ready;
    return FileState::Queued;
}

bool Indexer::takeUrgent(Run& run, size_t* tu) {
    std::lock_guard lock(urgentMu_);
    while (!urgentQueue_.empty()) {
        *tu = urgentQueue_.front();
        urgentQueue_.pop_front();
        if (run.start(*tu))
            return true;
    }
    return false;
}

void Indexer::parseUrgent(Run& run, size_t tu, SlotCounters& counters) {
    // A session and worker of its own, dropped after it (see prioritize()).
    std::optional<ParseSession> session;
    Parser parser;
    if (run.isolated)
        parser.worker = std::make_unique<ParseWorker>(run.workerOptions);
    else
        parser.session = &session.emplace(options_.session != SessionMode::None);
    parseAndPublish(run, tu, parser, *run.claims, counters);
    run.stage[tu] = Run::kDone;
    counters.tusDone.fetch_add(1, std::memory_order_relaxed);
    if (parser.worker)
        run.workersStarted += parser.worker->spawned();
    if (options_.progressed)
        options_.progressed();
}

void Indexer::serveUrgent() {
    std::unique_lock lock(urgentMu_);
    urgentChanged_.wait(lock, [&] { return live_ || parseEnded_; });
    if (parseEnded_)
        return;
    Run& run = *live_;
    ++urgentServers_;
    for (;;) {
        urgentChanged_.wait(lock, [&] { return parseEnded_ || !urgentQueue_.empty(); });
        if (parseEnded_)
            break;
        const size_t tu = urgentQueue_.front();
        urgentQueue_.pop_front();
        if (!run.start(tu))
            continue;
        lock.unlock();
        parseUrgent(run, tu, slots_[threads_]);
        lock.lock();
    }
    --urgentServers_;
    urgentChanged_.notify_all();
}

void Indexer::endParsePhase() {
    {
        std::unique_lock lock(urgentMu_);
        if (parseEnded_)
            return;
        parseEnded_ = true;
        urgentChanged_.notify_all();
        urgentChanged_.wait(lock, [&] { return urgentServers_ == 0; });
        live_ = nullptr;
        urgentQueue_.clear();
        urgentPaths_.clear();
        planning_ = false;
    }
    if (options_.progressed)
        options_.progressed();
}

void Indexer::chooseIsolation(Run& run) {
    if (options_.isolation != Isolation::Process)
        return;
    std::string& note = run.summary.isolationNote;
    if (options_.session == SessionMode::Shared)
        note = "a shared libclang session needs one process";
    else if (store_.lockMode() == LockMode::Global)
        note = "the global lock mode extracts under a lock of this process";
    else if ((run.workerOptions.path =
                  options_.workerPath.empty() ? defaultWorkerPath() : options_.workerPath)
                 .empty() ||
             access(run.workerOptions.path.c_str(), X_OK) != 0)
        note = "no symdex-worker executable" + (run.workerOptions.path.empty()
                                                    ? std::string(" beside this program")
                                                    : " at " + run.workerOptions.path);
    if (!note.empty()) {
        note = "TUs parsed in this process: " + note;
        return;
    }
    run.isolated = true;
    run.summary.isolated = true;
    run.workerOptions.timeout = options_.tuTimeout;
    run.workerOptions.memoryLimitMb = options_.workerMemoryLimitMb;
    run.workerOptions.skipParsedBodies = options_.session != SessionMode::None;
    run.workerOptions.indexMacros = options_.indexMacros;
    run.workerOptions.cancel = options_.cancel;
}

namespace {

/// A header this many TUs of a configuration include goes into its PCH, even if fewer than half
/// do (RocksDB: 161 headers instead of 35, cold index 42 s instead of 78, docs/pch.md).
constexpr size_t kPchSharedBy = 64;
/// Plain parses whose includes choose a group's first PCH: the headers half of them include.
constexpr size_t kPchSamples = 3;

std::string hexKey(uint64_t key) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(key));
    return text;
}

} // namespace

void Indexer::planPchs(Run& run) {
    run.pchGroupOf.assign(run.n, nullptr);
    if (options_.pch != PchPolicy::Auto || options_.pchDirectory.empty())
        return;
    std::error_code error;
    std::filesystem::create_directories(options_.pchDirectory, error);
    if (error)
        return;
    // The configurations of the database, all of them (an up-to-date TU's PCH stays for the
    // day it is out of date again), and those of the TUs this run parses.
    std::unordered_set<std::string> configurations;
    std::map<uint64_t, std::vector<size_t>> byKey;
    for (const CompileCommand& command : run.db.commands)
        if (!pchHeaderLanguage(command).empty())
            configurations.insert(hexKey(pchGroupKey(command)));
    for (size_t i : run.order)
        if (!pchHeaderLanguage(run.db.commands[i]).empty())
            byKey[pchGroupKey(run.db.commands[i])].push_back(i);
    // What earlier runs left: PCHs (KEY-HEADERS.pch, with .h and .manifest) by configuration,
    // newest first; anything else is removed.
    std::map<std::string, std::vector<std::pair<std::filesystem::file_time_type, std::string>>>
        existing;
    std::vector<std::string> remove;
    for (const auto& entry : std::filesystem::directory_iterator(options_.pchDirectory, error)) {
        const std::string path = entry.path().string();
        std::string name = entry.path().filename().string();
        for (const char* suffix : {".manifest", ".h"})
            if (name.ends_with(std::string(".pch") + suffix))
                name.resize(name.size() - std::strlen(suffix));
        const bool ours = name.size() == 29 && name.ends_with(".pch") && name[16] == '-';
        if (!ours || !configurations.contains(name.substr(0, 16)))
            remove.push_back(path); // a configuration that left the database, or a leftover
        else if (path.ends_with(".pch"))
            existing[name.substr(0, 16)].emplace_back(entry.last_write_time(error), path);
    }
    for (auto& [key, files] : existing)
        std::sort(files.rbegin(), files.rend());
    // The newest PCH of a configuration serves while every file it holds is as it was built and
    // what it found absent is still absent; the others, and an invalid one, go.
    std::unordered_map<std::string, std::shared_ptr<const LoadedPch>> valid;
    for (const auto& [key, files] : existing) {
        for (size_t k = 1; k < files.size(); ++k)
            remove.push_back(files[k].second);
        std::shared_ptr<const LoadedPch> loaded = loadPch(files.front().second);
        bool ok = loaded != nullptr;
        for (size_t f = 0; ok && f < loaded->manifest.files.size(); ++f) {
            const PchManifest::File& file = loaded->manifest.files[f];
            std::optional<FileStamp> stamp = run.stamps.hashed(file.path);
            ok = stamp && stamp->contentHash == file.hash;
        }
        for (size_t a = 0; ok && a < loaded->manifest.absentPaths.size(); ++a)
            ok = run.stamps.stillAbsent(loaded->manifest.absentPaths[a]);
        if (ok)
            valid.emplace(key, std::move(loaded));
        else
            remove.push_back(files.front().second);
    }
    for (const std::string& path : remove) {
        std::filesystem::remove(path, error);
        if (path.ends_with(".pch"))
            for (const char* suffix : {".manifest", ".h"})
                std::filesystem::remove(path + suffix, error);
    }
    for (const auto& [key, tus] : byKey) {
        // Too few TUs to build a PCH for; but one still valid serves a single edited TU.
        auto found = valid.find(hexKey(key));
        if (tus.size() < kMinPchGroup && found == valid.end())
            continue;
        PchGroup& group = run.pchGroups.emplace_back();
        group.stem = options_.pchDirectory + "/" + hexKey(key);
        group.representative = tus.front();
        for (size_t i : tus)
            run.pchGroupOf[i] = &group;
        if (found != valid.end()) {
            group.loaded = found->second;
            group.state = PchGroup::Ready;
        } else if (tus.size() < kMinPchGroup) {
            group.state = PchGroup::Off;
        } else {
            group.planned = plannedHeaders(run, tus);
            group.state = group.planned.empty() ? PchGroup::Collecting : PchGroup::Planned;
        }
    }
}

std::vector<std::string> Indexer::plannedHeaders(const Run& run, const std::vector<size_t>& tus) {
    // The headers at least half of the TUs include (IncludeScanner: from the text, outside #if),
    // or kPchSharedBy of them in a large configuration, where parsing such a header once in the
    // PCH saves more than loading it costs the others; in the order first seen.
    IncludeScanner scanner(run.db.commands[tus.front()]);
    std::vector<std::string> order;
    std::unordered_map<std::string, size_t> counts;
    for (size_t tu : tus)
        for (std::string& header : scanner.headersOf(run.db.commands[tu].file))
            if (counts[header]++ == 0)
                order.push_back(std::move(header));
    std::vector<std::string> headers;
    for (std::string& header : order)
        if (2 * counts[header] >= tus.size() || counts[header] >= kPchSharedBy)
            headers.push_back(std::move(header));
    return headers;
}

void Indexer::removeUnusedPchs(Run& run) {
    // A group that built a PCH this run keeps only that one (a rebuilt PCH replaces the first).
    std::error_code error;
    for (PchGroup& group : run.pchGroups) {
        if (!group.builds || !group.loaded)
            continue;
        const std::string prefix = std::filesystem::path(group.stem).filename().string() + "-";
        for (const auto& entry :
             std::filesystem::directory_iterator(options_.pchDirectory, error)) {
            const std::string name = entry.path().filename().string();
            if (name.starts_with(prefix) && !entry.path().string().starts_with(group.loaded->path))
                std::filesystem::remove(entry.path(), error);
        }
    }
}

std::shared_ptr<const LoadedPch> Indexer::pchFor(Run& run, size_t tu) {
    PchGroup* group = run.pchGroupOf.empty() ? nullptr : run.pchGroupOf[tu];
    if (!group)
        return nullptr;
    std::lock_guard lock(group->mu);
    return group->state == PchGroup::Ready ? group->loaded : nullptr;
}

void Indexer::notePch(Run& run, size_t tu, const PchReport& report, Parser& parser,
                      TuStatus status) {
    run.pchModes[size_t(report.mode)].fetch_add(1, std::memory_order_relaxed);
    if (report.mode >= PchMode::Owner && report.mode <= PchMode::Unusable) {
        std::lock_guard lock(run.pchNotesMu);
        run.pchFallbacks.push_back(run.db.commands[tu].file + ": " +
                                   std::string(pchModeName(report.mode)) + ": " + report.detail);
    }
    PchGroup* group = run.pchGroupOf.empty() ? nullptr : run.pchGroupOf[tu];
    if (!group)
        return;
    std::vector<std::string> headers;
    {
        std::lock_guard lock(group->mu);
        if (report.mode != PchMode::None && report.mode != PchMode::Unusable) {
            ++group->attempts;
            group->incomplete += report.mode == PchMode::Incomplete;
        }
        // Every plain parse says what its own files include.
        if (report.mode != PchMode::Used && status == TuStatus::Ok) {
            ++group->samples;
            for (const std::string& header : report.systemIncludes)
                if (group->counts[header]++ == 0)
                    group->order.push_back(header);
        }
        // A PCH holds what nearly every TU includes: chosen from the first plain parses (the
        // largest TUs: they include the most), then once more if a third of the TUs that tried
        // it included less.
        const bool first = group->state == PchGroup::Collecting && group->samples >= kPchSamples;
        const bool again = group->state == PchGroup::Ready && group->builds == 1 &&
                           group->attempts >= 2 * kPchSamples &&
                           3 * group->incomplete > group->attempts;
        if (!first && !again)
            return;
        const double share = first ? 0.5 : 0.67;
        for (const std::string& header : group->order)
            if (double(group->counts[header]) >= share * double(group->samples))
                headers.push_back(header);
        if (headers.empty()) {
            if (first)
                group->state = PchGroup::Off;
            return;
        }
        if (group->loaded && group->loaded->manifest.headers == headers) {
            group->builds = 2; // the same again: keep it
            return;
        }
        group->state = PchGroup::Building;
        ++group->builds;
    }
    buildPch(run, *group, headers, parser);
}

void Indexer::buildPlanned(Run& run, PchGroup& group, Parser& parser) {
    std::vector<std::string> headers;
    {
        std::lock_guard lock(group.mu);
        if (group.state != PchGroup::Planned)
            return;
        group.state = PchGroup::Building;
        ++group.builds;
        headers = group.planned;
    }
    buildPch(run, group, headers, parser);
}

void Indexer::buildPch(Run& run, PchGroup& group, const std::vector<std::string>& headers,
                       Parser& parser) {
    // This thread builds it; the others parse plain meanwhile.
    const CompileCommand& command = run.db.commands[group.representative];
    std::string joined;
    for (const std::string& header : headers)
        joined += header + "\n";
    const std::string path = group.stem + "-" + hexKey(hash64(joined)).substr(0, 8) + ".pch";
    PchReport built;
    std::vector<std::string> absent;
    if (parser.worker) {
        WorkerOutcome outcome = parser.worker->parse(command, 0, *run.claims, {path, headers});
        built = std::move(outcome.pch);
        if (outcome.kind != WorkerOutcome::Parsed && built.mode != PchMode::Built) {
            built.mode = PchMode::BuildFailed;
            built.detail = outcome.reason;
        }
        absent = std::move(outcome.absent);
    } else {
        built = buildPrecompiledHeader(command, headers, path, options_.indexMacros);
    }
    std::optional<PchManifest> manifest;
    if (built.mode == PchMode::Built)
        manifest = decodePchManifest(built.manifest);
    if (manifest) {
        manifest->absentPaths.insert(manifest->absentPaths.end(), absent.begin(), absent.end());
        std::sort(manifest->absentPaths.begin(), manifest->absentPaths.end());
        manifest->absentPaths.erase(
            std::unique(manifest->absentPaths.begin(), manifest->absentPaths.end()),
            manifest->absentPaths.end());
        const std::string bytes = encodePchManifest(*manifest);
        const std::string temporary = path + ".manifest.tmp";
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        out.close();
        if (!out || std::rename(temporary.c_str(), (path + ".manifest").c_str()) != 0) {
            built.mode = PchMode::BuildFailed;
            built.detail = "cannot write " + path + ".manifest";
        }
    } else if (built.mode == PchMode::Built) {
        built.mode = PchMode::BuildFailed;
        built.detail = "the build's manifest is malformed";
    }
    std::shared_ptr<const LoadedPch> loaded =
        built.mode == PchMode::Built ? loadPch(path) : nullptr;
    run.pchModes[size_t(loaded ? PchMode::Built : PchMode::BuildFailed)].fetch_add(1);
    if (!loaded) {
        std::lock_guard lock(run.pchNotesMu);
        run.pchNotes.push_back(command.file + "'s configuration: " +
                               (built.detail.empty() ? "no manifest" : built.detail));
    }
    std::lock_guard lock(group.mu);
    if (loaded) {
        group.loaded = loaded;
        group.attempts = group.incomplete = 0;
    }
    // A planned PCH that did not build: plain parses choose the headers, as without a plan.
    if (group.loaded)
        group.state = PchGroup::Ready;
    else
        group.state = group.planned.empty() ? PchGroup::Off : PchGroup::Collecting;
    group.planned.clear();
}

std::optional<IndexedTu> Indexer::parseIn(Run& run, size_t tu, Parser& parser,
                                          FileClaimer& claimer) {
    // Built first by parseAll; here only if this TU is urgent, or came before the thread that
    // took the group's build locked it.
    if (PchGroup* group = run.pchGroupOf.empty() ? nullptr : run.pchGroupOf[tu])
        buildPlanned(run, *group, parser);
    PchReport report;
    std::shared_ptr<const LoadedPch> pch = pchFor(run, tu);
    // The group's first TU (its lowest rank) is usually the owner of the PCH's headers, which a
    // parse against the PCH does not extract (docs/pch.md, rule 1): if it would own one now, it
    // is parsed plain at once, not against the PCH first and then again.
    std::string owned;
    if (pch && tu == run.pchGroupOf[tu]->representative)
        for (const PchManifest::File& file : pch->manifest.files)
            if (claimer.wouldClaim(file.path, run.rankOf[tu])) {
                owned = file.path;
                pch = nullptr;
                break;
            }
    std::optional<IndexedTu> result =
        parseWith(run, tu, parser, claimer, pch ? pch->path : std::string(), report);
    if (result && !owned.empty()) {
        report.mode = PchMode::Owner;
        report.detail = owned + " (known before the parse)";
    }
    if (!result)
        return result;
    if (report.mode == PchMode::Used && pch) // it depends on what the PCH's build found absent
        result->absentPaths.insert(result->absentPaths.end(), pch->manifest.absentPaths.begin(),
                                   pch->manifest.absentPaths.end());
    notePch(run, tu, report, parser, result->record.status);
    return result;
}

std::optional<IndexedTu> Indexer::parseWith(Run& run, size_t tu, Parser& parser,
                                            FileClaimer& claimer, const std::string& pch,
                                            PchReport& report) {
    const CompileCommand& command = run.db.commands[tu];
    const size_t rank = run.rankOf[tu];
    if (!parser.worker) {
        ParseOptions options = run.parseOptions;
        options.pchPath = parser.pchSession ? pch : std::string();
        options.pchReport = &report;
        options.pchSession = parser.pchSession;
        return parseTranslationUnit(*parser.session, command, rank, claimer, options);
    }
    const auto start = std::chrono::steady_clock::now();
    auto millis = [&] {
        return uint32_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    };
    WorkerOutcome outcome = parser.worker->parse(command, rank, claimer, {pch, {}});
    if (outcome.kind == WorkerOutcome::Died) {
        // Once more, in a fresh worker: a crash that depends on what the worker parsed before
        // (its session) or on memory pressure may not come back. Plain, in case the PCH is what
        // it cannot take.
        const std::string first = outcome.reason;
        outcome = parser.worker->parse(command, rank, claimer);
        if (outcome.kind == WorkerOutcome::Died)
            outcome.reason = "the parse worker " +
                             std::string(first.starts_with("killed") ? "was " : "") + first +
                             ", and again when retried";
    }
    switch (outcome.kind) {
    case WorkerOutcome::Parsed:
        report = std::move(outcome.pch);
        if (!parsedWell(outcome.tu.record))
            claimer.release(rank);
        outcome.tu.absentPaths = std::move(outcome.absent);
        outcome.tu.aliases.insert(outcome.tu.aliases.end(), outcome.links.begin(),
                                  outcome.links.end());
        return std::move(outcome.tu);
    case WorkerOutcome::Cancelled:
        return std::nullopt;
    case WorkerOutcome::NoWorker: {
        claimer.release(rank);
        IndexedTu tu = crashedTu(command, outcome, run.stamps, outcome.reason, millis());
        tu.record.status = TuStatus::Failed; // tried again next run
        return tu;
    }
    case WorkerOutcome::Died:
    case WorkerOutcome::TimedOut:
        break;
    }
    claimer.release(rank);
    return crashedTu(command, outcome, run.stamps, outcome.reason, millis());
}

void Indexer::parseAndPublish(Run& run, size_t i, Parser& parser, FileClaimer& claimer,
                              SlotCounters& counters) {
    std::optional<IndexedTu> parsed = parseIn(run, i, parser, claimer);
    if (!parsed)
        return; // cancelled: the TU stays out of date
    IndexedTu& tu = *parsed;
    tu.generation = run.generation;
    const size_t files = tu.files.size();
    size_t symbols = 0, references = 0, skipped = 0;
    for (const IndexedFile& file : tu.files) {
        symbols += file.symbols.size();
        references += file.references.size();
        skipped += file.bodiesSkipped;
    }
    std::sort(tu.aliases.begin(), tu.aliases.end());
    tu.aliases.erase(std::unique(tu.aliases.begin(), tu.aliases.end()), tu.aliases.end());
    std::sort(tu.absentPaths.begin(), tu.absentPaths.end());
    tu.absentPaths.erase(std::unique(tu.absentPaths.begin(), tu.absentPaths.end()),
                         tu.absentPaths.end());
    run.included[i] = tu.includedFiles;
    run.extracted[i].clear();
    for (const IndexedFile& file : tu.files) {
        run.extracted[i].push_back(file.file.path);
        const FileRecord& f = file.file;
        if (f.errorCount > 0 && f.path != tu.mainFile)
            run.headerErrors[i].push_back({f.path, TuStatus::Errors, f.errorCount, f.firstError});
    }
    run.absent[i] = tu.absentPaths;
    for (const auto& [name, real] : tu.aliases)
        run.absent[i].push_back(name);
    run.results[i] = tu.record;
    run.parsed[i] = 1;
    store_.publish(std::move(tu));
    counters.files.fetch_add(files, std::memory_order_relaxed);
    counters.filesWithSkippedBodies.fetch_add(skipped, std::memory_order_relaxed);
    counters.symbols.fetch_add(symbols, std::memory_order_relaxed);
    counters.references.fetch_add(references, std::memory_order_relaxed);
}

void Indexer::reconcileOwners(Run& run) {
    // Each header must hold what its owner extracts: the lowest-ranked TU that parsed well and
    // includes it, among every TU of the database (parsed now, or up to date with its stored
    // file list). The parses above give most headers to that TU, but not when the owner is up to
    // date and did not run — the store's owner left the database, failed, or no longer includes
    // the header; a TU that failed gave back its claims after others had skipped them; an
    // up-to-date TU now ranks first. Those headers are extracted by re-parsing their owner.
    std::unordered_map<std::string, size_t> owner; // header -> tu
    auto consider = [&](const std::string& path, size_t i) {
        if (run.tuOf.contains(path))
            return; // a main file belongs to its own TU
        auto [it, inserted] = owner.try_emplace(path, i);
        if (!inserted && run.rankOf[i] < run.rankOf[it->second])
            it->second = i;
    };
    // [tu]: parsed well, now or (up to date) when it was last parsed.
    std::vector<char> well(run.n, 0);
    for (size_t i = 0; i < run.n; ++i) {
        if (run.parsed[i]) {
            well[i] = parsedWell(run.results[i]);
            if (well[i])
                for (const std::string& path : run.included[i])
                    consider(path, i);
            continue;
        }
        auto stored = run.before.tus.find(run.db.commands[i].file);
        well[i] = stored != run.before.tus.end() && parsedWell(stored->second);
        if (!well[i])
            continue;
        for (uint32_t id : stored->second.fileIds)
            if (auto file = run.before.files.find(id); file != run.before.files.end())
                consider(file->second.path, i);
    }
    // What no TU that parsed well extracts any more keeps no contents: the main file of a TU
    // that failed or crashed now, a header only such TUs include. A clean index records them
    // empty; the store still holds what their last owner extracted.
    {
        StoreEdit clear;
        for (const auto& [id, file] : run.before.files) {
            if (file.ownerFileId == 0)
                continue;
            if (auto tu = run.tuOf.find(file.path); tu != run.tuOf.end()) {
                if (!well[tu->second])
                    clear.clearFiles.push_back(file.path);
            } else if (!owner.contains(file.path)) {
                clear.clearFiles.push_back(file.path);
            }
        }
        if (!clear.clearFiles.empty())
            store_.apply(std::move(clear));
    }
    // Who holds each header now: the best rank that published it in this run, else the store's
    // owner if that TU is up to date and was not parsed again.
    std::unordered_map<std::string, size_t> holder;
    for (size_t i = 0; i < run.n; ++i)
        for (const std::string& path : run.extracted[i]) {
            auto [it, inserted] = holder.try_emplace(path, i);
            if (!inserted && run.rankOf[i] < run.rankOf[it->second])
                it->second = i;
        }
    std::map<size_t, std::vector<std::string>> byRank; // rank of the owner -> its headers
    for (const auto& [path, i] : owner) {
        std::optional<size_t> now;
        if (auto it = holder.find(path); it != holder.end())
            now = it->second;
        else if (std::optional<size_t> stored = run.storedOwner(path);
                 stored && !run.dirty[*stored] && !run.parsed[*stored])
            now = stored;
        if (now != i)
            byRank[run.rankOf[i]].push_back(path);
    }
    if (byRank.empty())
        return;
    std::vector<size_t> tuOfRank(run.n);
    for (size_t i = 0; i < run.n; ++i)
        tuOfRank[run.rankOf[i]] = i;
    // One at a time, on this thread, without skipping bodies, so that the headers are extracted
    // whole.
    std::optional<ParseSession> session;
    Parser parser;
    if (run.isolated) {
        WorkerOptions options = run.workerOptions;
        options.skipParsedBodies = false;
        options.denialsHold = false; // each re-parse is granted its own headers
        parser.worker = std::make_unique<ParseWorker>(options);
    } else {
        parser.session = &session.emplace(/*skipParsedBodies=*/false);
    }
    SlotCounters counters;
    for (auto& [rank, paths] : byRank) {
        std::sort(paths.begin(), paths.end());
        GrantedClaims grant(run.stamps, rank, paths);
        parseAndPublish(run, tuOfRank[rank], parser, grant, counters);
        run.summary.headersRecovered += paths.size();
    }
    if (parser.worker)
        run.summary.workersStarted += parser.worker->spawned();
    slots_[0].files.fetch_add(counters.files.load(), std::memory_order_relaxed);
    slots_[0].symbols.fetch_add(counters.symbols.load(), std::memory_order_relaxed);
    slots_[0].references.fetch_add(counters.references.load(), std::memory_order_relaxed);
}

void Indexer::cleanUp(Run& run) {
    // Forget files no TU reads any more, and record unchanged files' new stamps. A TU a cancelled
    // run did not reach still reads what the store says it reads.
    std::unordered_set<std::string> live;
    std::unordered_set<uint32_t> liveAbsentIds;
    std::unordered_set<std::string> liveAbsentPaths;
    for (size_t i = 0; i < run.n; ++i) {
        if (run.parsed[i]) {
            live.insert(run.included[i].begin(), run.included[i].end());
            liveAbsentPaths.insert(run.absent[i].begin(), run.absent[i].end());
            continue;
        }
        auto stored = run.before.tus.find(run.db.commands[i].file);
        if (stored == run.before.tus.end())
            continue;
        for (uint32_t id : stored->second.fileIds)
            if (auto file = run.before.files.find(id); file != run.before.files.end())
                live.insert(file->second.path);
        liveAbsentIds.insert(stored->second.absentIds.begin(), stored->second.absentIds.end());
        for (const TuRecord::Alias& alias : stored->second.aliases)
            liveAbsentIds.insert(alias.nameId);
    }
    StoreEdit cleanup;
    for (const auto& [id, record] : run.before.files)
        if (!live.contains(record.path))
            cleanup.removeFiles.push_back(record.path);
    std::unordered_set<std::string> touchedPaths;
    for (const FileRecord& record : run.touched)
        if (touchedPaths.insert(record.path).second)
            cleanup.touchFiles.push_back(record);
    for (const auto& [id, path] : run.before.absent)
        if (!liveAbsentIds.contains(id) && !liveAbsentPaths.contains(path))
            cleanup.removeAbsentPaths.push_back(path);
    run.summary.filesRemoved = cleanup.removeFiles.size();
    store_.apply(std::move(cleanup));
    store_.flush();
}

void Indexer::summarize(Run& run) {
    IndexSummary& summary = run.summary;
    for (unsigned t = 0; t < threads_; ++t) {
        summary.filesExtracted += slots_[t].files.load(std::memory_order_relaxed);
        summary.filesWithSkippedBodies +=
            slots_[t].filesWithSkippedBodies.load(std::memory_order_relaxed);
        summary.symbols += slots_[t].symbols.load(std::memory_order_relaxed);
        summary.references += slots_[t].references.load(std::memory_order_relaxed);
    }
    for (size_t i = 0; i < run.n; ++i) {
        if (!run.parsed[i])
            continue;
        ++summary.tusParsed;
        summary.parsedTus.push_back(run.db.commands[i].file);
        const TuRecord& r = run.results[i];
        summary.tusWithErrors += r.status == TuStatus::Errors;
        summary.tusFailed += r.status == TuStatus::Failed;
        summary.tusCrashed += r.status == TuStatus::Crashed;
        if (r.status != TuStatus::Ok)
            summary.failures.push_back(
                {run.db.commands[i].file, r.status, r.errorCount, r.firstError});
    }
    // A header taken over, or extracted again by its owner's re-parse, counts once: as its
    // lowest-ranked extractor (the owner) saw it.
    std::map<std::string, std::pair<size_t, TuFailure>> headers;
    for (size_t i = 0; i < run.n; ++i)
        for (const TuFailure& f : run.headerErrors[i]) {
            auto [it, inserted] = headers.try_emplace(f.file, run.rankOf[i], f);
            if (!inserted && run.rankOf[i] < it->second.first)
                it->second = {run.rankOf[i], f};
        }
    for (auto& [path, entry] : headers)
        summary.headerErrors.push_back(std::move(entry.second));
    summary.cancelled = summary.tusParsed < run.order.size();
    for (int m = 0; m < kPchModes; ++m)
        summary.pchModes[m] = run.pchModes[m].load();
    summary.pchNotes = run.pchNotes;
    summary.pchFallbacks = run.pchFallbacks;
    std::sort(summary.pchFallbacks.begin(), summary.pchFallbacks.end());
}

} // namespace symdex
