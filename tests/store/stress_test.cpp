// Concurrency stress tests of the store's guarantees, in both lock modes: a published file is
// visible to every query from then on, whole (never torn between two versions), exactly once
// (staged contents shadow their committed rows), never older than what a query saw before; and
// the store ends up exactly as a single-threaded run leaves it.
//
// Catch2's assertions are not thread-safe: worker threads record what they find wrong in a
// Failures object, which the test thread checks after joining them.
#include "indexer/indexer.h"
#include "store/encoding.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <functional>
#include <latch>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <unordered_map>

using namespace symdex;
using symdex::test::TempDir;

namespace {

/// What worker threads found wrong: every failure is counted, the first few are kept.
class Failures {
public:
    void add(const std::string& message) {
        std::lock_guard lock(mu_);
        if (messages_.size() < kKept)
            messages_.push_back(message);
        ++count_;
    }
    size_t count() const {
        std::lock_guard lock(mu_);
        return count_;
    }
    std::string report() const {
        std::lock_guard lock(mu_);
        std::string out = std::to_string(count_) + " failure(s) on worker threads";
        for (const std::string& m : messages_)
            out += "\n  " + m;
        return out;
    }

private:
    static constexpr size_t kKept = 20;
    mutable std::mutex mu_;
    std::vector<std::string> messages_;
    size_t count_ = 0;
};

/// Runs `body` on a thread of its own, turning an exception into a failure.
std::thread spawn(Failures& failures, const std::string& name, std::function<void()> body) {
    return std::thread([&failures, name, body = std::move(body)] {
        try {
            body();
        } catch (const std::exception& e) {
            failures.add(name + ": exception: " + e.what());
        } catch (...) {
            failures.add(name + ": unknown exception");
        }
    });
}

/// Paces a reader's passes over its queries. In LockMode::Global a reader pauses twice as long as
/// its pass took: the store-wide lock is a std::shared_mutex, which glibc makes prefer readers, and
/// three readers querying back to back hold it shared nearly all the time, so that publishing
/// (like the indexer's extraction) waits for the rare moments when no query runs, 10 to 25 times
/// slower. Per-file mode has no such lock: readers query back to back.
class Pacer {
public:
    explicit Pacer(LockMode mode) : mode_(mode) {}
    void passDone() {
        const auto now = std::chrono::steady_clock::now();
        if (mode_ == LockMode::Global)
            std::this_thread::sleep_for(2 * (now - passStart_));
        passStart_ = std::chrono::steady_clock::now();
    }

private:
    LockMode mode_;
    std::chrono::steady_clock::time_point passStart_ = std::chrono::steady_clock::now();
};

std::string dumpOf(const SymbolStore& store, const std::filesystem::path& root) {
    std::ostringstream out;
    dumpStore(store, out, root);
    return out.str();
}

// --- Store level: synthetic files with numbered versions ---------------------------------------

constexpr int kMainFiles = 12;
constexpr int kHeaders = 8;
constexpr int kFiles = kMainFiles + kHeaders; // file f: main file f, or header f - kMainFiles
constexpr int kWriters = 4;
constexpr int kReaders = 3;
/// TUs each writer publishes: about half a second per lock mode in a RelWithDebInfo build on two
/// cores. The sanitizer builds are unoptimised, and ThreadSanitizer slows this test 100-fold.
#if defined(__SANITIZE_THREAD__)
constexpr int kPublishesPerWriter = 50;
#elif !defined(__OPTIMIZE__)
constexpr int kPublishesPerWriter = 150;
#else
constexpr int kPublishesPerWriter = 500;
#endif

/// The files of TU t (main file t first), in index order: the main file and 2 or 3 of the shared
/// headers, so that TUs overlap.
std::vector<int> tuFiles(int t) {
    std::vector<int> files{kMainFiles + t % kHeaders, kMainFiles + (t + 3) % kHeaders};
    if (t % 2 == 0)
        files.push_back(kMainFiles + (t + 5) % kHeaders);
    std::sort(files.begin(), files.end());
    files.insert(files.begin(), t);
    return files;
}

std::string stableName(int f) {
    return "stable_f" + std::to_string(f);
}
/// The symbol every version of file f declares.
std::string stableUsr(int f) {
    return "c:@N@stress@F@" + stableName(f) + "#";
}
std::string versionName(int f, uint64_t v, uint64_t i) {
    return "f" + std::to_string(f) + "_v" + std::to_string(v) + "_s" + std::to_string(i);
}
/// Symbols that only version v of file f declares.
std::string versionUsr(int f, uint64_t v, uint64_t i) {
    return "c:@N@stress@" + versionName(f, v, i);
}
/// Symbols of version v besides the stable one.
uint64_t versionSymbols(uint64_t v) {
    return 1 + v % 5;
}
/// Other files' stable symbols version v references: files f + 1 .. f + versionTargets(v).
uint64_t versionTargets(uint64_t v) {
    return 1 + v % 3;
}
/// Whether version v of file `from` references the stable symbol of file `to`.
bool versionReferences(int from, uint64_t v, int to) {
    return uint64_t((to - from - 1 + kFiles) % kFiles) < versionTargets(v);
}

Symbol makeSymbol(std::string usr, std::string name, SymbolKind kind, uint32_t line) {
    Symbol s;
    s.usr = std::move(usr);
    s.qualifiedName = "stress::" + name;
    s.name = std::move(name);
    s.kind = kind;
    s.flags = kDefinition;
    s.location = {line, 5};
    s.extent = {{line, 1}, {line + 2, 2}};
    return s;
}

/// Version v of file f, with the record's counts filled in as the store fills them. Every
/// reference's column is v + 1 and the file's mtime is v, so that a reader can tell which version
/// a row came from.
IndexedFile fileVersion(const std::string& path, int f, uint64_t v) {
    IndexedFile file;
    file.file.path = path;
    file.file.contentHash = hash64(path + "@" + std::to_string(v));
    file.file.mtimeNs = int64_t(v);
    file.file.size = 1000 + v;
    file.symbols.push_back(makeSymbol(stableUsr(f), stableName(f), SymbolKind::Function, 1));
    for (uint64_t i = 0; i < versionSymbols(v); ++i)
        file.symbols.push_back(makeSymbol(versionUsr(f, v, i), versionName(f, v, i),
                                          SymbolKind::Variable, uint32_t(10 + 3 * i)));
    const uint32_t column = uint32_t(v + 1);
    file.references.push_back({hash64(versionUsr(f, v, 0)), {40, column}, kRoleRead});
    for (uint64_t k = 0; k < versionTargets(v); ++k)
        file.references.push_back({hash64(stableUsr(int((f + 1 + k) % kFiles))),
                                   {uint32_t(50 + k), column},
                                   kRoleCall | kRoleReference});
    file.file.symbolCount = uint32_t(file.symbols.size());
    file.file.referenceCount = uint32_t(file.references.size());
    return file;
}

/// The versions one thread compares with, each built once: building them would otherwise take a
/// quarter of the run.
class VersionCache {
public:
    explicit VersionCache(const std::vector<std::string>& paths) : paths_(paths) {}
    const IndexedFile& get(int f, uint64_t v) {
        auto [it, inserted] = files_.try_emplace(std::pair(f, v));
        if (inserted)
            it->second = fileVersion(paths_[size_t(f)], f, v);
        return it->second;
    }

private:
    const std::vector<std::string>& paths_;
    std::map<std::pair<int, uint64_t>, IndexedFile> files_;
};

/// The version symbols[1] names ("f<f>_v<v>_s0"); 0 if there is none.
uint64_t versionOfSymbols(int f, const std::vector<Symbol>& symbols) {
    if (symbols.size() < 2)
        return 0;
    const std::string prefix = "f" + std::to_string(f) + "_v";
    const std::string& name = symbols[1].name;
    if (!name.starts_with(prefix) || !name.ends_with("_s0"))
        return 0;
    uint64_t v = 0;
    const char* begin = name.data() + prefix.size();
    const char* end = name.data() + name.size() - 3;
    auto [ptr, ec] = std::from_chars(begin, end, v);
    return ec == std::errc() && ptr == end ? v : 0;
}

struct StressStore {
    LockMode mode;
    TempDir dir;
    std::vector<std::string> paths; // [file]
    std::vector<std::vector<int>> tus;
    std::unique_ptr<SymbolStore> store;

    explicit StressStore(LockMode lockMode) : mode(lockMode) {
        for (int f = 0; f < kFiles; ++f)
            paths.push_back(f < kMainFiles
                                ? dir / ("src/m" + std::to_string(f) + ".cc")
                                : dir / ("include/h" + std::to_string(f - kMainFiles) + ".h"));
        for (int t = 0; t < kMainFiles; ++t)
            tus.push_back(tuFiles(t));
        store = open("store");
    }

    /// Small, quick batches: many commits interleave with the queries. A small map, which grows
    /// (a few times in the normal build) while queries run.
    std::unique_ptr<SymbolStore> open(const std::string& name) const {
        StoreOptions options;
        options.directory = dir.path() / name;
        options.initialMapSize = size_t(128) << 10;
        options.batchMaxFiles = 8;
        options.batchMaxDelay = std::chrono::milliseconds(1);
        options.lockMode = mode;
        return SymbolStore::open(options);
    }

    /// TU t with each of its files at the given version.
    IndexedTu makeTu(int t, const std::vector<uint64_t>& versions) const {
        IndexedTu tu;
        tu.mainFile = paths[size_t(t)];
        tu.record.commandHash = hash64(tu.mainFile);
        const std::vector<int>& files = tus[size_t(t)];
        for (size_t k = 0; k < files.size(); ++k) {
            const int f = files[k];
            tu.includedFiles.push_back(paths[size_t(f)]);
            tu.files.push_back(fileVersion(paths[size_t(f)], f, versions[k]));
        }
        return tu;
    }
};

/// Shared between the writers, the readers and the test thread.
struct VersionBoard {
    std::array<std::mutex, kFiles> fileMu; ///< held by the writer publishing the file
    /// The newest version given to a file (set before its publish() starts).
    std::array<std::atomic<uint64_t>, kFiles> assigned{};
    /// The newest version whose publish() has returned: every query must see it or a newer one.
    std::array<std::atomic<uint64_t>, kFiles> published{};
    std::array<std::atomic<bool>, kMainFiles> tuPublished{};
    std::atomic<bool> writersDone{false};
    /// Reader passes that began with files staged and not committed yet.
    std::atomic<size_t> stagedPasses{0};
};

/// One writer: publishes random TUs, each file at a new version, and reads its own writes.
void writerLoop(const StressStore& s, VersionBoard& board, Failures& failures, int w) {
    const std::string who = "writer " + std::to_string(w);
    std::mt19937 rng(uint32_t(1000 + w));
    std::uniform_int_distribution<int> pickTu(0, kMainFiles - 1);
    for (int i = 0; i < kPublishesPerWriter; ++i) {
        const int t = pickTu(rng);
        const std::vector<int>& files = s.tus[size_t(t)];
        std::vector<std::unique_lock<std::mutex>> locks; // in index order: no deadlock
        for (int f : files)
            locks.emplace_back(board.fileMu[size_t(f)]);
        std::vector<uint64_t> versions;
        for (int f : files) {
            const uint64_t v = board.assigned[size_t(f)].load(std::memory_order_relaxed) + 1;
            board.assigned[size_t(f)].store(v, std::memory_order_release);
            versions.push_back(v);
        }
        IndexedTu tu = s.makeTu(t, versions);
        s.store->publish(tu);
        for (size_t k = 0; k < files.size(); ++k)
            board.published[size_t(files[k])].store(versions[k], std::memory_order_release);
        board.tuPublished[size_t(t)].store(true, std::memory_order_release);

        // Read-your-writes: nobody else publishes these files while we hold their locks.
        for (size_t k = 0; k < files.size(); ++k) {
            const int f = files[k];
            const uint64_t v = versions[k];
            const std::string& path = s.paths[size_t(f)];
            const std::string where = who + ", " + path + " v" + std::to_string(v) + ": ";
            const IndexedFile& expected = tu.files[k];
            const std::vector<uint64_t> own = s.store->resolveName(versionName(f, v, 0));
            if (own != std::vector<uint64_t>{hash64(versionUsr(f, v, 0))})
                failures.add(where + "resolveName of its new symbol found " +
                             std::to_string(own.size()) + " USRs");
            const uint64_t last = versionSymbols(v) - 1;
            if (s.store->occurrences(hash64(versionUsr(f, v, last))).size() != 1)
                failures.add(where + "occurrences of its new symbol is not one hit");
            auto symbols = s.store->fileSymbols(path);
            if (!symbols || *symbols != expected.symbols)
                failures.add(where + "fileSymbols is not the version just published (saw v" +
                             std::to_string(symbols ? versionOfSymbols(f, *symbols) : 0) + ")");
            auto refs = s.store->fileReferences(path);
            if (!refs || *refs != expected.references)
                failures.add(where + "fileReferences is not the version just published");
        }
    }
}

/// One reader: queries every file over and over until the writers are done (at least once).
void readerLoop(const StressStore& s, VersionBoard& board, Failures& failures, int r) {
    const std::string who = "reader " + std::to_string(r);
    std::array<uint64_t, kFiles> lastSeen{}; // the newest version seen of each file
    VersionCache cache(s.paths);
    Pacer pacer(s.mode);
    std::unordered_map<uint64_t, int> stableFiles; // usrHash -> file
    for (int f = 0; f < kFiles; ++f)
        stableFiles.emplace(hash64(stableUsr(f)), f);

    // A version `v` of file f seen by a query that started after `published` was read: it must be
    // at least that, at most what was assigned, and not older than what this reader saw before.
    // A file is never seen known and empty: the writer commits a file's newest staged contents
    // with the first TU that includes it (WriteContext::writeNewest), never an empty record.
    auto checkVersion = [&](int f, uint64_t v, uint64_t published, const std::string& what) {
        const uint64_t assigned = board.assigned[size_t(f)].load(std::memory_order_acquire);
        std::string problem;
        if (v < published)
            problem = "older than the published v" + std::to_string(published);
        else if (v > assigned)
            problem = "never assigned (newest v" + std::to_string(assigned) + ")";
        else if (v < lastSeen[size_t(f)])
            problem = "older than v" + std::to_string(lastSeen[size_t(f)]) + " seen before";
        if (!problem.empty())
            failures.add(who + ": " + what + " of " + s.paths[size_t(f)] + " shows v" +
                         std::to_string(v) + ", " + problem);
        lastSeen[size_t(f)] = std::max(lastSeen[size_t(f)], v);
    };

    do {
        if (s.store->stagedFiles() > 0)
            board.stagedPasses.fetch_add(1, std::memory_order_relaxed);
        for (int f = 0; f < kFiles; ++f) {
            const std::string& path = s.paths[size_t(f)];
            const std::string where = who + ", " + path + ": ";
            auto published = [&] {
                return board.published[size_t(f)].load(std::memory_order_acquire);
            };

            // (a) No torn file: one version whole, with exactly that version's rows.
            uint64_t before = published();
            if (auto symbols = s.store->fileSymbols(path)) {
                const uint64_t v = versionOfSymbols(f, *symbols);
                if (v != 0 && *symbols == cache.get(f, v).symbols)
                    checkVersion(f, v, before, "fileSymbols");
                else
                    failures.add(where + "fileSymbols is torn or malformed (" +
                                 std::to_string(symbols->size()) + " symbols, v" +
                                 std::to_string(v) + ")");
            } else if (before != 0) {
                failures.add(where + "fileSymbols: unknown file, although v" +
                             std::to_string(before) + " was published");
            }
            before = published();
            if (auto refs = s.store->fileReferences(path)) {
                const uint64_t v = refs->empty() ? 0 : refs->front().location.column - 1;
                if (v != 0 && *refs == cache.get(f, v).references)
                    checkVersion(f, v, before, "fileReferences");
                else
                    failures.add(where + "fileReferences is torn or malformed (" +
                                 std::to_string(refs->size()) + " references, v" +
                                 std::to_string(v) + ")");
            } else if (before != 0) {
                failures.add(where + "fileReferences: unknown file, although v" +
                             std::to_string(before) + " was published");
            }
            before = published();
            if (auto record = s.store->file(path)) {
                const uint64_t v = uint64_t(record->mtimeNs);
                // The owner's file id is the store's to assign (0 while the file is staged).
                record->ownerFileId = 0;
                if (v != 0 && *record == cache.get(f, v).file)
                    checkVersion(f, v, before, "file()");
                else
                    failures.add(where + "file record is torn or malformed (v" + std::to_string(v) +
                                 ")");
            } else if (before != 0) {
                failures.add(where + "file(): unknown file, although v" + std::to_string(before) +
                             " was published");
            }

            // (b) The stable symbol: exactly one declaration, one USR, once published. 0 would be
            // a published symbol invisible; 2 the overlay and LMDB both visible.
            const uint64_t stable = hash64(stableUsr(f));
            before = published();
            const std::vector<SymbolHit> hits = s.store->occurrences(stable);
            if (hits.size() > 1 || (before != 0 && hits.empty()))
                failures.add(where + "occurrences(stable_f" + std::to_string(f) + ") found " +
                             std::to_string(hits.size()) + " hits (published v" +
                             std::to_string(before) + ")");
            for (const SymbolHit& hit : hits)
                if (hit.path != path || hit.symbol != cache.get(f, 1).symbols[0])
                    failures.add(where + "occurrences(stable) found a wrong symbol in " + hit.path);
            before = published();
            const std::vector<uint64_t> usrs = s.store->resolveName(stableName(f));
            if (usrs.size() > 1 || (before != 0 && usrs.empty()) ||
                (!usrs.empty() && usrs[0] != stable))
                failures.add(where + "resolveName(stable_f" + std::to_string(f) + ") found " +
                             std::to_string(usrs.size()) + " USRs (published v" +
                             std::to_string(before) + ")");

            // The references to the stable symbol: one from each file whose version refers to
            // it, never two (the staged and the committed rows of one file).
            std::array<uint64_t, kFiles> publishedBefore;
            for (int g = 0; g < kFiles; ++g)
                publishedBefore[size_t(g)] =
                    board.published[size_t(g)].load(std::memory_order_acquire);
            std::map<std::string, std::vector<Reference>> refsByPath;
            for (ReferenceHit& hit : s.store->references(stable))
                refsByPath[hit.path].push_back(hit.reference);
            for (const auto& [from, refs] : refsByPath) {
                auto it = std::find(s.paths.begin(), s.paths.end(), from);
                if (it == s.paths.end()) {
                    failures.add(where + "references(stable) from an unknown file " + from);
                    continue;
                }
                const int g = int(it - s.paths.begin());
                const uint64_t v = refs.front().location.column - 1;
                if (refs.size() != 1 || !versionReferences(g, v, f) ||
                    v < publishedBefore[size_t(g)]) {
                    failures.add(where + "references(stable) from " + from + ": " +
                                 std::to_string(refs.size()) + " hits of v" + std::to_string(v) +
                                 " (published v" + std::to_string(publishedBefore[size_t(g)]) +
                                 ")");
                    continue;
                }
                const std::vector<Reference>& expected = cache.get(g, v).references;
                if (std::count(expected.begin(), expected.end(), refs.front()) != 1)
                    failures.add(where + "references(stable) from " + from + " is wrong");
            }
        }

        // (c) Every published file's stable symbol, each exactly once, with one occurrence.
        std::array<uint64_t, kFiles> before;
        for (int f = 0; f < kFiles; ++f)
            before[size_t(f)] = board.published[size_t(f)].load(std::memory_order_acquire);
        std::array<int, kFiles> found{};
        for (const NameMatch& m : s.store->findSymbols("stable_f", 100)) {
            auto it = stableFiles.find(m.best.symbol.usrHash());
            if (it == stableFiles.end()) {
                failures.add(who + ": findSymbols(stable_f) found " + m.best.symbol.usr);
                continue;
            }
            ++found[size_t(it->second)];
            if (m.occurrences != 1 || m.rank != MatchRank::Prefix ||
                m.best.path != s.paths[size_t(it->second)])
                failures.add(who + ": findSymbols(stable_f) found " + m.best.symbol.name +
                             " with " + std::to_string(m.occurrences) + " occurrences in " +
                             m.best.path);
        }
        for (int f = 0; f < kFiles; ++f)
            if (found[size_t(f)] > 1 || (before[size_t(f)] != 0 && found[size_t(f)] == 0))
                failures.add(who + ": findSymbols(stable_f) found stable_f" + std::to_string(f) +
                             " " + std::to_string(found[size_t(f)]) + " times (published v" +
                             std::to_string(before[size_t(f)]) + ")");
        pacer.passDone();
    } while (!board.writersDone.load(std::memory_order_acquire));
}

// --- Indexer level: the golden fixture ----------------------------------------------------------

const std::vector<std::string> kSources = {"src/circle.cpp", "src/util.cpp", "src/main.cpp",
                                           "src/broken.cpp"};
const std::vector<std::string> kFlags = {"-std=c++17", "-Iinclude"};
constexpr int kReindexRuns = 3;

/// A copy of the golden fixture with its compile database and a store beside it.
struct GoldenTree {
    TempDir dir;
    std::unique_ptr<SymbolStore> store;
    CompileDatabase db;

    explicit GoldenTree(LockMode mode) {
        test::copyFixture("golden", dir.path());
        test::writeCompileDb(dir.path(), kSources, kFlags);
        StoreOptions options;
        options.directory = dir.path() / ".symdex";
        options.lockMode = mode;
        store = SymbolStore::open(options);
        std::string error;
        auto loaded = loadCompileDatabase(dir.path().string(), &error);
        if (!loaded)
            throw std::runtime_error(error);
        db = std::move(*loaded);
    }

    IndexSummary index(unsigned threads, bool force) {
        IndexOptions options;
        options.threads = threads;
        options.force = force;
        return Indexer(*store, options).run(db);
    }
};

std::string describe(const std::vector<SymbolHit>& hits) {
    std::vector<std::string> lines;
    for (const SymbolHit& h : hits)
        lines.push_back(h.path + ":" + std::to_string(h.symbol.location.line) + ":" +
                        std::to_string(h.symbol.location.column) + " " + h.symbol.usr + " " +
                        std::to_string(h.symbol.flags));
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const std::string& l : lines)
        out += l + "\n";
    return out;
}

std::string describe(const std::vector<ReferenceHit>& hits) {
    std::vector<std::string> lines;
    for (const ReferenceHit& h : hits)
        lines.push_back(h.path + ":" + std::to_string(h.reference.location.line) + ":" +
                        std::to_string(h.reference.location.column) + " " +
                        std::to_string(h.reference.roles));
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const std::string& l : lines)
        out += l + "\n";
    return out;
}

/// (usrHash, rank, occurrences) of each match, sorted: the order of equal matches may differ.
std::vector<std::tuple<uint64_t, int, uint32_t>> describe(const std::vector<NameMatch>& matches) {
    std::vector<std::tuple<uint64_t, int, uint32_t>> out;
    for (const NameMatch& m : matches)
        out.emplace_back(m.best.symbol.usrHash(), int(m.rank), m.occurrences);
    std::sort(out.begin(), out.end());
    return out;
}

/// What the store answers after the first index: every query must answer the same at every
/// moment of a forced re-index of the unchanged tree.
struct IndexAnswers {
    std::map<std::string, std::vector<Symbol>> symbols; // by file
    std::map<std::string, std::vector<Reference>> references;
    std::map<std::string, std::vector<uint64_t>> resolved; // name -> sorted USRs
    std::map<uint64_t, std::string> occurrences;
    std::map<uint64_t, std::string> referenceHits;
    std::map<std::string, std::vector<std::tuple<uint64_t, int, uint32_t>>> found;

    static std::vector<uint64_t> sorted(std::vector<uint64_t> v) {
        std::sort(v.begin(), v.end());
        return v;
    }

    explicit IndexAnswers(const SymbolStore& store) {
        std::vector<std::string> paths;
        store.forEachFile([&](uint32_t, const FileRecord& f) { paths.push_back(f.path); });
        for (const std::string& p : paths) {
            symbols[p] = store.fileSymbols(p).value();
            references[p] = store.fileReferences(p).value();
            for (const Symbol& s : symbols[p])
                for (const std::string& name : {s.name, s.qualifiedName})
                    if (!name.empty())
                        resolved[name] = sorted(store.resolveName(name));
        }
        for (const auto& [name, usrs] : resolved)
            for (uint64_t usr : usrs) {
                occurrences[usr] = describe(store.occurrences(usr));
                referenceHits[usr] = describe(store.references(usr));
            }
        for (const char* pattern : {"geo", "area", "s", "geo::Circle"})
            found[pattern] = describe(store.findSymbols(pattern, 1000));
    }

    /// Asks every question once more and records the answers that differ.
    void check(const SymbolStore& store, Failures& failures, const std::string& who) const {
        for (const auto& [path, expected] : symbols) {
            auto actual = store.fileSymbols(path);
            if (!actual || *actual != expected)
                failures.add(who + ": fileSymbols(" + path +
                             "): " + (actual ? std::to_string(actual->size()) : "no") +
                             " symbols, not " + std::to_string(expected.size()));
        }
        for (const auto& [path, expected] : references) {
            auto actual = store.fileReferences(path);
            if (!actual || *actual != expected)
                failures.add(who + ": fileReferences(" + path +
                             "): " + (actual ? std::to_string(actual->size()) : "no") +
                             " references, not " + std::to_string(expected.size()));
        }
        for (const auto& [name, expected] : resolved) {
            auto actual = sorted(store.resolveName(name));
            if (actual != expected)
                failures.add(who + ": resolveName(" + name + "): " + std::to_string(actual.size()) +
                             " USRs, not " + std::to_string(expected.size()));
        }
        for (const auto& [usr, expected] : occurrences) {
            std::string actual = describe(store.occurrences(usr));
            if (actual != expected)
                failures.add(who + ": occurrences:\n" + actual + "instead of\n" + expected);
        }
        for (const auto& [usr, expected] : referenceHits) {
            std::string actual = describe(store.references(usr));
            if (actual != expected)
                failures.add(who + ": references:\n" + actual + "instead of\n" + expected);
        }
        for (const auto& [pattern, expected] : found)
            if (describe(store.findSymbols(pattern, 1000)) != expected)
                failures.add(who + ": findSymbols(" + pattern + ") differs");
    }
};

} // namespace

TEST_CASE("store stress: W writers re-publish overlapping files while R readers query",
          "[store][stress]") {
    const LockMode mode = GENERATE(LockMode::PerFile, LockMode::Global);
    INFO("lock mode " << lockModeName(mode));
    StressStore s(mode);
    VersionBoard board;
    Failures failures;

    std::latch start(kWriters + kReaders);
    std::vector<std::thread> writers, readers;
    for (int r = 0; r < kReaders; ++r)
        readers.push_back(spawn(failures, "reader " + std::to_string(r), [&, r] {
            start.arrive_and_wait();
            readerLoop(s, board, failures, r);
        }));
    for (int w = 0; w < kWriters; ++w)
        writers.push_back(spawn(failures, "writer " + std::to_string(w), [&, w] {
            start.arrive_and_wait();
            writerLoop(s, board, failures, w);
        }));
    for (std::thread& t : writers)
        t.join();
    board.writersDone.store(true, std::memory_order_release);
    for (std::thread& t : readers)
        t.join();
    INFO(failures.report());
    CHECK(failures.count() == 0);
    CHECK(board.stagedPasses.load() > 0); // the queries did meet files not committed yet

    s.store->flush();
    CHECK(s.store->stagedFiles() == 0);
    // Small batches: at most 11 files, 3 TUs, each (with 3.5 files a TU on average).
    CHECK(s.store->commitStats().commits >= uint64_t(kWriters * kPublishesPerWriter / 3));

    // Every file holds its last version, and nothing of the versions before it is left.
    std::vector<uint64_t> finalVersion(kFiles);
    for (int f = 0; f < kFiles; ++f) {
        const uint64_t v = finalVersion[size_t(f)] = board.assigned[size_t(f)].load();
        CHECK(board.published[size_t(f)].load() == v);
        const std::string& path = s.paths[size_t(f)];
        if (v == 0) {
            CHECK_FALSE(s.store->file(path));
            continue;
        }
        const IndexedFile expected = fileVersion(path, f, v);
        CHECK(s.store->fileSymbols(path) == expected.symbols);
        CHECK(s.store->fileReferences(path) == expected.references);
        std::optional<FileRecord> record = s.store->file(path);
        REQUIRE(record);
        CHECK(record->ownerFileId != 0); // the TU that published it, once committed
        record->ownerFileId = 0;
        CHECK(record == expected.file);
        CHECK(s.store->occurrences(hash64(stableUsr(f))).size() == 1);
        size_t stale = 0;
        for (uint64_t old = 1; old < v; ++old)
            stale += s.store->occurrences(hash64(versionUsr(f, old, 0))).size() +
                     s.store->references(hash64(versionUsr(f, old, 0))).size();
        CHECK(stale == 0);
    }

    // The same store, built single-threaded from each published TU at its files' last versions.
    auto reference = s.open("reference");
    for (int t = 0; t < kMainFiles; ++t) {
        if (!board.tuPublished[size_t(t)].load())
            continue;
        std::vector<uint64_t> versions;
        for (int f : s.tus[size_t(t)])
            versions.push_back(finalVersion[size_t(f)]);
        reference->publish(s.makeTu(t, versions));
    }
    reference->flush();
    // Several TUs publish the same version of a shared file here, in an order the threads decide:
    // which of them the store names as its owner is not what this test checks.
    auto withoutOwners = [](std::string dump) {
        for (size_t at = dump.find(" owner "); at != std::string::npos;
             at = dump.find(" owner ", at))
            dump.erase(at, dump.find('\n', at) - at);
        return dump;
    };
    CHECK(withoutOwners(dumpOf(*s.store, s.dir.path())) ==
          withoutOwners(dumpOf(*reference, s.dir.path())));
    const StoreStats got = s.store->stats(), want = reference->stats();
    CHECK(got.files == want.files);
    CHECK(got.tus == want.tus);
    CHECK(got.symbols == want.symbols);
    CHECK(got.references == want.references);
    CHECK(got.distinctNames == want.distinctNames); // no names-index entry of an old version left
}

TEST_CASE("index stress: re-indexing the fixture tree with 4 threads while readers query",
          "[index][stress]") {
    const LockMode mode = GENERATE(LockMode::PerFile, LockMode::Global);
    INFO("lock mode " << lockModeName(mode));
    GoldenTree tree(mode);
    IndexSummary first = tree.index(1, false);
    REQUIRE(first.tusParsed == 4);
    const std::string expectedDump = dumpOf(*tree.store, tree.dir.path());
    const IndexAnswers answers(*tree.store);
    REQUIRE(answers.symbols.size() == 5);
    REQUIRE(answers.resolved.size() > 40);

    Failures failures;
    std::atomic<bool> indexingDone{false};
    std::latch start(kReaders + 1);
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r)
        readers.push_back(spawn(failures, "reader " + std::to_string(r), [&, r] {
            start.arrive_and_wait();
            Pacer pacer(mode);
            do {
                answers.check(*tree.store, failures, "reader " + std::to_string(r));
                pacer.passDone();
            } while (!indexingDone.load(std::memory_order_acquire));
        }));
    start.arrive_and_wait();
    std::vector<IndexSummary> runs;
    try {
        for (int run = 0; run < kReindexRuns; ++run)
            runs.push_back(tree.index(4, true));
    } catch (...) {
        indexingDone = true;
        for (std::thread& t : readers)
            t.join();
        throw;
    }
    indexingDone.store(true, std::memory_order_release);
    for (std::thread& t : readers)
        t.join();

    INFO(failures.report());
    CHECK(failures.count() == 0);
    for (const IndexSummary& run : runs) {
        CHECK(run.tusParsed == 4);
        CHECK(run.tusFailed == 0);
        CHECK(run.filesExtracted >= 5);
        CHECK(run.filesRemoved == 0);
    }
    CHECK(tree.store->stagedFiles() == 0);
    CHECK(dumpOf(*tree.store, tree.dir.path()) == expectedDump);
    Failures after;
    answers.check(*tree.store, after, "after the runs");
    INFO(after.report());
    CHECK(after.count() == 0);
}
