// `symdex index`: bring the store up to date with a compilation database, with a progress bar
// on a terminal (plain periodic lines otherwise) and a summary.
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "indexer/indexer.h"
#include "indexer/shards.h"
#include "indexer/tu_parser.h"
#include "store/lmdb.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace symdex::cli {

namespace {

std::string formatDuration(double seconds) {
    const long s = long(seconds + 0.5);
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

/// Polls the indexer's counters from its own thread and draws progress on stderr.
class ProgressReporter {
public:
    ProgressReporter(const Indexer& indexer, bool enabled)
        : indexer_(indexer), tty_(isatty(STDERR_FILENO)), enabled_(enabled) {
        if (enabled_)
            thread_ = std::thread([this] { loop(); });
    }
    ~ProgressReporter() { stop(); }

    void stop() {
        if (!thread_.joinable())
            return;
        {
            std::lock_guard lock(mu_);
            done_ = true;
        }
        wake_.notify_all();
        thread_.join();
        if (tty_)
            std::fprintf(stderr, "\r\033[K");
    }

private:
    void loop() {
        using Clock = std::chrono::steady_clock;
        const auto start = Clock::now();
        auto lastLine = start;
        std::unique_lock lock(mu_);
        while (!wake_.wait_for(lock, std::chrono::milliseconds(tty_ ? 200 : 1000),
                               [&] { return done_; })) {
            const IndexProgress p = indexer_.progress();
            const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
            if (p.planning) {
                if (tty_)
                    std::fprintf(stderr, "\r\033[Kchecking which TUs are up to date...");
                continue;
            }
            const double rate = elapsed > 0 ? double(p.tusDone) / elapsed : 0;
            const std::string eta =
                rate > 0 ? formatDuration(double(p.tusToParse - p.tusDone) / rate) : "?";
            if (tty_) {
                constexpr int kWidth = 30;
                const int filled =
                    p.tusToParse ? int(kWidth * double(p.tusDone) / double(p.tusToParse)) : kWidth;
                std::string bar(size_t(filled), '=');
                if (filled < kWidth)
                    bar += '>' + std::string(size_t(kWidth - filled - 1), ' ');
                std::fprintf(stderr, "\r\033[K[%s] %zu/%zu TUs  %.1f TU/s  ETA %s  %s symbols",
                             bar.c_str(), p.tusDone, p.tusToParse, rate, eta.c_str(),
                             withThousands(p.symbols).c_str());
            } else if (Clock::now() - lastLine >= std::chrono::seconds(5)) {
                lastLine = Clock::now();
                std::fprintf(stderr, "indexed %zu/%zu TUs (%.1f TU/s, ETA %s)\n", p.tusDone,
                             p.tusToParse, rate, eta.c_str());
            }
        }
    }

    const Indexer& indexer_;
    const bool tty_;
    const bool enabled_;
    std::mutex mu_;
    std::condition_variable wake_;
    bool done_ = false; // Requires mu_
    std::thread thread_;
};

/// `symdex index` compacts the store when at least this share of its file is free pages.
constexpr double kCompactFreeShare = 0.25;

void printSummary(const IndexSummary& s, const SymbolStore& store) {
    const StoreStats st = store.stats();
    std::printf("%zu of %zu TUs up to date; parsed %zu with %u thread%s\n", s.tusUpToDate,
                s.tusTotal, s.tusParsed, s.threads, s.threads == 1 ? "" : "s");
    std::printf("  extracted: %s files, %s symbols, %s references\n",
                withThousands(s.filesExtracted).c_str(), withThousands(s.symbols).c_str(),
                withThousands(s.references).c_str());
    if (s.filesWithSkippedBodies)
        std::printf("  warning: %zu extracted files had function bodies skipped by a shared "
                    "libclang session; their in-body references are missing (use --session "
                    "per-thread)\n",
                    s.filesWithSkippedBodies);
    if (s.claimTakeovers)
        std::printf("  (%zu headers were taken over by an earlier-scheduled TU and parsed twice, "
                    "see docs/design.md)\n",
                    s.claimTakeovers);
    if (s.headersRecovered)
        std::printf("  (%zu headers of failed TUs were extracted by re-parsing a TU that "
                    "includes them)\n",
                    s.headersRecovered);
    if (!s.isolationNote.empty())
        std::printf("  note: %s\n", s.isolationNote.c_str());
    const auto& pch = s.pchModes;
    if (size_t(pch[size_t(PchMode::Built)]) + pch[size_t(PchMode::BuildFailed)] +
            pch[size_t(PchMode::Used)] + pch[size_t(PchMode::Unusable)] >
        0) {
        std::printf("  PCH: %zu TUs parsed against one (%zu built this run); parsed whole: %zu "
                    "own a header in it, %zu include less, %zu for macros, %zu for declaration "
                    "order, %zu could not use it, %zu before it was ready or without one\n",
                    pch[size_t(PchMode::Used)], pch[size_t(PchMode::Built)],
                    pch[size_t(PchMode::Owner)], pch[size_t(PchMode::Incomplete)],
                    pch[size_t(PchMode::Macros)], pch[size_t(PchMode::Order)],
                    pch[size_t(PchMode::Unusable)], pch[size_t(PchMode::None)]);
        for (const std::string& note : s.pchNotes)
            std::printf("  PCH not built for %s\n", note.c_str());
    }
    std::printf("  TUs with errors: %zu, failed: %zu, crashed: %zu", s.tusWithErrors, s.tusFailed,
                s.tusCrashed);
    if (!s.headerErrors.empty())
        std::printf("; headers with errors: %zu", s.headerErrors.size());
    if (s.tusRemoved || s.filesRemoved)
        std::printf("; removed: %zu TUs, %zu files", s.tusRemoved, s.filesRemoved);
    std::printf(
        "\n  time: %.2f s wall, %.2f s user, %.2f s sys (CPU %.0f%% of %u thread%s)\n",
        s.wallSeconds, s.userSeconds, s.sysSeconds,
        s.wallSeconds > 0 ? 100 * (s.userSeconds + s.sysSeconds) / (s.wallSeconds * s.threads) : 0,
        s.threads, s.threads == 1 ? "" : "s");
    std::printf("  store: %s: %s files, %s TUs, %s symbols, %s references, %.1f MiB\n",
                displayPath(store.directory().string()).c_str(), withThousands(st.files).c_str(),
                withThousands(st.tus).c_str(), withThousands(st.symbols).c_str(),
                withThousands(st.references).c_str(), double(st.diskBytes) / (1 << 20));
    size_t shown = 0;
    for (const TuFailure& f : s.failures) {
        if (shown++ == 10) {
            std::printf("  ... and %zu more (symdex stats --errors lists them)\n",
                        s.failures.size() - 10);
            break;
        }
        std::printf("  %s: %s", displayPath(f.file).c_str(),
                    std::string(tuStatusName(f.status)).c_str());
        if (f.errorCount)
            std::printf(", %u error%s; first: %s", f.errorCount, f.errorCount == 1 ? "" : "s",
                        f.firstError.c_str());
        else if (!f.firstError.empty())
            std::printf(": %s", f.firstError.c_str());
        std::printf("\n");
    }
    shown = 0;
    for (const TuFailure& f : s.headerErrors) {
        if (shown++ == 10) {
            std::printf("  ... and %zu more headers (symdex stats --errors lists them)\n",
                        s.headerErrors.size() - 10);
            break;
        }
        std::printf("  header %s: %u error%s; first: %s\n", displayPath(f.file).c_str(),
                    f.errorCount, f.errorCount == 1 ? "" : "s", f.firstError.c_str());
    }
}

void printLockStats(const IndexSummary& s, LockMode mode) {
    const double threadTime = s.parseWallSeconds * s.threads;
    std::printf("\nlocks (--lock-mode %s): wall %.2f s; parse phase %.2f s x %u thread%s = "
                "%.2f s thread-time\n",
                std::string(lockModeName(mode)).c_str(), s.wallSeconds, s.parseWallSeconds,
                s.threads, s.threads == 1 ? "" : "s", threadTime);
    std::printf("  %-13s %14s %12s %9s %12s %10s %14s\n", "lock", "acquisitions", "contended",
                "share", "wait (s)", "% wall", "% thread-time");
    LockCounters total;
    auto row = [&](const char* name, const LockCounters& c) {
        std::printf("  %-13s %14s %12s %8.3f%% %12.4f %9.3f%% %13.3f%%\n", name,
                    withThousands(c.acquisitions).c_str(), withThousands(c.contended).c_str(),
                    100 * c.contendedShare(), c.waitNs / 1e9,
                    s.wallSeconds > 0 ? 100 * c.waitNs / 1e9 / s.wallSeconds : 0,
                    threadTime > 0 ? 100 * c.waitNs / 1e9 / threadTime : 0);
    };
    for (size_t i = 0; i < kLockClassCount; ++i) {
        const LockCounters& c = s.locks.byClass[i];
        row(std::string(lockClassName(LockClass(i))).c_str(), c);
        total.acquisitions += c.acquisitions;
        total.contended += c.contended;
        total.waitNs += c.waitNs;
    }
    row("all", total);
    std::printf("  commits: %s write transactions, %s TUs, %.2f s in the store-writer, "
                "%s map growths\n",
                withThousands(s.commits.commits).c_str(),
                withThousands(s.commits.tusCommitted).c_str(), s.commits.commitSeconds,
                withThousands(s.commits.mapGrowths).c_str());
}

/// "DIR.broken-20261123-114501" (with "-2", "-3"... if taken).
std::filesystem::path asideName(const std::filesystem::path& dir) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    const std::string base = dir.string() + ".broken-" + stamp;
    std::filesystem::path aside = base;
    for (int n = 2; std::filesystem::exists(aside); ++n)
        aside = base + "-" + std::to_string(n);
    return aside;
}

/// --rebuild: an empty store in `options.directory`. A store that cannot be opened because of
/// what it holds is kept for inspection under another name; a healthy one is emptied.
std::unique_ptr<SymbolStore> openRebuilt(StoreOptions options) {
    try {
        SymbolStore::open(options).reset(); // healthy: emptied below, under the writer lock
    } catch (const StoreError& e) {
        if (e.kind() != StoreError::Kind::Damaged && e.kind() != StoreError::Kind::WrongVersion)
            throw;
        const std::filesystem::path aside = asideName(options.directory);
        std::error_code ec;
        std::filesystem::rename(options.directory, aside, ec);
        if (ec)
            throw StoreError("cannot move the store '" + options.directory.string() + "' to '" +
                             aside.string() + "': " + ec.message());
        std::fprintf(stderr,
                     "symdex index: %s\n"
                     "symdex index: moved it to '%s'; indexing from scratch\n",
                     e.what(), aside.c_str());
    }
    options.startEmpty = true;
    return SymbolStore::open(options);
}

} // namespace

int runIndex(const QStringList& args) {
    QCommandLineParser parser;
    addDatabaseOption(parser);
    parser.addOption(
        QCommandLineOption("threads", "Parsing threads (default: all hardware threads).", "N"));
    parser.addOption(QCommandLineOption("force", "Re-parse every TU, even those up to date."));
    parser.addOption(QCommandLineOption(
        "rebuild", "Index from scratch into an empty store. A store that cannot be opened "
                   "(damaged, or another format version) is first moved aside."));
    parser.addOption(
        QCommandLineOption("session",
                           "libclang body-skipping session: per-thread (default), none, or shared "
                           "(for experiments: its results can depend on timing).",
                           "MODE"));
    parser.addOption(
        QCommandLineOption("no-macros", "Do not index macro definitions and expansions."));
    parser.addOption(QCommandLineOption(
        "lock-mode",
        "per-file (default): striped per-file locks, queries never wait for indexing; global: "
        "one store-wide lock held while extracting (KDevelop's DUChain), for comparison.",
        "MODE"));
    parser.addOption(QCommandLineOption(
        "batch", "At most N files per LMDB write transaction (default 256).", "N"));
    parser.addOption(
        QCommandLineOption("stats", "Print lock telemetry and commit figures after the run."));
    parser.addOption(QCommandLineOption(
        "index-priority",
        "normal (default), or low: parse threads under SCHED_IDLE, so that other work gets the CPU "
        "first (what the daemon does).",
        "PRIORITY"));
    parser.addOption(QCommandLineOption(
        "isolation",
        "process (default): each TU is parsed in a symdex-worker process, so that a TU that "
        "crashes or hangs libclang fails alone; none: parse in this process.",
        "MODE"));
    parser.addOption(QCommandLineOption(
        "tu-timeout",
        "Stop a TU's parse after this many seconds and record it as crashed (default 300; 0: no "
        "limit).",
        "SECONDS"));
    parser.addOption(QCommandLineOption(
        "prune-empty",
        "When the compilation database lists no file that exists ([] or every file missing), "
        "remove every TU from the store. Without it such a run changes nothing and fails."));
    parser.addOption(QCommandLineOption(
        "no-compact",
        "Leave the store's file as the run left it. By default, after a run that filled an empty "
        "store, or when a quarter or more of the file is free pages, it is rewritten without "
        "them, every page full."));
    parser.addOption(QCommandLineOption(
        "pch",
        "auto (default): the headers at least half the TUs of a configuration include are parsed "
        "once into a precompiled header kept in the store, and TUs that lose nothing by it are "
        "parsed against it (docs/pch.md); off: every TU parsed whole.",
        "MODE"));
    parser.addOption(QCommandLineOption(
        "shard",
        "Index shard K of N (0 <= K < N) of the compilation database into the store: a "
        "deterministic share, for `symdex merge` to combine with the other shards' stores "
        "(docs/shards.md).",
        "K/N"));
    parser.addOption(QCommandLineOption(
        "balance-from",
        "With --shard: balance the shards by the parse times the store DIR recorded (a merged "
        "store of an earlier run), and keep its split where that stays balanced. Every shard "
        "must be given the same. Without it, by main file size.",
        "DIR"));
    parser.addOption(QCommandLineOption({"q", "quiet"}, "No progress output."));
    addStoreOption(parser);
    if (!parseCommandLine(parser, args,
                          "Index the TUs of a compilation database into the symbol store."))
        return kExitOk;
    if (!parser.positionalArguments().isEmpty())
        throw UsageError{"index takes no positional arguments (use -p BUILD)"};

    CompileDatabase db = loadDatabase(parser);
    std::optional<ShardSpec> shard;
    if (parser.isSet("shard")) {
        shard = parseShardSpec(parser.value("shard").toStdString());
        if (!shard)
            throw UsageError{"--shard needs K/N with 0 <= K < N <= " + std::to_string(kMaxShards) +
                             ", not '" + parser.value("shard").toStdString() + "'"};
    } else if (parser.isSet("balance-from")) {
        throw UsageError{"--balance-from goes with --shard"};
    }
    IndexOptions options;
    if (parser.isSet("threads"))
        options.threads = parseThreadCount(parser.value("threads"));
    options.lowPriority = parseIndexPriorityOption(parser.value("index-priority"), false);
    const QString session = parser.value("session");
    if (session.isEmpty() || session == "per-thread")
        options.session = SessionMode::PerThread;
    else if (session == "shared")
        options.session = SessionMode::Shared;
    else if (session == "none")
        options.session = SessionMode::None;
    else
        throw UsageError{"--session must be per-thread, shared or none"};
    const QString isolation = parser.value("isolation");
    if (isolation.isEmpty() || isolation == "process")
        options.isolation = Isolation::Process;
    else if (isolation == "none")
        options.isolation = Isolation::InProcess;
    else
        throw UsageError{"--isolation must be process or none, not '" + isolation.toStdString() +
                         "'"};
    if (parser.isSet("tu-timeout"))
        options.tuTimeout = parseTuTimeout(parser.value("tu-timeout"));
    const QString pch = parser.value("pch");
    if (pch.isEmpty() || pch == "auto")
        options.pch = PchPolicy::Auto;
    else if (pch == "off")
        options.pch = PchPolicy::Off;
    else
        throw UsageError{"--pch must be auto or off, not '" + pch.toStdString() + "'"};
    options.force = parser.isSet("force");
    options.indexMacros = !parser.isSet("no-macros");

    StoreOptions storeOptions;
    storeOptions.directory = storeDirectory(parser);
    if (parser.isSet("lock-mode"))
        storeOptions.lockMode = parseLockModeOption(parser.value("lock-mode"));
    if (parser.isSet("batch")) {
        bool ok = false;
        int batch = parser.value("batch").toInt(&ok);
        if (!ok || batch < 1 || batch > 1000000)
            throw UsageError{"--batch needs a number from 1 to 1000000, not '" +
                             parser.value("batch").toStdString() + "'"};
        storeOptions.batchMaxFiles = size_t(batch);
    }
    std::unique_ptr<SymbolStore> store =
        parser.isSet("rebuild") ? openRebuilt(storeOptions) : SymbolStore::open(storeOptions);
    // A checkout that moved or a volume not mounted must not cost the whole index.
    if (db.commands.empty() && !parser.isSet("prune-empty")) {
        CompileDatabase named = db; // no commands to copy: named by its absolute path
        named.path = std::filesystem::absolute(db.path).lexically_normal().string();
        const std::string empty = emptyDatabaseReason(named);
        size_t tus = 0;
        store->forEachTu([&](const std::string&, const TuRecord&) { ++tus; });
        if (tus)
            throw UsageError{"the compilation database " + empty + "; the store '" +
                             store->directory().string() + "' keeps its " + std::to_string(tus) +
                             " TUs (pass --prune-empty to remove them)"};
    }
    std::optional<ShardManifest> manifest;
    if (shard) {
        // The whole database decides the split and every TU's rank; this store gets its share.
        std::unique_ptr<SymbolStore> balance;
        if (parser.isSet("balance-from")) {
            StoreOptions from;
            from.directory = parser.value("balance-from").toStdString();
            from.readOnly = true;
            if (!std::filesystem::exists(from.directory / "data.mdb"))
                throw UsageError{"--balance-from: '" + from.directory.string() +
                                 "' holds no store"};
            balance = SymbolStore::open(from);
        }
        ShardPlan plan = planShard(db, *shard, balance.get());
        if (!parser.isSet("quiet"))
            std::fprintf(stderr, "shard %u/%u: %zu of %u TUs%s\n", shard->index, shard->count,
                         plan.share.commands.size(), plan.manifest.tusInDatabase,
                         plan.kept ? " (the split of --balance-from kept)" : "");
        db = std::move(plan.share);
        manifest = std::move(plan.manifest);
        recordShardManifest(*store, *manifest); // run id 0: unfinished until the run ends
    }
    const bool fromEmpty = store->stats().files == 0;
    options.pchDirectory = (store->directory() / "pch").string();
    Indexer indexer(*store, options);
    IndexSummary summary;
    {
        ProgressReporter progress(indexer, !parser.isSet("quiet"));
        summary = indexer.run(db);
    }
    if (manifest && !summary.cancelled) {
        manifest->runId = newShardRunId();
        recordShardManifest(*store, *manifest);
    }
    // After a run that wrote much (a cold index above all), LMDB's file holds the pages the
    // last commits freed and pages split at random inserts, two-thirds full; rewritten, it is
    // about half the size. After a cold index always (300k names: 182 MiB left as is, too
    // little of it free to qualify, 124 MiB compacted), after a later run when much is free.
    const CompactStats compacted = parser.isSet("no-compact")
                                       ? CompactStats{}
                                       : store->compact(fromEmpty ? 0.0 : kCompactFreeShare);
    printSummary(summary, *store);
    if (compacted.compacted)
        std::printf("  compacted: %.1f MiB -> %.1f MiB in %.2f s (%.0f%% of the file was free "
                    "pages)\n",
                    double(compacted.bytesBefore) / (1 << 20),
                    double(compacted.bytesAfter) / (1 << 20), compacted.seconds,
                    100.0 * double(compacted.freePages) / double(compacted.filePages));
    if (compacted.recompressedBlocks)
        std::printf("  %llu blocks of declarations written before the store's own dictionary "
                    "compressed against it\n",
                    static_cast<unsigned long long>(compacted.recompressedBlocks));
    if (parser.isSet("stats")) {
        printLockStats(summary, storeOptions.lockMode);
        if (!summary.pchFallbacks.empty()) {
            std::printf("\nTUs parsed whole although a PCH was there (docs/pch.md):\n");
            for (const std::string& line : summary.pchFallbacks)
                std::printf("  %s\n", displayPath(line).c_str());
        }
    }
    return kExitOk;
}

} // namespace symdex::cli
