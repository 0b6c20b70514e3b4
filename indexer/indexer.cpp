#include "indexer/indexer.h"

#include "indexer/file_stamps.h"
#include "indexer/header_claims.h"

#include <tbb/concurrent_vector.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <pthread.h>
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

/// What the store held when the run started.
struct StoreSnapshot {
    std::unordered_map<uint32_t, FileRecord> files;
    std::unordered_map<std::string, uint64_t> hashes; ///< path -> content hash
    std::unordered_map<std::string, TuRecord> tus;    ///< main file -> record

    explicit StoreSnapshot(const SymbolStore& store) {
        store.forEachFile([&](uint32_t id, const FileRecord& record) {
            hashes.emplace(record.path, record.contentHash);
            files.emplace(id, record);
        });
        store.forEachTu(
            [&](const std::string& path, const TuRecord& record) { tus.emplace(path, record); });
    }
};

} // namespace

Indexer::Indexer(SymbolStore& store, IndexOptions options)
    : store_(store), options_(options),
      threads_(options.threads ? options.threads
                               : std::max(1u, std::thread::hardware_concurrency())),
      slots_(new SlotCounters[threads_]) {}

Indexer::~Indexer() = default;

IndexProgress Indexer::progress() const {
    IndexProgress p;
    p.planning = planning_.load(std::memory_order_relaxed);
    p.tusToParse = tusToParse_.load(std::memory_order_relaxed);
    for (unsigned i = 0; i < threads_; ++i) {
        p.tusDone += slots_[i].tusDone.load(std::memory_order_relaxed);
        p.symbols += slots_[i].symbols.load(std::memory_order_relaxed);
        p.references += slots_[i].references.load(std::memory_order_relaxed);
    }
    return p;
}

IndexSummary Indexer::run(const CompileDatabase& db) {
    const auto wallStart = std::chrono::steady_clock::now();
    rusage usageStart;
    getrusage(RUSAGE_SELF, &usageStart);
    const CommitStats commitsStart = store_.commitStats();
    const LockTelemetry locksStart = LockTelemetry::snapshot();
    for (unsigned i = 0; i < threads_; ++i) {
        slots_[i].tusDone = 0;
        slots_[i].files = 0;
        slots_[i].filesWithSkippedBodies = 0;
        slots_[i].symbols = 0;
        slots_[i].references = 0;
    }
    planning_ = true;

    IndexSummary summary;
    summary.tusTotal = db.commands.size();
    summary.threads = threads_;
    const size_t n = db.commands.size();

    tbb::task_arena arena{static_cast<int>(threads_)};
    const std::thread::id caller = std::this_thread::get_id();
    FileStamps stamps;
    const StoreSnapshot before(store_);

    // 1. Which TUs are out of date: a changed command, or any file they read changed (mtime and
    //    size first; the content hash decides).
    std::vector<char> dirty(n, 0);
    tbb::concurrent_vector<FileRecord> touched;
    arena.execute([&] {
        tbb::parallel_for(size_t(0), n, [&](size_t i) {
            const CompileCommand& cmd = db.commands[i];
            auto stored = before.tus.find(cmd.file);
            if (options_.force || stored == before.tus.end() ||
                stored->second.status == TuStatus::Failed ||
                stored->second.status == TuStatus::Crashed ||
                stored->second.commandHash != cmd.hash()) {
                dirty[i] = 1;
                return;
            }
            for (uint32_t id : stored->second.fileIds) {
                auto file = before.files.find(id);
                std::optional<FileStamp> now =
                    file == before.files.end() ? std::nullopt : stamps.stat(file->second.path);
                if (!now || file->second.contentHash == 0) {
                    dirty[i] = 1;
                    return;
                }
                if (now->mtimeNs == file->second.mtimeNs && now->size == file->second.size)
                    continue;
                std::optional<FileStamp> hashed = stamps.hashed(file->second.path);
                if (!hashed || hashed->contentHash != file->second.contentHash) {
                    dirty[i] = 1;
                    return;
                }
                FileRecord stamp = file->second;
                stamp.mtimeNs = hashed->mtimeNs;
                stamp.size = hashed->size;
                touched.push_back(stamp);
            }
        });
    });

    std::vector<size_t> order;
    for (size_t i = 0; i < n; ++i)
        if (dirty[i])
            order.push_back(i);
    summary.tusUpToDate = n - order.size();
    // Longest first (by last parse time, else by main file size): the run does not end waiting on
    // one big TU that started last.
    std::vector<uint64_t> cost(n, 0);
    for (size_t i : order) {
        auto stored = before.tus.find(db.commands[i].file);
        std::optional<FileStamp> st = stamps.stat(db.commands[i].file);
        cost[i] = stored != before.tus.end() ? uint64_t(stored->second.parseMillis) << 32
                                             : (st ? st->size : 0);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cost[a] > cost[b]; });

    // 2. TUs that left the compilation database.
    std::unordered_set<std::string> inDb;
    for (const CompileCommand& cmd : db.commands)
        inDb.insert(cmd.file);
    StoreEdit removals;
    for (const auto& [path, record] : before.tus)
        if (!inDb.contains(path))
            removals.removeTus.push_back(path);
    summary.tusRemoved = removals.removeTus.size();
    if (!removals.removeTus.empty())
        store_.apply(std::move(removals));

    // 3. Parse. Each TU's main file is its own; headers go to the first TU that reaches them.
    // Ranks are places in `order`, the order TUs start in (see header_claims.h).
    HeaderClaims claims(stamps, before.hashes, order.size(), options_.force);
    for (size_t k = 0; k < order.size(); ++k)
        claims.preclaim(db.commands[order[k]].file, k);
    static std::atomic<uint64_t> runs{0};
    const uint64_t generation = (uint64_t(getpid()) << 32) | ++runs;
    tusToParse_ = order.size();
    planning_ = false;

    std::vector<std::unique_ptr<ParseSession>> sessions;
    if (!order.empty()) {
        const bool skip = options_.session != SessionMode::None;
        const size_t count = options_.session == SessionMode::PerThread ? threads_ : 1;
        for (size_t i = 0; i < count; ++i)
            sessions.push_back(std::make_unique<ParseSession>(skip));
    }
    ParseOptions parseOptions;
    parseOptions.indexMacros = options_.indexMacros;
    if (store_.lockMode() == LockMode::Global)
        parseOptions.extractionLock = &store_.globalLock();

    std::vector<std::vector<std::string>> included(n); // [tu]: written by the TU's parse only
    std::vector<TuRecord> results(n);                  // [tu]: written by the TU's parse only
    std::vector<char> parsed(n, 0);                    // [tu]: written by the TU's parse only
    auto cancelled = [&] {
        return options_.cancel && options_.cancel->load(std::memory_order_relaxed);
    };
    std::atomic<size_t> next{0};
    const auto parseStart = std::chrono::steady_clock::now();
    if (!order.empty())
        arena.execute([&] {
            tbb::parallel_for(
                size_t(0), size_t(threads_),
                [&](size_t) {
                    const int slot = tbb::this_task_arena::current_thread_index();
                    nameWorker(caller, slot);
                    SlotCounters& counters = slots_[slot];
                    ParseSession& session = *sessions[sessions.size() == 1 ? 0 : size_t(slot)];
                    // One ticket per TU, taken in cost order.
                    for (size_t k;
                         !cancelled() &&
                         (k = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) {
                        const size_t i = order[k];
                        IndexedTu tu =
                            parseTranslationUnit(session, db.commands[i], k, claims, parseOptions);
                        tu.generation = generation;
                        const size_t tuFiles = tu.files.size();
                        size_t tuSymbols = 0, tuRefs = 0;
                        size_t tuSkipped = 0;
                        for (const IndexedFile& file : tu.files) {
                            tuSymbols += file.symbols.size();
                            tuRefs += file.references.size();
                            tuSkipped += file.bodiesSkipped;
                        }
                        included[i] = tu.includedFiles;
                        results[i] = tu.record;
                        parsed[i] = 1;
                        store_.publish(std::move(tu));
                        counters.files.fetch_add(tuFiles, std::memory_order_relaxed);
                        counters.filesWithSkippedBodies.fetch_add(tuSkipped,
                                                                  std::memory_order_relaxed);
                        counters.symbols.fetch_add(tuSymbols, std::memory_order_relaxed);
                        counters.references.fetch_add(tuRefs, std::memory_order_relaxed);
                        counters.tusDone.fetch_add(1, std::memory_order_relaxed);
                    }
                },
                tbb::static_partitioner());
        });

    summary.parseWallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - parseStart).count();

    // 4. Forget files no TU reads any more, and record unchanged files' new stamps. A TU a
    //    cancelled run did not reach still reads what the store says it reads.
    std::unordered_set<std::string> live;
    for (size_t i = 0; i < n; ++i) {
        if (parsed[i]) {
            live.insert(included[i].begin(), included[i].end());
            continue;
        }
        auto stored = before.tus.find(db.commands[i].file);
        if (stored == before.tus.end())
            continue;
        for (uint32_t id : stored->second.fileIds)
            if (auto file = before.files.find(id); file != before.files.end())
                live.insert(file->second.path);
    }
    StoreEdit cleanup;
    for (const auto& [id, record] : before.files)
        if (!live.contains(record.path))
            cleanup.removeFiles.push_back(record.path);
    std::unordered_set<std::string> touchedPaths;
    for (const FileRecord& record : touched)
        if (touchedPaths.insert(record.path).second)
            cleanup.touchFiles.push_back(record);
    summary.filesRemoved = cleanup.removeFiles.size();
    summary.claimTakeovers = claims.takeovers();
    store_.apply(std::move(cleanup));
    store_.flush();

    for (unsigned t = 0; t < threads_; ++t) {
        summary.filesExtracted += slots_[t].files.load(std::memory_order_relaxed);
        summary.filesWithSkippedBodies +=
            slots_[t].filesWithSkippedBodies.load(std::memory_order_relaxed);
        summary.symbols += slots_[t].symbols.load(std::memory_order_relaxed);
        summary.references += slots_[t].references.load(std::memory_order_relaxed);
    }
    for (size_t i = 0; i < n; ++i) {
        if (!parsed[i])
            continue;
        ++summary.tusParsed;
        summary.parsedTus.push_back(db.commands[i].file);
        const TuRecord& r = results[i];
        summary.tusWithErrors += r.status == TuStatus::Errors;
        summary.tusFailed += r.status == TuStatus::Failed;
        summary.tusCrashed += r.status == TuStatus::Crashed;
        if (r.status != TuStatus::Ok)
            summary.failures.push_back({db.commands[i].file, r.status, r.errorCount, r.firstError});
    }
    summary.cancelled = summary.tusParsed < order.size();

    rusage usageEnd;
    getrusage(RUSAGE_SELF, &usageEnd);
    summary.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    summary.userSeconds = seconds(usageEnd.ru_utime) - seconds(usageStart.ru_utime);
    summary.sysSeconds = seconds(usageEnd.ru_stime) - seconds(usageStart.ru_stime);
    const CommitStats commitsEnd = store_.commitStats();
    summary.commits.commits = commitsEnd.commits - commitsStart.commits;
    summary.commits.tusCommitted = commitsEnd.tusCommitted - commitsStart.tusCommitted;
    summary.commits.mapGrowths = commitsEnd.mapGrowths - commitsStart.mapGrowths;
    summary.commits.commitSeconds = commitsEnd.commitSeconds - commitsStart.commitSeconds;
    summary.locks = LockTelemetry::snapshot() - locksStart;
    return summary;
}

} // namespace symdex
