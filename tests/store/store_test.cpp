#include "store/encoding.h"
#include "store/latency_histogram.h"
#include "store/lmdb.h"
#include "store/lmdb_layout.h"
#include "store/memory_store.h"
#include "store/outline.h"
#include "store/page_cache.h"
#include "store/ref_blocks.h"
#include "store/store_check.h"
#include "store/store_dump.h"
#include "store/symbol_blocks.h"
#include "store/symbol_store.h"
#include "store/zstd_frame.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <linux/magic.h>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <thread>
#include <unistd.h>

using namespace symdex;
using symdex::test::TempDir;

namespace {

Symbol makeSymbol(const std::string& qualified, SymbolKind kind, uint32_t line, bool definition) {
    Symbol s;
    s.qualifiedName = qualified;
    s.name =
        qualified.substr(qualified.rfind(':') == std::string::npos ? 0 : qualified.rfind(':') + 1);
    s.usr = "c:@" + qualified;
    s.kind = kind;
    s.flags = definition ? kDefinition : 0;
    s.location = {line, 5};
    s.extent = {{line, 1}, {line, 30}};
    return s;
}

Reference makeRef(const std::string& qualified, uint32_t line) {
    return Reference{hash64("c:@" + qualified), {line, 9}, kRoleCall};
}

IndexedFile makeFile(const std::string& path, uint64_t hash, std::vector<Symbol> symbols,
                     std::vector<Reference> refs) {
    IndexedFile f;
    f.file.path = path;
    f.file.contentHash = hash;
    f.file.size = 100;
    f.symbols = std::move(symbols);
    f.references = std::move(refs);
    return f;
}

IndexedTu makeTu(const std::string& main, std::vector<IndexedFile> files,
                 std::vector<std::string> includes = {}) {
    IndexedTu tu;
    tu.mainFile = main;
    tu.record.commandHash = 1;
    tu.includedFiles = std::move(includes);
    tu.files = std::move(files);
    return tu;
}

std::unique_ptr<SymbolStore> openStore(const TempDir& dir, size_t mapSize = size_t(64) << 20) {
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = mapSize;
    return SymbolStore::open(options);
}

size_t countNames(const SymbolStore& store, const std::string& pattern) {
    return store.findSymbols(pattern, 1000).size();
}

/// Declarations of made-up words, as a tree the built-in dictionary of declaration blocks
/// (LevelDB's and fmtlib's) never saw: a dictionary of the store's own compresses them better.
/// `count` files of 400, their names and signatures varied by `round`.
std::vector<IndexedTu> unfamiliarFiles(uint32_t round, uint32_t count) {
    auto word = [](uint32_t n) {
        static const char* const syllables[] = {"zor",  "quen", "blax", "wib",  "fron", "tesh",
                                                "mool", "grap", "yond", "kriv", "ulb",  "snee"};
        std::string out;
        for (int i = 0; i < 3; ++i, n /= 12)
            out += syllables[n % 12];
        return out;
    };
    std::vector<IndexedTu> tus;
    for (uint32_t f = 0; f < count; ++f) {
        const std::string path = "/p/" + word(f) + ".cc";
        std::vector<Symbol> symbols;
        for (uint32_t i = 0; i < 400; ++i) {
            const std::string qualified = word(f) + "::" + word(f * 7 + i / 16) +
                                          "::" + word(i * 13 + round) + "Of" + word(i);
            Symbol s = makeSymbol(qualified, SymbolKind::Method, 1 + 3 * i, i % 2 == 0);
            s.signature =
                "void " + word(i * 13 + round) + "(" + word(i + 5) + " *" + word(i + 9) + ") const";
            s.comment = "Returns the " + word(i * 3) + " of the " + word(i + f) + ".";
            symbols.push_back(std::move(s));
        }
        tus.push_back(makeTu(path, {makeFile(path, round, symbols, {})}));
    }
    return tus;
}

std::string dumpOf(const Store& store) {
    std::ostringstream out;
    dumpStore(store, out);
    return out.str();
}

} // namespace

TEST_CASE("published symbols and references can be queried", "[store]") {
    TempDir dir;
    auto store = openStore(dir);
    store->publish(makeTu("/p/a.cc",
                          {makeFile("/p/a.cc", 11,
                                    {makeSymbol("ns::run", SymbolKind::Function, 3, true),
                                     makeSymbol("ns::Runner", SymbolKind::Class, 10, true)},
                                    {makeRef("ns::helper", 4), makeRef("ns::helper", 5)}),
                           makeFile("/p/a.h", 12,
                                    {makeSymbol("ns::run", SymbolKind::Function, 1, false),
                                     makeSymbol("ns::helper", SymbolKind::Function, 2, true)},
                                    {})},
                          {"/p/a.cc", "/p/a.h"}));
    store->flush();

    auto run = store->resolveName("ns::run");
    REQUIRE(run.size() == 1);
    auto hits = store->occurrences(run[0]);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].path == "/p/a.cc");
    CHECK(hits[0].symbol.isDefinition());
    CHECK(hits[1].path == "/p/a.h");
    CHECK(store->resolveName("run") == run);
    CHECK(store->resolveName("RUN") == run); // case-insensitive fallback
    CHECK(store->resolveName("other::run").empty());

    auto refs = store->references(hash64("c:@ns::helper"));
    REQUIRE(refs.size() == 2);
    CHECK(refs[0].path == "/p/a.cc");
    CHECK(refs[0].reference.location.line == 4);
    CHECK(refs[1].reference.location.line == 5);

    // Ranking: exact name, then prefix, then substring.
    auto found = store->findSymbols("run", 10);
    REQUIRE(found.size() == 2);
    CHECK(found[0].rank == MatchRank::Exact);
    CHECK(found[0].best.symbol.qualifiedName == "ns::run");
    CHECK(found[0].best.symbol.isDefinition()); // the definition is preferred
    CHECK(found[0].occurrences == 2);
    CHECK(found[1].rank == MatchRank::Prefix);
    CHECK(found[1].best.symbol.qualifiedName == "ns::Runner");
    auto sub = store->findSymbols("elp", 10);
    REQUIRE(sub.size() == 1);
    CHECK(sub[0].rank == MatchRank::Substring);
    CHECK(store->findSymbols("ns::r", 10).size() == 2);
    CHECK(store->findSymbols("zz::r", 10).empty());
    CHECK(store->findSymbols("run", 1).size() == 1); // limit

    auto tu = store->tu("/p/a.cc");
    REQUIRE(tu);
    REQUIRE(tu->fileIds.size() == 2);
    auto file = store->file("/p/a.h");
    REQUIRE(file);
    CHECK(file->contentHash == 12);
    CHECK(file->symbolCount == 2);
}

TEST_CASE("a declaration block whose first rows a lookup expanded still answers every row",
          "[store]") {
    // A lookup by USR or name expands a block's rows up to the one it shows and keeps them; a
    // later row of the block, and the whole file, are then read in full.
    TempDir dir;
    auto store = openStore(dir);
    std::vector<Symbol> symbols;
    for (uint32_t i = 0; i < 20; ++i)
        symbols.push_back(makeSymbol("s" + std::to_string(i), SymbolKind::Function, 1 + i, true));
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, symbols, {})}));
    store->flush();
    auto snapshot = store->snapshot();
    for (uint32_t i : {3u, 1u, 12u, 15u, 17u, 0u}) {
        INFO("s" << i);
        auto found = snapshot.occurrences(hash64("c:@s" + std::to_string(i)));
        REQUIRE(found.size() == 1);
        CHECK(found[0].symbol.name == "s" + std::to_string(i));
        CHECK(found[0].symbol.location.line == 1 + i);
    }
    auto all = snapshot.fileSymbols("/p/a.cc");
    REQUIRE(all);
    REQUIRE(all->size() == 20);
    for (uint32_t i = 0; i < 20; ++i)
        CHECK((*all)[i].name == "s" + std::to_string(i));
    CHECK(snapshot.findSymbols("s14", 10).at(0).best.symbol.location.line == 15);
}

TEST_CASE("re-indexing a file replaces its symbols and references", "[store]") {
    TempDir dir;
    auto store = openStore(dir);
    store->publish(
        makeTu("/p/a.cc", {makeFile("/p/a.cc", 1,
                                    {makeSymbol("oldName", SymbolKind::Function, 1, true),
                                     makeSymbol("kept", SymbolKind::Variable, 2, true)},
                                    {makeRef("target", 3)})}));
    store->flush();
    REQUIRE(countNames(*store, "oldName") == 1);

    store->publish(
        makeTu("/p/a.cc", {makeFile("/p/a.cc", 2,
                                    {makeSymbol("kept", SymbolKind::Variable, 7, true),
                                     makeSymbol("newName", SymbolKind::Function, 8, true)},
                                    {makeRef("target", 9)})}));
    store->flush();

    CHECK(countNames(*store, "oldName") == 0);
    CHECK(store->occurrences(hash64("c:@oldName")).empty());
    auto kept = store->occurrences(hash64("c:@kept"));
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].symbol.location.line == 7);
    auto refs = store->references(hash64("c:@target"));
    REQUIRE(refs.size() == 1);
    CHECK(refs[0].reference.location.line == 9);
    auto symbols = store->fileSymbols("/p/a.cc");
    REQUIRE(symbols);
    REQUIRE(symbols->size() == 2);
    CHECK((*symbols)[1].name == "newName");
    StoreStats st = store->stats();
    CHECK(st.symbols == 2);
    CHECK(st.references == 1);
    CHECK(st.distinctNames == 2);
    CHECK(store->file("/p/a.cc")->contentHash == 2);
}

TEST_CASE("a file's references in many blocks answer by symbol and by lines, and are replaced "
          "whole",
          "[store]") {
    // 1,000 references, several per line, to 7 targets, most inside one of 3 containers: more
    // than one block of kRefsPerBlock, so lookups cross block boundaries.
    auto makeRefs = [](uint32_t targets, uint32_t lineStep) {
        std::vector<Reference> refs;
        for (uint32_t i = 0; i < 1000; ++i) {
            Reference ref = makeRef("t" + std::to_string(i % targets), 1 + (i / 3) * lineStep);
            ref.location.column = 1 + i % 3 * 10;
            ref.container = i % 4 ? hash64("c:@f" + std::to_string(i % 3)) : 0;
            ref.roles = uint16_t(i % 5 ? kRoleCall : kRoleReference | kRoleWrite);
            refs.push_back(ref);
        }
        return refs;
    };
    TempDir dir;
    auto store = openStore(dir);
    const std::vector<Reference> first = makeRefs(7, 1);
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, {}, first)}));
    store->flush();

    REQUIRE(store->fileReferences("/p/a.cc") == first);
    for (uint32_t t = 0; t < 7; ++t) {
        std::vector<Reference> expected;
        for (const Reference& ref : first)
            if (ref.usrHash == hash64("c:@t" + std::to_string(t)))
                expected.push_back(ref);
        std::vector<Reference> found;
        for (const ReferenceHit& hit : store->references(hash64("c:@t" + std::to_string(t))))
            found.push_back(hit.reference);
        CHECK(found == expected);
    }
    for (auto [from, to] : {std::pair(1u, 1u), {42u, 43u}, {128u, 300u}, {333u, 400u}}) {
        std::vector<Reference> expected;
        for (const Reference& ref : first)
            if (ref.location.line >= from && ref.location.line <= to)
                expected.push_back(ref);
        INFO("lines " << from << "-" << to);
        CHECK(store->snapshot().fileReferencesInLines("/p/a.cc", from, to) == expected);
    }

    // Again with 2 targets on every other line: t2..t6 lose every reference.
    const std::vector<Reference> second = makeRefs(2, 2);
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 2, {}, second)}));
    store->flush();
    CHECK(store->fileReferences("/p/a.cc") == second);
    CHECK(store->references(hash64("c:@t0")).size() == 500);
    for (uint32_t t = 2; t < 7; ++t)
        CHECK(store->references(hash64("c:@t" + std::to_string(t))).empty());
    CHECK(store->stats().references == 1000);
    CHECK(store->snapshot().fileReferencesInLines("/p/a.cc", 2, 2) == std::vector<Reference>{});
}

TEST_CASE("a reference block kept decoded answers with its file's current table: a re-index "
          "that leaves the block's bytes alike but renames what it points at is seen",
          "[store]") {
    // One reference at the same place, to x and then to y: the block's bytes (table index 0,
    // line, column, roles) are the same; only the file's table says which USR index 0 is.
    TempDir dir;
    auto store = openStore(dir);
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, {}, {makeRef("x", 3)})}));
    store->flush();
    const std::vector<Reference> toX = {makeRef("x", 3)};
    CHECK(store->snapshot().fileReferencesInLines("/p/a.cc", 3, 3) == toX); // decoded, and kept
    CHECK(store->snapshot().fileReferencesInLines("/p/a.cc", 3, 3) == toX); // from what was kept
    const StoreSnapshot before = store->snapshot();
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 2, {}, {makeRef("y", 3)})}));
    store->flush();
    const std::vector<Reference> toY = {makeRef("y", 3)};
    CHECK(store->snapshot().fileReferencesInLines("/p/a.cc", 3, 3) == toY);
    CHECK(before.fileReferencesInLines("/p/a.cc", 3, 3) == toX);
    CHECK(store->references(hash64("c:@x")).empty());
    CHECK(store->references(hash64("c:@y")).size() == 1);
}

TEST_CASE("USRs sharing a usrs bucket keep their own declarations and references, through "
          "re-indexing",
          "[store]") {
    // 6,000 USRs over 2^16 buckets: 291 buckets hold two or more, and the rows holding runs
    // of buckets are cut as they grow and joined as they shrink.
    constexpr uint32_t kCount = 6000;
    auto symbols = [](uint32_t step) {
        std::vector<Symbol> out;
        for (uint32_t i = 0; i < kCount; i += step)
            out.push_back(makeSymbol("s" + std::to_string(i), SymbolKind::Function, i + 1, true));
        return out;
    };
    auto refs = [](uint32_t step) {
        std::vector<Reference> out;
        for (uint32_t i = 0; i < kCount; i += step)
            out.push_back(makeRef("s" + std::to_string(i), i + 1));
        return out;
    };
    TempDir dir;
    auto store = openStore(dir);
    auto check = [&](uint32_t step) {
        for (uint32_t i = 0; i < kCount; ++i) {
            const uint64_t usr = hash64("c:@s" + std::to_string(i));
            const size_t expected = i % step == 0 ? 1 : 0;
            INFO("s" << i);
            REQUIRE(store->occurrences(usr).size() == expected);
            const std::vector<ReferenceHit> found = store->references(usr);
            REQUIRE(found.size() == expected);
            if (expected) {
                CHECK(found[0].path == "/p/b.cc");
                CHECK(found[0].reference.location.line == i + 1);
            }
        }
    };
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, symbols(1), {})}));
    store->publish(makeTu("/p/b.cc", {makeFile("/p/b.cc", 1, {}, refs(1))}));
    store->flush();
    check(1);
    {
        std::set<uint32_t> buckets;
        for (uint32_t i = 0; i < kCount; ++i)
            buckets.insert(usrBucketOf(hash64("c:@s" + std::to_string(i))));
        REQUIRE(buckets.size() < kCount); // some bucket holds more than one of them
    }
    // The table as rows keyed by their first bucket: the first keyed 0, each decoding with its
    // key, holding only buckets before the next row's, and no bigger than kUsrRunSplit unless it
    // holds one bucket. Returns the number of rows.
    auto checkRows = [&] {
        auto env = lmdb::Env::open(dir.path() / "store", size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, true);
        lmdb::Cursor cursor(txn, txn.openDb("usrs", 0));
        std::vector<std::pair<uint32_t, std::vector<UsrRunRow>>> runs;
        std::string_view k, v;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
            const std::optional<uint32_t> first = usrRunBucket(k);
            REQUIRE(first);
            std::vector<UsrRunRow> rows;
            REQUIRE(decodeUsrRun(v, *first, rows));
            REQUIRE(!rows.empty());
            CHECK((usrBucketOf(rows.front().hash) == usrBucketOf(rows.back().hash) ||
                   v.size() <= kUsrRunSplit));
            runs.emplace_back(*first, std::move(rows));
        }
        REQUIRE(!runs.empty());
        CHECK(runs.front().first == 0);
        for (size_t i = 0; i + 1 < runs.size(); ++i)
            CHECK(usrBucketOf(runs[i].second.back().hash) < runs[i + 1].first);
        return runs.size();
    };
    // 6,000 USRs of about 14 bytes each: some 170 rows.
    const size_t full = checkRows();
    CHECK(full > 100);
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 2, symbols(3), {})}));
    store->publish(makeTu("/p/b.cc", {makeFile("/p/b.cc", 2, {}, refs(3))}));
    store->flush();
    check(3);
    checkRows();
    // A tenth left: rows shrink under kUsrRunJoin and join the row before.
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 3, symbols(10), {})}));
    store->publish(makeTu("/p/b.cc", {makeFile("/p/b.cc", 3, {}, refs(10))}));
    store->flush();
    check(10);
    const size_t shrunk = checkRows();
    INFO(full << " rows, then " << shrunk);
    CHECK(shrunk < full / 3);
    // And all of them again: the rows cut as they grow.
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 4, symbols(1), {})}));
    store->publish(makeTu("/p/b.cc", {makeFile("/p/b.cc", 4, {}, refs(1))}));
    store->flush();
    check(1);
    CHECK(checkRows() > 100);
}

TEST_CASE("the usrs index marks the files where a class is a base or a method overridden, and "
          "re-indexing moves the mark",
          "[store][relations]") {
    // a.cc: class Derived : Base, and a call to helper(); b.cc only uses Base. Then a.cc derives
    // from Other instead and calls Base(): Base's entry for a.cc must lose its mark and Other's
    // gain one, leaving the usrs table as a fresh store writes it.
    const uint64_t base = hash64("c:@Base"), other = hash64("c:@Other");
    const uint64_t derived = hash64("c:@Derived"), helper = hash64("c:@helper");
    auto a = [&](uint64_t parent, uint64_t called, uint64_t hash) {
        return makeFile("/p/a.cc", hash,
                        {makeSymbol("Derived", SymbolKind::Class, 5, true),
                         makeSymbol("Derived::run", SymbolKind::Method, 6, true)},
                        {Reference{parent, {5, 17}, kRoleReference | kRoleBase, derived},
                         Reference{called, {7, 9}, kRoleCall, hash64("c:@Derived::run")}});
    };
    const IndexedFile b = makeFile("/p/b.cc", 1, {makeSymbol("Base", SymbolKind::Class, 1, true)},
                                   {Reference{base, {9, 3}, kRoleReference, 0}});
    auto derivedOf = [](const SymbolStore& store, uint64_t usr) {
        std::vector<uint64_t> out;
        for (const Related& r : store.snapshot().related(usr, Relation::Derived))
            out.push_back(r.usrHash);
        return out;
    };
    auto usrsTable = [](const std::filesystem::path& directory) {
        auto env = lmdb::Env::open(directory, size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, true);
        lmdb::Cursor cursor(txn, txn.openDb("usrs", 0));
        std::string rows;
        std::string_view k, v;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v))
            rows.append(k).append(v);
        return rows;
    };

    TempDir dir, fresh;
    std::string reindexed;
    {
        auto store = openStore(dir);
        store->publish(makeTu("/p/b.cc", {b}));
        store->publish(makeTu("/p/a.cc", {a(base, helper, 1)}));
        store->flush();
        CHECK(derivedOf(*store, base) == std::vector{derived});
        CHECK(derivedOf(*store, other).empty());

        store->publish(makeTu("/p/a.cc", {a(other, base, 2)}));
        store->flush();
        CHECK(derivedOf(*store, base).empty());
        CHECK(derivedOf(*store, other) == std::vector{derived});
        CHECK(store->references(base).size() == 2); // the call in a.cc and the use in b.cc
        CHECK(store->references(helper).empty());
    }
    reindexed = usrsTable(dir.path() / "store");
    {
        auto store = openStore(fresh);
        store->publish(makeTu("/p/b.cc", {b}));
        store->publish(makeTu("/p/a.cc", {a(other, base, 2)}));
        store->flush();
    }
    CHECK(usrsTable(fresh.path() / "store") == reindexed);
}

TEST_CASE("compaction rewrites the file smaller, every answer the same, and writing goes on",
          "[store][compact]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    options.batchMaxFiles = 4; // many commits, as a cold index makes: free pages behind them
    auto store = SymbolStore::open(options);
    auto publishAll = [&](uint64_t version) {
        for (int f = 0; f < 200; ++f) {
            const std::string path = "/p/f" + std::to_string(f) + ".cc";
            std::vector<Symbol> symbols;
            std::vector<Reference> refs;
            for (uint32_t i = 0; i < 40; ++i) {
                const std::string name = "ns::fn" + std::to_string(f) + "_" + std::to_string(i);
                symbols.push_back(makeSymbol(name, SymbolKind::Function, 1 + 2 * i, true));
                refs.push_back(makeRef(
                    "ns::fn" + std::to_string((f + 1) % 200) + "_" + std::to_string(i), 2 + 2 * i));
            }
            store->publish(makeTu(path, {makeFile(path, version, symbols, refs)}));
        }
        store->flush();
    };
    publishAll(1);
    publishAll(2);
    auto dump = [&] {
        std::ostringstream out;
        dumpStore(*store, out);
        return out.str();
    };
    const std::string before = dump();

    CHECK_FALSE(store->compact(1.0).compacted); // less than all of it is free
    const CompactStats stats = store->compact(0.0);
    REQUIRE(stats.compacted);
    CHECK(stats.freePages > 0);
    CHECK(stats.bytesAfter < stats.bytesBefore);
    CHECK(std::filesystem::file_size(options.directory / "data.mdb") == stats.bytesAfter);
    CHECK_FALSE(std::filesystem::exists(options.directory / "compact.tmp"));
    CHECK(dump() == before);
    // The copy left no free pages (one transaction for this store's ~17,000 entries).
    CHECK(store->compact(1.0).freePages == 0);

    // The writer runs again, on the new file.
    store->publish(
        makeTu("/p/new.cc",
               {makeFile("/p/new.cc", 3, {makeSymbol("ns::fresh", SymbolKind::Function, 1, true)},
                         {makeRef("ns::fn0_0", 2)})}));
    store->flush();
    CHECK(store->resolveName("ns::fresh").size() == 1);
    CHECK(store->references(hash64("c:@ns::fn0_0")).size() == 2);

    // Reopened: the same contents, and no walk of the file: the stamp names the new file.
    const std::string after = dump();
    store.reset();
    std::ifstream stamp(options.directory / "verified");
    std::string inode, size, mtime, ctime;
    size_t txnId = 0;
    REQUIRE(stamp >> inode >> size >> mtime >> ctime >> txnId);
    CHECK(verifiedStampMatches(options.directory, txnId));
    options.readOnly = true;
    auto reader = SymbolStore::open(options);
    std::ostringstream out;
    dumpStore(*reader, out);
    CHECK(out.str() == after);
}

namespace {

/// The `symbols` blocks of the store in `directory` by the dictionary they name: the built-in
/// one's, and others.
std::pair<size_t, size_t> blocksByDictionary(const std::filesystem::path& directory) {
    auto env = lmdb::Env::open(directory, size_t(64) << 20, 16, 16, 0);
    lmdb::Txn txn = lmdb::Txn::begin(env, true);
    lmdb::Cursor cursor(txn, txn.openDb("symbols", 0));
    std::pair<size_t, size_t> builtInAndOwn{0, 0};
    std::string_view k, v;
    for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v))
        ++(symbolBlockDictionaryId(v) == ZstdDictionary::builtInSymbols().id()
               ? builtInAndOwn.first
               : builtInAndOwn.second);
    return builtInAndOwn;
}

} // namespace

TEST_CASE("a store trains a dictionary of its own once it holds enough declarations unlike the "
          "built-in dictionary's, and every block reads back through it, after reopening too",
          "[store][dictionary]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    options.batchMaxFiles = 4;
    MemoryStore memory;
    auto store = SymbolStore::open(options);
    auto publish = [&](std::vector<IndexedTu> tus) {
        for (IndexedTu& tu : tus) {
            memory.publish(tu);
            store->publish(std::move(tu));
        }
        memory.flush();
        store->flush();
    };
    auto blocks = [&] { return blocksByDictionary(options.directory); };

    publish(unfamiliarFiles(1, 2)); // 800 declarations: too few to train on
    CHECK_FALSE(store->snapshot().metaValue("symbolDictionary"));
    publish(unfamiliarFiles(1, 40)); // 16,000: about 2.7 MiB of plain blocks
    const std::optional<std::string> own = store->snapshot().metaValue("symbolDictionary");
    REQUIRE(own);
    REQUIRE(ZstdDictionary::fromBytes(*own));
    CHECK(ZstdDictionary::fromBytes(*own)->id() != ZstdDictionary::builtInSymbols().id());
    CHECK(dumpOf(*store) == dumpOf(memory));
    // Written again: every block now compressed against the store's dictionary.
    publish(unfamiliarFiles(2, 40));
    CHECK(blocks() == std::pair<size_t, size_t>{0, 40 * 400 / kSymbolsPerBlock});
    const std::string expected = dumpOf(memory);
    CHECK(dumpOf(*store) == expected);

    // Reopened, and compacted: the same dictionary, the same answers; more files are written
    // against it.
    store.reset();
    store = SymbolStore::open(options);
    CHECK(store->snapshot().metaValue("symbolDictionary") == own);
    CHECK(dumpOf(*store) == expected);
    REQUIRE(store->compact(0.0).compacted);
    CHECK(dumpOf(*store) == expected);
    std::vector<IndexedTu> extra = unfamiliarFiles(3, 41);
    extra.erase(extra.begin(), extra.begin() + 40);
    publish(std::move(extra));
    CHECK(blocks().first == 0);
    CHECK(dumpOf(*store) == dumpOf(memory));
    store.reset();

    // A dictionary that does not load is damage, reported as such, not a store read wrongly.
    {
        auto env = lmdb::Env::open(options.directory, size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, false);
        txn.put(txn.openDb("meta", 0), "symbolDictionary", "not a dictionary");
        txn.commit();
    }
    try {
        SymbolStore::open(options);
        FAIL("a store with a broken dictionary opened");
    } catch (const StoreError& e) {
        CHECK(e.kind() == StoreError::Kind::Damaged);
        CHECK(std::string(e.what()).find("dictionary") != std::string::npos);
    }
}

TEST_CASE("compaction compresses the blocks written before the store's own dictionary against it",
          "[store][dictionary]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    options.batchMaxFiles = 4;
    MemoryStore memory;
    auto store = SymbolStore::open(options);
    for (IndexedTu& tu : unfamiliarFiles(1, 40)) {
        memory.publish(tu);
        store->publish(std::move(tu));
    }
    memory.flush();
    store->flush();
    REQUIRE(store->snapshot().metaValue("symbolDictionary"));
    auto builtInBlocks = [&] { return blocksByDictionary(options.directory).first; };
    const size_t before = builtInBlocks(); // those of the batches before it was trained
    CHECK(before > 100);
    const CompactStats stats = store->compact(0.0);
    REQUIRE(stats.compacted);
    CHECK(stats.recompressedBlocks > before * 9 / 10);
    CHECK(builtInBlocks() == before - stats.recompressedBlocks);
    CHECK(dumpOf(*store) == dumpOf(memory));
    store.reset();
    options.readOnly = true;
    CHECK(dumpOf(*SymbolStore::open(options)) == dumpOf(memory));
}

TEST_CASE("child: another process trains the dictionary of $SYMDEX_DICTIONARY_STORE",
          "[.][dictionary-child]") {
    const char* directory = std::getenv("SYMDEX_DICTIONARY_STORE");
    REQUIRE(directory != nullptr);
    StoreOptions options;
    options.directory = directory;
    options.initialMapSize = size_t(64) << 20;
    options.batchMaxFiles = 4;
    auto store = SymbolStore::open(options);
    for (uint32_t round : {1u, 2u}) {
        for (IndexedTu& tu : unfamiliarFiles(round, 40))
            store->publish(std::move(tu));
        store->flush();
    }
    REQUIRE(store->snapshot().metaValue("symbolDictionary"));
}

TEST_CASE("a reader that opened a store before another process trained its dictionary reads the "
          "blocks compressed against it",
          "[store][dictionary]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    MemoryStore memory;
    {
        auto store = SymbolStore::open(options);
        for (IndexedTu& tu : unfamiliarFiles(1, 1)) {
            memory.publish(tu);
            store->publish(std::move(tu));
        }
        store->flush();
    }
    options.readOnly = true;
    auto reader = SymbolStore::open(options);
    CHECK_FALSE(reader->snapshot().metaValue("symbolDictionary"));
    REQUIRE(test::runChildTest("[dictionary-child]",
                               {"SYMDEX_DICTIONARY_STORE=" + options.directory.string()}) == 0);
    for (uint32_t round : {1u, 2u})
        for (IndexedTu& tu : unfamiliarFiles(round, 40))
            memory.publish(std::move(tu));
    memory.flush();
    CHECK(reader->snapshot().metaValue("symbolDictionary"));
    CHECK(dumpOf(*reader) == dumpOf(memory));
}

TEST_CASE("a reference whose table names a usrs bucket without it is reported as damage, not "
          "answered as another USR",
          "[store][damage]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    {
        auto store = SymbolStore::open(options);
        store->publish(makeTu(
            "/p/a.cc",
            {makeFile("/p/a.cc", 1, {makeSymbol("ns::callee", SymbolKind::Function, 1, true)},
                      {makeRef("ns::callee", 3), makeRef("ns::other", 4)})}));
        store->flush();
        const std::optional<std::vector<Reference>> refs = store->fileReferences("/p/a.cc");
        REQUIRE(refs);
        REQUIRE(refs->size() == 2);
        CHECK((*refs)[0].usrHash == hash64("c:@ns::callee"));
        CHECK((*refs)[1].usrHash == hash64("c:@ns::other"));
        CHECK(store->references(hash64("c:@ns::other")).size() == 1);
    }
    {
        // The table's first target moved to the next bucket, which holds no entry for the file.
        auto env = lmdb::Env::open(options.directory, size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, false);
        const MDB_dbi tables = txn.openDb("refUsrs", 0);
        std::string key, bytes;
        {
            // Closed before the commit, which frees a write transaction's cursors.
            lmdb::Cursor cursor(txn, tables);
            std::string_view k, v;
            REQUIRE(cursor.get(MDB_FIRST, k, v));
            key = k;
            bytes = v;
        }
        const std::optional<UsrTable> table = UsrTable::parse(bytes);
        REQUIRE(table);
        REQUIRE(table->targets() == 2);
        std::vector<uint64_t> usrs;
        for (uint32_t i = 0; i < table->size(); ++i)
            usrs.push_back(i < table->targets()
                               ? uint64_t(table->bucket(i)) << (64 - kUsrBucketBits)
                               : table->container(i));
        usrs[0] = uint64_t((table->bucket(0) + 1) % (1u << kUsrBucketBits))
                  << (64 - kUsrBucketBits);
        txn.put(tables, key, UsrTable::encode(usrs, table->targets()));
        txn.commit();
    }
    options.readOnly = true;
    auto reader = SymbolStore::open(options);
    try {
        reader->fileReferences("/p/a.cc");
        FAIL("a table naming the wrong bucket answered");
    } catch (const StoreError& e) {
        CHECK(e.kind() == StoreError::Kind::Damaged);
    }
    // The reference to the other USR, whose table index is intact, still answers.
    CHECK(reader->references(hash64("c:@ns::other")).size() == 1);
}

TEST_CASE("removing a file drops its rows and index entries", "[store]") {
    TempDir dir;
    auto store = openStore(dir);
    store->publish(
        makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, {makeSymbol("f", SymbolKind::Function, 1, true)},
                                    {makeRef("g", 2)})}));
    store->publish(
        makeTu("/p/b.cc", {makeFile("/p/b.cc", 1, {makeSymbol("g", SymbolKind::Function, 1, true)},
                                    {makeRef("f", 2)})}));
    store->flush();
    StoreEdit edit;
    edit.removeFiles = {"/p/a.cc"};
    store->apply(edit);
    store->flush();
    CHECK_FALSE(store->file("/p/a.cc"));
    CHECK_FALSE(store->tu("/p/a.cc"));
    CHECK_FALSE(store->fileSymbols("/p/a.cc"));
    CHECK(store->occurrences(hash64("c:@f")).empty());
    CHECK(store->references(hash64("c:@g")).empty());
    CHECK(store->references(hash64("c:@f")).size() == 1);
    CHECK(store->stats().files == 1);
}

TEST_CASE("the map grows when full and nothing is lost", "[store]") {
    TempDir dir;
    auto store = openStore(dir, 64 * 1024); // far too small for what follows
    const int files = 40, perFile = 200;
    for (int f = 0; f < files; ++f) {
        std::vector<Symbol> symbols;
        for (int i = 0; i < perFile; ++i)
            symbols.push_back(makeSymbol("sym_" + std::to_string(f) + "_" + std::to_string(i),
                                         SymbolKind::Variable, uint32_t(i + 1), true));
        std::string path = "/p/f" + std::to_string(f) + ".cc";
        store->publish(makeTu(path, {makeFile(path, 1, std::move(symbols), {})}));
    }
    store->flush();
    CHECK(store->commitStats().mapGrowths > 0);
    CHECK(store->stats().symbols == size_t(files * perFile));
    CHECK(store->stats().mapSize > 64 * 1024);
    CHECK(store->resolveName("sym_39_199").size() == 1);
}

/// Publishes files /p/PREFIXf.cc for f in [first, last), each defining 200 variables
/// PREFIX_f_i.
void publishFiles(SymbolStore& store, const std::string& prefix, int first, int last) {
    for (int f = first; f < last; ++f) {
        std::vector<Symbol> symbols;
        for (int i = 0; i < 200; ++i)
            symbols.push_back(makeSymbol(prefix + "_" + std::to_string(f) + "_" + std::to_string(i),
                                         SymbolKind::Variable, uint32_t(i + 1), true));
        std::string path = "/p/" + prefix + std::to_string(f) + ".cc";
        store.publish(makeTu(path, {makeFile(path, 1, std::move(symbols), {})}));
    }
}

/// Fills the store in `directory` (from 64 KiB, so that its map grows) with `files` files.
void fillStore(const std::filesystem::path& directory, int files) {
    StoreOptions options;
    options.directory = directory;
    options.initialMapSize = 64 * 1024;
    auto store = SymbolStore::open(options);
    publishFiles(*store, "grown", 0, files);
    store->flush();
}

/// The share of `file`'s pages the page cache holds (mincore over a read-only mapping).
double residentShare(const std::string& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const size_t size = size_t(std::filesystem::file_size(file));
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    REQUIRE(map != MAP_FAILED);
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((size + page - 1) / page);
    REQUIRE(::mincore(map, size, in.data()) == 0);
    ::munmap(map, size);
    size_t resident = 0;
    for (unsigned char c : in)
        resident += c & 1;
    return double(resident) / double(in.size());
}

/// Bytes of `file` this process has mapped in its page tables (the Rss of its mappings in
/// /proc/self/smaps).
size_t residentBytesOfMapping(const std::filesystem::path& file) {
    std::ifstream smaps("/proc/self/smaps");
    const std::string name = std::filesystem::canonical(file).string();
    size_t kb = 0;
    bool inFile = false;
    for (std::string line; std::getline(smaps, line);) {
        if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
            line.find(' ') != std::string::npos && line.find(':') > line.find(' '))
            inFile = line.size() >= name.size() && line.ends_with(" " + name);
        else if (inFile && line.starts_with("Rss:"))
            kb += std::stoul(line.substr(4));
    }
    return kb * 1024;
}

TEST_CASE("prefaultMap maps what the page cache holds of data.mdb into the process, again after "
          "the map grew",
          "[store]") {
    TempDir dir;
    // 16 MiB: far more than the few large folios the pages a store maps at open keep cached.
    fillStore(dir.path(), 800);
    const std::filesystem::path data = dir.path() / "data.mdb";
    const size_t size = std::filesystem::file_size(data);
    REQUIRE(size > 16 * 1024 * 1024);
    StoreOptions options;
    options.directory = dir.path();
    options.initialMapSize = 64 * 1024;
    auto store = SymbolStore::open(options);
    // Opened, not read: a few pages mapped.
    CHECK(residentBytesOfMapping(data) < size / 2);
    {
        // Out of the page cache (written back first: dirty pages stay; pages a process maps
        // stay, with the rest of their folio): what is left is all it maps.
        const int fd = ::open(data.c_str(), O_RDONLY);
        REQUIRE(fd >= 0);
        CHECK(::fdatasync(fd) == 0);
        CHECK(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
        ::close(fd);
    }
    const double cachedShare = residentShare(data.string());
    INFO("data.mdb " << size << " bytes, " << cachedShare << " of them cached after dropping");
    struct statfs fs {};
    REQUIRE(::statfs(dir.path().c_str(), &fs) == 0);
    if (fs.f_type == TMPFS_MAGIC) {
        // tmpfs pages are the file: nothing leaves the cache, nothing to tell apart here.
        WARN("the store is on tmpfs: cold case not checked");
    } else {
        CHECK(cachedShare < 0.5);
        const size_t fromCold = store->prefaultMap();
        CHECK(double(fromCold) <= cachedShare * double(size) + 4096);
        CHECK(double(residentBytesOfMapping(data)) <= cachedShare * double(size) + 4096);
    }
    // Read through (as PageCacheWarmer does): now all of it, but for what the kernel reclaims
    // before the call under memory pressure (5 pages of 4,941 in a local CI run beside two
    // symdexd under callgrind): compared with what the cache holds just before, as below.
    std::ifstream(data, std::ios::binary).ignore(std::numeric_limits<std::streamsize>::max());
    const double readShare = residentShare(data.string());
    INFO("read through: " << readShare << " of them cached");
    CHECK(readShare > 0.9);
    const size_t warm = store->prefaultMap();
    CHECK(warm <= size);
    CHECK(double(warm) >= readShare * double(size) - 65536);
    CHECK(residentBytesOfMapping(data) + 65536 >= warm);

    // More files: the file and the map grow (remapped), and the new pages are mapped on the
    // next call.
    publishFiles(*store, "more", 800, 1200);
    store->flush();
    CHECK(store->commitStats().mapGrowths > 0);
    const size_t grown = std::filesystem::file_size(data);
    REQUIRE(grown > size);
    // What the cache holds of it, not all of it: under load the kernel may reclaim a page
    // between the commit and the call (one of 7,591 was missing in a TSan run under ctest -j2).
    const double grownShare = residentShare(data.string());
    INFO("grown to " << grown << " bytes, " << grownShare << " of them cached");
    CHECK(grownShare > 0.9);
    const size_t mapped = store->prefaultMap();
    CHECK(mapped > size);
    CHECK(double(mapped) >= grownShare * double(grown) - 65536);
    CHECK(residentBytesOfMapping(data) + 65536 >= mapped);
    CHECK(store->resolveName("more_1199_199").size() == 1);
}

// Run by the next test in a process of its own: LMDB forbids one environment twice in a process.
TEST_CASE("child: another process grows the map of $SYMDEX_GROW_STORE", "[.][grow-child]") {
    const char* directory = std::getenv("SYMDEX_GROW_STORE");
    REQUIRE(directory != nullptr);
    fillStore(directory, 40);
}

TEST_CASE("a reader adopts a map another process grew, once its other queries are done",
          "[store]") {
    TempDir dir;
    const std::filesystem::path storeDir = dir.path() / "store";
    fillStore(storeDir, 1);
    StoreOptions readOnly;
    readOnly.directory = storeDir;
    readOnly.readOnly = true;
    readOnly.initialMapSize = 64 * 1024;
    auto reader = SymbolStore::open(readOnly);
    const size_t mapBefore = reader->stats().mapSize;

    // Thread A stays inside a query (a read transaction on the old map) until told to finish.
    std::mutex mu;
    std::condition_variable changed;
    bool inside = false, finish = false;
    std::vector<std::string> seenByA;
    std::thread a([&] {
        reader->forEachFile([&](uint32_t, const FileRecord& f) {
            std::unique_lock lock(mu);
            inside = true;
            changed.notify_all();
            changed.wait(lock, [&] { return finish; });
            seenByA.push_back(f.path); // the record's memory must still be mapped
        });
    });
    {
        std::unique_lock lock(mu);
        changed.wait(lock, [&] { return inside; });
    }

    // Another process grows the map past this process's mapping.
    REQUIRE(test::runChildTest("[grow-child]", {"SYMDEX_GROW_STORE=" + storeDir.string()}) == 0);

    // Thread B's query must adopt the new size, which it may only do once A's transaction ended.
    std::atomic<bool> bDone{false};
    std::vector<uint64_t> foundByB;
    std::thread b([&] {
        foundByB = reader->resolveName("grown_39_199");
        bDone = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(bDone.load()); // waiting for A, not remapping under it
    {
        std::lock_guard lock(mu);
        finish = true;
    }
    changed.notify_all();
    a.join();
    b.join();
    CHECK(seenByA == std::vector<std::string>{"/p/grown0.cc"});
    CHECK(foundByB.size() == 1);
    CHECK(reader->stats().mapSize > mapBefore);
    CHECK(reader->stats().symbols == 40 * 200);
}

TEST_CASE("a store is reopened with its contents, and a second writer is refused", "[store]") {
    TempDir dir;
    {
        auto store = openStore(dir);
        store->publish(
            makeTu("/p/a.cc",
                   {makeFile("/p/a.cc", 1, {makeSymbol("f", SymbolKind::Function, 1, true)}, {})}));
        store->flush();
        CHECK_THROWS_WITH(openStore(dir), Catch::Contains("another symdex process is writing"));
    }
    {
        // (LMDB forbids opening one environment twice in a process, so readers are checked
        // after the writer closed; other processes read while it writes.)
        StoreOptions readOnly;
        readOnly.directory = dir.path() / "store";
        readOnly.readOnly = true;
        auto reader = SymbolStore::open(readOnly);
        CHECK(reader->resolveName("f").size() == 1);
        CHECK_THROWS_AS(reader->publish(IndexedTu{}), StoreError);
    }
    auto store = openStore(dir);
    CHECK(store->resolveName("f").size() == 1);
}

TEST_CASE("a store of another format version is refused with the rebuild command", "[store]") {
    TempDir dir;
    openStore(dir).reset();
    {
        auto env = lmdb::Env::open(dir.path() / "store", 1 << 20, 8, 16, 0);
        auto txn = lmdb::Txn::begin(env, false);
        MDB_dbi meta = txn.openDb("meta", 0);
        std::string old;
        appendBigEndian(old, kStoreFormatVersion + 1, 4);
        txn.put(meta, "format", old);
        txn.commit();
    }
    CHECK_THROWS_WITH(openStore(dir), Catch::Contains("has format version " +
                                                      std::to_string(kStoreFormatVersion + 1)) &&
                                          Catch::Contains("symdex index --rebuild"));
    try {
        openStore(dir);
    } catch (const StoreError& e) {
        CHECK(e.kind() == StoreError::Kind::WrongVersion);
    }
}

TEST_CASE("a truncated or scribbled store is refused as damaged, a healthy one opens",
          "[store][damage]") {
    TempDir dir;
    {
        auto store = openStore(dir);
        for (int f = 0; f < 20; ++f) {
            std::vector<Symbol> symbols;
            for (uint32_t s = 0; s < 100; ++s)
                symbols.push_back(makeSymbol("f" + std::to_string(f) + "_" + std::to_string(s),
                                             SymbolKind::Function, s + 1, true));
            const std::string path = "/p/f" + std::to_string(f) + ".cc";
            store->publish(makeTu(path, {makeFile(path, 1, std::move(symbols), {})}));
        }
        store->flush();
    }
    const std::filesystem::path data = dir.path() / "store" / "data.mdb";
    const std::string healthy = test::readFile(data);
    auto expectDamaged = [&](const std::string& detail) {
        try {
            openStore(dir);
            FAIL("a damaged store was opened");
        } catch (const StoreError& e) {
            CHECK(e.kind() == StoreError::Kind::Damaged);
            CHECK_THAT(e.what(), Catch::Contains("is damaged") && Catch::Contains(detail) &&
                                     Catch::Contains("symdex index --rebuild --store"));
        }
    };
    SECTION("truncated to half") {
        std::filesystem::resize_file(data, healthy.size() / 2);
        expectDamaged("truncated");
    }
    SECTION("empty") {
        std::filesystem::resize_file(data, 0);
        expectDamaged("data.mdb is empty");
    }
    SECTION("the headers of the leaf pages overwritten") {
        // Leaf pages carry their own number and flag 0x02 (mdb.c, MDB_page); which of them the
        // newest snapshot reaches depends on the layout, so all are overwritten.
        std::string damaged = healthy;
        const size_t pageSize = 4096;
        size_t overwritten = 0;
        for (size_t page = 2; (page + 1) * pageSize <= damaged.size(); ++page) {
            char* header = damaged.data() + page * pageSize;
            uint64_t pgno;
            std::memcpy(&pgno, header, 8);
            if (pgno != page || header[10] != 0x02)
                continue;
            std::memset(header + 12, 0xA5, 4); // lower and upper bounds
            ++overwritten;
        }
        REQUIRE(overwritten > 10);
        test::writeFile(data, damaged);
        expectDamaged("bounds");
    }
    SECTION("a meta page without its magic number") {
        std::string damaged = healthy;
        damaged[16] = 0;
        test::writeFile(data, damaged);
        expectDamaged("magic");
    }
    SECTION("untouched") {
        CHECK(openStore(dir)->stats().symbols == 20 * 100);
    }
}

TEST_CASE("opening a missing store for queries says how to create it", "[store]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "nothing";
    options.readOnly = true;
    CHECK_THROWS_WITH(SymbolStore::open(options), Catch::Contains("run `symdex index` first"));
}

TEST_CASE("outlines nest declarations by extent", "[store]") {
    auto sym = [](const char* name, Range r) {
        Symbol s;
        s.name = name;
        s.extent = r;
        s.location = r.begin;
        return s;
    };
    std::vector<OutlineNode> tree = buildOutline({
        sym("method", {{3, 5}, {3, 20}}),
        sym("ns", {{1, 1}, {10, 1}}),
        sym("after", {{12, 1}, {12, 9}}),
        sym("Class", {{2, 3}, {5, 4}}),
        sym("field", {{4, 5}, {4, 12}}),
    });
    REQUIRE(tree.size() == 2);
    CHECK(tree[0].symbol.name == "ns");
    REQUIRE(tree[0].children.size() == 1);
    CHECK(tree[0].children[0].symbol.name == "Class");
    REQUIRE(tree[0].children[0].children.size() == 2);
    CHECK(tree[0].children[0].children[0].symbol.name == "method");
    CHECK(tree[0].children[0].children[1].symbol.name == "field");
    CHECK(tree[1].symbol.name == "after");
}

TEST_CASE("a published file is visible before its batch commits, and replaces the old one whole",
          "[store][overlay]") {
    const LockMode mode = GENERATE(LockMode::PerFile, LockMode::Global);
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    options.lockMode = mode;
    // The writer holds batches back for a minute: only flush() commits them.
    options.batchMaxDelay = std::chrono::minutes(1);
    options.batchMaxFiles = 1000;
    auto store = SymbolStore::open(options);

    store->publish(
        makeTu("/p/a.cc",
               {makeFile("/p/a.cc", 1, {makeSymbol("ns::oldName", SymbolKind::Function, 3, true)},
                         {makeRef("ns::oldName", 8)})}));
    // Staged, not committed: the LMDB snapshot has nothing yet.
    CHECK(store->stagedFiles() == 1);
    CHECK(store->stats().symbols == 0);
    REQUIRE(store->resolveName("ns::oldName").size() == 1);
    CHECK(store->occurrences(hash64("c:@ns::oldName")).size() == 1);
    CHECK(store->references(hash64("c:@ns::oldName")).size() == 1);
    CHECK(store->fileSymbols("/p/a.cc")->size() == 1);
    CHECK(countNames(*store, "oldname") == 1);
    CHECK(store->file("/p/a.cc")->contentHash == 1);

    store->flush();
    CHECK(store->stagedFiles() == 0);
    CHECK(store->stats().symbols == 1);
    CHECK(store->occurrences(hash64("c:@ns::oldName")).size() == 1);

    // A new version, staged over the committed one: queries see only the new one.
    store->publish(
        makeTu("/p/a.cc", {makeFile("/p/a.cc", 2,
                                    {makeSymbol("ns::newName", SymbolKind::Function, 4, true),
                                     makeSymbol("ns::other", SymbolKind::Class, 9, true)},
                                    {})}));
    CHECK(store->stagedFiles() == 1);
    CHECK(store->resolveName("ns::oldName").empty());
    CHECK(store->occurrences(hash64("c:@ns::oldName")).empty());
    CHECK(store->references(hash64("c:@ns::oldName")).empty());
    CHECK(countNames(*store, "oldname") == 0);
    CHECK(store->occurrences(hash64("c:@ns::newName")).size() == 1);
    CHECK(store->fileSymbols("/p/a.cc")->size() == 2);
    CHECK(store->fileReferences("/p/a.cc")->empty());
    CHECK(store->file("/p/a.cc")->contentHash == 2);
    // What is under a cursor comes from the staged version too, line by line.
    auto namesInLines = [&](uint32_t line) {
        std::vector<std::string> names;
        const std::vector<Symbol> symbols =
            store->snapshot().fileSymbolsInLines("/p/a.cc", line, line).value();
        for (const Symbol& s : symbols)
            names.push_back(s.qualifiedName);
        return names;
    };
    CHECK(namesInLines(3).empty());
    CHECK(namesInLines(4) == std::vector<std::string>{"ns::newName"});
    CHECK(namesInLines(9) == std::vector<std::string>{"ns::other"});
    CHECK(namesInLines(10).empty());
    CHECK(store->snapshot().fileReferencesInLines("/p/a.cc", 8, 8).value().empty());
    size_t files = 0;
    store->forEachFile([&](uint32_t, const FileRecord& f) {
        ++files;
        CHECK(f.contentHash == 2);
    });
    CHECK(files == 1);

    store->flush();
    CHECK(store->stagedFiles() == 0);
    CHECK(store->resolveName("ns::oldName").empty());
    CHECK(store->stats().symbols == 2);
}

TEST_CASE("within a run, the lower priority number wins whatever the publication order",
          "[store][overlay]") {
    TempDir dir;
    auto store = openStore(dir);
    auto header = [](uint32_t priority, const char* name) {
        IndexedFile f =
            makeFile("/p/h.h", priority, {makeSymbol(name, SymbolKind::Function, 1, true)}, {});
        f.priority = priority;
        return f;
    };
    auto tu = [&](const char* main, IndexedFile file) {
        IndexedTu t = makeTu(main, {std::move(file)});
        t.generation = 7;
        return t;
    };
    store->publish(tu("/p/b.cc", header(5, "fromRank4")));
    store->publish(tu("/p/a.cc", header(2, "fromRank1")));
    store->publish(tu("/p/c.cc", header(9, "fromRank8"))); // rejected: rank 1 already has it
    CHECK(store->resolveName("fromRank1").size() == 1);
    CHECK(store->resolveName("fromRank4").empty());
    CHECK(store->resolveName("fromRank8").empty());
    store->flush();
    CHECK(store->resolveName("fromRank1").size() == 1);
    CHECK(store->resolveName("fromRank8").empty());
    CHECK(store->stats().symbols == 1);
}

TEST_CASE("lock telemetry counts the acquisitions of each lock class", "[store][telemetry]") {
    TempDir dir;
    const LockTelemetry before = LockTelemetry::snapshot();
    auto store = openStore(dir);
    store->publish(makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, {}, {})}));
    store->flush();
    // Counters of a thread that has exited are kept.
    std::thread([&] { CHECK(store->fileSymbols("/p/a.cc").has_value()); }).join();
    const LockTelemetry d = LockTelemetry::snapshot() - before;
    CHECK(d[LockClass::FileLocks].acquisitions >= 2); // staged, then unstaged after the commit
    CHECK(d[LockClass::CommitQueue].acquisitions >= 2);
    CHECK(d[LockClass::GlobalLock].acquisitions == 0); // per-file mode
    CHECK(d[LockClass::FileLocks].contended <= d[LockClass::FileLocks].acquisitions);
}

TEST_CASE("latency histogram percentiles are within 1% of the samples", "[latency]") {
    LatencyHistogram h;
    CHECK(h.quantileNs(0.99) == 0);
    for (uint64_t us = 1; us <= 1000; ++us) // 1 us .. 1 ms, uniform
        h.record(us * 1000);
    CHECK(h.count() == 1000);
    CHECK(h.maxNs() == 1'000'000);
    auto near = [](uint64_t got, uint64_t want) {
        return got >= want && double(got) <= double(want) * 1.01;
    };
    CHECK(near(h.quantileNs(0.50), 500'000));
    CHECK(near(h.quantileNs(0.99), 990'000));
    CHECK(h.quantileNs(1.0) == 1'000'000);
    CHECK(h.quantileNs(0.001) <= 1010);

    LatencyHistogram tail;
    tail.record(5'000'000'000); // one 5 s outlier
    h.merge(tail);
    CHECK(h.count() == 1001);
    CHECK(h.maxNs() == 5'000'000'000);
    CHECK(near(h.quantileNs(0.99), 991'000));
    CHECK(h.quantileNs(1.0) == 5'000'000'000);
    LatencyHistogram small;
    for (uint64_t ns : {0, 1, 127, 128, 129})
        small.record(ns);
    CHECK(small.quantileNs(0.2) == 0);
    CHECK(small.quantileNs(0.6) == 127);
    CHECK(small.quantileNs(1.0) == 129);
}

namespace {

/// A tmpfs of `size` mounted on a directory of `dir` while the object lives; mounted() is false
/// where the system does not allow mounting (the tests run as root in CI).
class SmallTmpfs {
public:
    SmallTmpfs(const TempDir& dir, const std::string& size) : path_(dir.path() / "tmpfs") {
        std::filesystem::create_directory(path_);
        mounted_ = std::system(("mount -t tmpfs -o size=" + size + " tmpfs '" + path_.string() +
                                "' 2>/dev/null")
                                   .c_str()) == 0;
    }
    ~SmallTmpfs() {
        if (mounted_ && std::system(("umount '" + path_.string() + "'").c_str()) != 0)
            WARN("could not unmount " << path_);
    }
    bool mounted() const { return mounted_; }
    const std::filesystem::path& path() const { return path_; }

    /// Fills the file system with a file until at most `leave` bytes are free.
    void fill(size_t leave) {
        const std::string chunk(4096, 'x');
        FILE* f = std::fopen((path_ / "filler").c_str(), "ab");
        REQUIRE(f);
        std::setvbuf(f, nullptr, _IONBF, 0);
        while (std::filesystem::space(path_).available > leave + chunk.size())
            if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size())
                break;
        while (std::fwrite(chunk.data(), 1, 1, f) == 1 &&
               std::filesystem::space(path_).available > leave)
            ;
        std::fclose(f);
    }
    void freeSpace() { std::filesystem::remove(path_ / "filler"); }

private:
    std::filesystem::path path_;
    bool mounted_ = false;
};

IndexedTu bigTu(const std::string& path, const std::string& prefix, uint32_t symbols) {
    std::vector<Symbol> rows;
    for (uint32_t s = 0; s < symbols; ++s)
        rows.push_back(makeSymbol(prefix + std::to_string(s), SymbolKind::Function, s + 1, true));
    return makeTu(path, {makeFile(path, 7, std::move(rows), {})});
}

} // namespace

// The disk is a 4 MiB tmpfs, filled by another file: completely (LMDB's write fails with
// ENOSPC), then all but 64 KiB (a write completes in part, which LMDB reports as EIO).
TEST_CASE("a full disk fails the commit with ENOSPC, hides what it did not store, and the next "
          "commit after space is freed succeeds",
          "[store][diskfull]") {
    TempDir dir;
    SmallTmpfs disk(dir, "8m");
    if (!disk.mounted()) {
        WARN("skipped: cannot mount a tmpfs here (mount -t tmpfs needs root)");
        return;
    }
    StoreOptions options;
    options.directory = disk.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    auto store = SymbolStore::open(options);
    store->publish(bigTu("/p/small.cc", "small_", 10));
    store->flush();

    for (size_t leave : {size_t(0), size_t(64) << 10}) {
        INFO("free space left: " << leave << " bytes");
        disk.fill(leave);
        store->publish(bigTu("/p/big.cc", "big_", 20000));
        try {
            store->flush();
            FAIL("the commit succeeded on a full disk");
        } catch (const StoreError& e) {
            CHECK(e.kind() == StoreError::Kind::NoSpace);
            CHECK_THAT(e.what(), Catch::Contains("No space left on device") &&
                                     Catch::Contains(options.directory.string()));
        }
        // What failed to commit is not visible as if stored; what was stored still is.
        CHECK(store->stagedFiles() == 0);
        CHECK_FALSE(store->file("/p/big.cc"));
        CHECK_FALSE(store->tu("/p/big.cc"));
        CHECK(store->resolveName("big_1").empty());
        CHECK(store->resolveName("small_1").size() == 1);

        // Space freed: the next commit succeeds (the failure was reported once, not kept).
        disk.freeSpace();
        store->publish(bigTu("/p/other.cc", "other_", 10));
        REQUIRE_NOTHROW(store->flush());
        CHECK(store->resolveName("other_1").size() == 1);
        StoreEdit removal;
        removal.removeFiles = {"/p/other.cc"};
        store->apply(std::move(removal));
        store->flush();
    }
    store->publish(bigTu("/p/big.cc", "big_", 20000));
    REQUIRE_NOTHROW(store->flush());
    CHECK(store->resolveName("big_19999").size() == 1);
    CHECK(store->tu("/p/big.cc"));
}

TEST_CASE("EIO from LMDB means a full disk only where the file system is nearly full",
          "[store][diskfull]") {
    TempDir dir;
    openStore(dir).reset();
    auto env = lmdb::Env::open(dir.path() / "store", 1 << 20, 8, 16, 0);
    // The temporary directory has room: an I/O error stays one.
    if (std::filesystem::space(dir.path()).available > (size_t(1) << 30))
        CHECK_THROWS_WITH(lmdb::check(EIO, "commit", env.get()),
                          Catch::Contains("Input/output error"));
    CHECK_THROWS_WITH(lmdb::check(ENOSPC, "commit", env.get()),
                      Catch::Contains("No space left on device") &&
                          Catch::Contains((dir.path() / "store").string()));
}

TEST_CASE("a snapshot answers every query from the state it was taken in", "[store][snapshot]") {
    TempDir dir;
    auto store = openStore(dir);
    store->publish(makeTu(
        "/p/a.cc", {makeFile("/p/a.cc", 1, {makeSymbol("first", SymbolKind::Function, 1, true)},
                             {makeRef("first", 2)})}));
    store->flush();
    const StoreSnapshot before = store->snapshot();

    // A new version of a.cc, staged and then committed while the snapshot lives.
    store->publish(makeTu(
        "/p/a.cc", {makeFile("/p/a.cc", 2, {makeSymbol("second", SymbolKind::Function, 5, true)},
                             {makeRef("second", 6)})}));
    store->flush();

    // The snapshot: the old version, whole, from every query.
    CHECK(before.file("/p/a.cc")->contentHash == 1);
    REQUIRE(before.fileSymbols("/p/a.cc"));
    REQUIRE(before.fileSymbols("/p/a.cc")->size() == 1);
    CHECK((*before.fileSymbols("/p/a.cc"))[0].name == "first");
    CHECK(before.fileReferences("/p/a.cc")->at(0).location.line == 2);
    CHECK(before.occurrences(hash64("c:@first")).size() == 1);
    CHECK(before.occurrences(hash64("c:@second")).empty());
    CHECK(before.references(hash64("c:@first")).size() == 1);
    CHECK(before.findSymbols("second", 10).empty());
    CHECK(before.resolveName("first").size() == 1);
    CHECK(before.stats().symbols == 1);

    // The store, and a snapshot taken now: the new version.
    const StoreSnapshot after = store->snapshot();
    CHECK(after.file("/p/a.cc")->contentHash == 2);
    CHECK(after.occurrences(hash64("c:@first")).empty());
    CHECK(after.findSymbols("second", 10).size() == 1);
    CHECK(store->resolveName("second").size() == 1);

    // Staged and not committed: a snapshot taken after the publication sees it, one taken
    // before does not.
    const StoreSnapshot committed = store->snapshot();
    store->publish(
        makeTu("/p/b.cc",
               {makeFile("/p/b.cc", 3, {makeSymbol("third", SymbolKind::Function, 1, true)}, {})}));
    const StoreSnapshot staged = store->snapshot();
    CHECK(staged.findSymbols("third", 10).size() == 1);
    CHECK(staged.file("/p/b.cc"));
    CHECK(committed.findSymbols("third", 10).empty());
    CHECK_FALSE(committed.file("/p/b.cc"));
    store->flush();
    CHECK(staged.findSymbols("third", 10).size() == 1);
}

TEST_CASE("the page cache warmer reads a store's file ahead, and not one too large for memory") {
    CHECK(worthReadingAhead(600u << 20, 24ull << 30));
    CHECK(worthReadingAhead(1u << 30, 2u << 30));
    CHECK_FALSE(worthReadingAhead((1u << 30) + 1, 2u << 30));
    CHECK(availableMemory().value_or(0) > 0);

    TempDir dir;
    const std::string file = dir / "data.mdb";
    {
        std::ofstream out(file, std::ios::binary);
        const std::string block(1 << 20, 'x');
        for (int i = 0; i < 24; ++i)
            out << block;
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    ::fdatasync(fd); // dirty pages cannot be dropped
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    // The check needs a file system whose cache can be dropped (not tmpfs, where this holds all).
    REQUIRE(residentShare(file) < 0.5);

    std::atomic<bool> stop{false};
    CHECK(readAhead(file, stop) == 24u << 20);
    CHECK(residentShare(file) >= 0.95);

    int asked = 0; // busy for the first four asks: waits, then reads it all
    CHECK(readAhead(file, stop, [&] { return ++asked < 5; }) == 24u << 20);
    CHECK(asked > 5);

    stop = true; // asked to stop before the first chunk: nothing
    CHECK(readAhead(file, stop) == 0);
    CHECK(readAhead(dir / "missing", stop) == 0);

    std::vector<std::string> lines;
    int readThrough = 0; // called on the warmer's thread, read after it is joined
    {
        PageCacheWarmer warmer(
            file, [&](const std::string& line) { lines.push_back(line); }, {},
            [&] { ++readThrough; });
        warmer.wait();
    }
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("read 24.0 MiB of " + file) == 0);
    CHECK(readThrough == 1);
}

TEST_CASE("absent paths: one id a path, shared by the TUs that probed it, dropped when asked and "
          "given a new id when probed again",
          "[store]") {
    TempDir dir;
    auto store = openStore(dir);
    auto absentTable = [&] {
        std::map<std::string, uint32_t> table;
        store->forEachAbsentPath(
            [&](uint32_t id, const std::string& path) { CHECK(table.emplace(path, id).second); });
        return table;
    };
    auto absentOf = [&](const std::string& tu) {
        std::map<uint32_t, std::string> byId;
        for (const auto& [path, id] : absentTable())
            byId[id] = path;
        std::vector<std::string> paths;
        const std::optional<TuRecord> record = store->tu(tu);
        REQUIRE(record);
        for (uint32_t id : record->absentIds)
            paths.push_back(byId.at(id));
        std::sort(paths.begin(), paths.end());
        return paths;
    };
    IndexedTu a = makeTu("/p/a.cc", {makeFile("/p/a.cc", 1, {}, {})});
    a.absentPaths = {"/p/gen/version.h", "/usr/include/gen/version.h", "/p/gen/version.h"};
    IndexedTu b = makeTu("/p/b.cc", {makeFile("/p/b.cc", 1, {}, {})});
    b.absentPaths = {"/p/gen/version.h", "/p/b/config.h"};
    store->publish(a);
    store->publish(b);
    store->flush();
    auto table = absentTable();
    CHECK(table.size() == 3);
    CHECK(absentOf("/p/a.cc") ==
          std::vector<std::string>{"/p/gen/version.h", "/usr/include/gen/version.h"});
    CHECK(absentOf("/p/b.cc") == std::vector<std::string>{"/p/b/config.h", "/p/gen/version.h"});

    // b no longer probes config.h; the run drops what no TU refers to.
    b.absentPaths = {"/p/gen/version.h"};
    store->publish(b);
    StoreEdit drop;
    drop.removeAbsentPaths = {"/p/b/config.h", "/p/never-seen.h"};
    store->apply(drop);
    store->flush();
    CHECK(absentTable().size() == 2);
    CHECK(!absentTable().contains("/p/b/config.h"));
    CHECK(absentTable().at("/p/gen/version.h") == table.at("/p/gen/version.h"));

    // Probed again: interned again (a free id: the last may be used again, as no record names
    // it), and the TU's record names it.
    b.absentPaths = {"/p/b/config.h"};
    store->publish(b);
    store->flush();
    CHECK(absentTable().size() == 3);
    CHECK(absentOf("/p/b.cc") == std::vector<std::string>{"/p/b/config.h"});
}
