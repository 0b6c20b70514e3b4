// The name index (store/name_index.h): how names split into words, how queries match and rank,
// that the LMDB store's index finds what a check of every name finds (the memory store has no
// index), and that re-indexing leaves no entry of a removed or renamed name behind.
#include "store/encoding.h"
#include "store/lmdb.h"
#include "store/lmdb_layout.h"
#include "store/memory_store.h"
#include "store/name_index.h"
#include "store/name_search.h"
#include "store/names_table.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

using namespace symdex;
using symdex::test::TempDir;
using Strings = std::vector<std::string>;

namespace {

/// A fresh LMDB store in a temporary directory, its map 64 MiB: where most cases here begin.
struct ScratchStore {
    ScratchStore() {
        options.directory = dir.path() / "store";
        options.initialMapSize = size_t(64) << 20;
        store = SymbolStore::open(options);
    }
    TempDir dir;
    StoreOptions options;
    std::unique_ptr<SymbolStore> store;
};

Symbol makeSymbol(const std::string& qualified, uint32_t line, bool definition,
                  SymbolKind kind = SymbolKind::Function) {
    Symbol s;
    s.qualifiedName = qualified;
    const size_t colon = qualified.rfind("::");
    s.name = colon == std::string::npos ? qualified : qualified.substr(colon + 2);
    s.usr = "c:@" + qualified;
    s.kind = kind;
    s.flags = definition ? kDefinition : 0;
    s.location = {line, 5};
    s.extent = {{line, 1}, {line, 30}};
    return s;
}

IndexedTu makeTu(const std::string& main, std::vector<Symbol> symbols) {
    IndexedTu tu;
    tu.mainFile = main;
    tu.record.commandHash = 1;
    IndexedFile f;
    f.file.path = main;
    f.file.contentHash = 1;
    f.file.size = 100;
    f.symbols = std::move(symbols);
    tu.files.push_back(std::move(f));
    return tu;
}

std::vector<Symbol> library() {
    uint32_t line = 0;
    auto def = [&](const std::string& q) { return makeSymbol(q, ++line, true); };
    auto decl = [&](const std::string& q) { return makeSymbol(q, ++line, false); };
    return {def("flushBuffer"),
            decl("FlushBufferRecord"),
            def("GetLengthPrefixedSlice"),
            def("get_length"),
            makeSymbol("leveldb::Options", ++line, true, SymbolKind::Class),
            def("leveldb::OpenDB"),
            makeSymbol("other::Options", ++line, true, SymbolKind::Class),
            makeSymbol("HTTPServer", ++line, true, SymbolKind::Class),
            def("bufferSize"),
            def("rebuffer"),
            def("utf8Length")};
}

/// "rank:name" of each answer.
Strings find(const Store& store, const std::string& query, size_t limit = 50) {
    static const char* ranks[] = {"exact", "prefix", "word", "substring"};
    Strings out;
    for (const NameMatch& m : store.findSymbols(query, limit))
        out.push_back(std::string(ranks[int(m.rank)]) + ":" + m.best.symbol.qualifiedName);
    return out;
}

/// The same declarations in an LMDB store, with its name index, and in the memory store, which
/// has none and checks every name: what the index finds must be what that finds.
struct BothStores {
    TempDir dir;
    StoreOptions options;
    std::unique_ptr<SymbolStore> lmdb;
    MemoryStore memory;
    BothStores() {
        options.directory = dir.path() / "store";
        options.initialMapSize = size_t(64) << 20;
        lmdb = SymbolStore::open(options);
    }
    /// Each of `files` as the TU /p/f<i>.cc, in both stores.
    void publish(const std::vector<std::vector<Symbol>>& files) {
        for (Store* store : {static_cast<Store*>(lmdb.get()), static_cast<Store*>(&memory)}) {
            for (size_t f = 0; f < files.size(); ++f)
                store->publish(makeTu("/p/f" + std::to_string(f) + ".cc", files[f]));
            store->flush();
        }
    }
};

/// The name index's tables as text, ids replaced by the names they stand for (ids depend on
/// the order names arrived in, not on what the store holds).
std::string indexTables(const std::filesystem::path& directory) {
    auto env = lmdb::Env::open(directory, size_t(64) << 20, 16, 16, 0);
    lmdb::Txn txn = lmdb::Txn::begin(env, true);
    std::ostringstream out;
    std::map<uint32_t, std::string> byId;
    auto each = [&](const char* db, unsigned flags, auto&& fn) {
        lmdb::Cursor cursor(txn, txn.openDb(db, flags));
        std::string_view k, v;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v))
            fn(k, v);
    };
    each("nameText", 0, [&](std::string_view k, std::string_view v) {
        std::vector<std::string_view> slots;
        REQUIRE(decodeNameBucket(v, slots));
        for (uint32_t slot = 0; slot < slots.size(); ++slot)
            if (!slots[slot].empty())
                byId[uint32_t(readBigEndian(k, 4)) * kNamesPerBucket + slot] = slots[slot];
    });
    std::map<std::string, size_t> declarations;           // by name as spelled
    std::map<std::string, std::multiset<uint32_t>> ranks; // EntryRank, packed: not file ids
    auto eachNamesRow = [&](auto&& fn) {
        each("names", 0, [&](std::string_view blockKey, std::string_view block) {
            NamesBlockReader reader;
            REQUIRE(reader.start(blockKey, block));
            while (!reader.done()) {
                REQUIRE(reader.next());
                fn(std::string_view(reader.key()), reader.row());
            }
        });
    };
    eachNamesRow([&](std::string_view k, std::string_view v) {
        std::vector<NameVariant> variants;
        REQUIRE(decodeNameRow(v, variants));
        for (const NameVariant& variant : variants) {
            const std::string& name = byId.at(variant.nameId);
            CHECK(nameKey(name) == k);
            CHECK(declarations.emplace(name, variant.declarations.size()).second);
            for (const NameEntry& entry : variant.declarations)
                ranks[name].insert(entry.rank);
        }
    });
    for (const auto& [name, count] : declarations)
        out << "name " << name << " x" << count << "\n";
    for (const auto& [name, packed] : ranks) {
        out << "ranks " << name;
        for (uint32_t rank : packed)
            out << " " << rank;
        out << "\n";
    }
    each("words", 0, [&](std::string_view k, std::string_view v) {
        out << "word " << k << " x" << readBigEndian(v, 4) << "\n";
    });
    std::map<std::string, std::set<std::string>> postings;
    // Rows in key order meet every token in order, each token in one group or in chunk rows of
    // its own; a grouped token is in one chunk of at most kPostingsPerChunk.
    std::string lastToken;
    bool lastGrouped = false;
    const auto take = [&](std::string_view token, const std::vector<Posting>& chunk, bool grouped) {
        CHECK((token > lastToken || (token == lastToken && !grouped && !lastGrouped)));
        lastToken = token;
        lastGrouped = grouped;
        CHECK(!chunk.empty());
        for (const Posting& posting : chunk) {
            const std::string& name = byId.at(posting.id);
            CHECK(posting.length == name.size());
            postings[std::string(token)].insert(name);
        }
    };
    each("postings", 0, [&](std::string_view k, std::string_view v) {
        std::vector<Posting> chunk;
        if (isPostingGroupKey(k)) {
            PostingGroup group;
            REQUIRE(decodePostingGroup(k, v, group));
            CHECK(v.size() <= kPostingGroupBytes + 64);
            for (const auto& [token, bytes] : group) {
                CHECK(!token.empty());
                REQUIRE(decodePostingChunk(bytes, chunk));
                CHECK(chunk.size() <= kPostingsPerChunk);
                take(token, chunk, true);
            }
            return;
        }
        const size_t end = k.find('\0');
        REQUIRE(end != std::string_view::npos);
        REQUIRE(decodePostingChunk(v, chunk));
        CHECK(postingKeyFirst(k) == chunk.front());
        CHECK(chunk.size() <= 2 * kPostingsPerChunk);
        take(k.substr(0, end), chunk, false);
    });
    for (const auto& [token, names] : postings) {
        out << "token " << token << ":";
        for (const std::string& name : names)
            out << " " << name;
        out << "\n";
    }
    CHECK(byId.size() == declarations.size());
    return out.str();
}

/// How many `postings` chunks hold `token` in the store at `directory`.
size_t postingChunks(const std::filesystem::path& directory, std::string_view token) {
    auto env = lmdb::Env::open(directory, size_t(64) << 20, 16, 16, 0);
    lmdb::Txn txn = lmdb::Txn::begin(env, true);
    lmdb::Cursor cursor(txn, txn.openDb("postings", 0));
    const std::string prefix = postingPrefix(token);
    std::string_view k = prefix, v;
    size_t chunks = 0;
    for (bool more = cursor.seek(MDB_SET_RANGE, k, v); more && k.starts_with(prefix);
         more = cursor.get(MDB_NEXT, k, v))
        ++chunks;
    return chunks;
}

} // namespace

TEST_CASE("names split into words at case changes, digits and separators", "[store][names]") {
    CHECK(nameWords("GetLengthPrefixedSlice") == Strings{"get", "length", "prefixed", "slice"});
    CHECK(nameWords("flush_buffer") == Strings{"flush", "buffer"});
    CHECK(nameWords("HTTPServer") == Strings{"http", "server"});
    CHECK(nameWords("utf8Length") == Strings{"utf", "8", "length"});
    CHECK(nameWords("__cxx11") == Strings{"cxx", "11"});
    CHECK(nameWords("operator==") == Strings{"operator"});
    CHECK(nameWords("~Shape") == Strings{"shape"});
    CHECK(nameTokens(nameWords("GetLengthPrefixedSlice")) ==
          Strings{"Fget", "Iglp", "Ilps", "Pget length", "Plength prefixed", "Pprefixed slice",
                  "Wget", "Wlength", "Wprefixed", "Wslice"});
}

TEST_CASE("queries match exactly, by prefix, by word starts and by substring", "[store][names]") {
    auto rank = [](const char* name, const char* query) {
        std::optional<MatchRank> r = matchName(name, makeNameQuery(query));
        return r ? int(*r) : -1;
    };
    CHECK(rank("flushBuffer", "FLUSHBUFFER") == int(MatchRank::Exact));
    CHECK(rank("flushBuffer", "flushbuf") == int(MatchRank::Prefix));
    CHECK(rank("flush_buffer", "flushbuf") == int(MatchRank::WordStart));
    CHECK(rank("GetLengthPrefixedSlice", "glps") == int(MatchRank::WordStart));
    CHECK(rank("GetLengthPrefixedSlice", "lenpre") == int(MatchRank::WordStart));
    CHECK(rank("GetLengthPrefixedSlice", "getprefixed") == -1); // words must follow each other
    CHECK(rank("GetLengthPrefixedSlice", "ngthpre") == int(MatchRank::Substring));
    CHECK(rank("flushBuffer", "bu") == int(MatchRank::WordStart)); // two letters: one word
    CHECK(rank("flushBuffer", "fb") == -1);                        // ... not two words
    CHECK(rank("flushBuffer", "fbu") == int(MatchRank::WordStart));
    CHECK(rank("rebuffer", "uf") == -1); // substrings need three
    CHECK(rank("rebuffer", "buf") == int(MatchRank::Substring));
    CHECK(rank("flushBuffer", "x") == -1);
    // The letters in order, across separators and case changes, before the words are split.
    CHECK(rank("HTTP_Server2Config", "httpserver2con") == int(MatchRank::WordStart));
    CHECK(rank("HTTP_Server2Config", "pserv") == int(MatchRank::Substring));
    CHECK(rank("HTTP_Server2Config", "s2c") == int(MatchRank::WordStart));
    CHECK(rank("prevRateKappa", "ratekappa") == int(MatchRank::WordStart));
    CHECK(rank("prevRateKappa", "kapparate") == -1);      // every letter there, out of order
    CHECK(rank("prevRateKappa", "prevratekappax") == -1); // a letter more than the name has
    CHECK(rank("rateKappaPrev", "prevratekappa") == -1);
}

TEST_CASE("name search ranks exact, prefix, word start, substring, definitions and shorter "
          "names first, and finds the same through the index as by checking every name",
          "[store][names]") {
    ScratchStore scratch;
    auto& lmdb = scratch.store;
    const StoreOptions& options = scratch.options;
    MemoryStore memory;
    for (Store* store : {static_cast<Store*>(lmdb.get()), static_cast<Store*>(&memory)}) {
        store->publish(makeTu("/p/lib.cc", library()));
        store->flush();
    }
    for (Store* store : {static_cast<Store*>(lmdb.get()), static_cast<Store*>(&memory)}) {
        INFO((store == &memory ? "memory" : "lmdb"));
        CHECK(find(*store, "buf") == Strings{"prefix:bufferSize", "word:flushBuffer",
                                             "word:FlushBufferRecord", "substring:rebuffer"});
        CHECK(find(*store, "buf", 2) == Strings{"prefix:bufferSize", "word:flushBuffer"});
        CHECK(find(*store, "glps") == Strings{"word:GetLengthPrefixedSlice"});
        CHECK(find(*store, "flushbuf") ==
              Strings{"prefix:flushBuffer", "prefix:FlushBufferRecord"});
        CHECK(find(*store, "ngthpre") == Strings{"substring:GetLengthPrefixedSlice"});
        CHECK(find(*store, "length") ==
              Strings{"word:get_length", "word:utf8Length", "word:GetLengthPrefixedSlice"});
        CHECK(find(*store, "getlen") ==
              Strings{"prefix:GetLengthPrefixedSlice", "word:get_length"});
        CHECK(find(*store, "server") == Strings{"word:HTTPServer"});
        CHECK(find(*store, "options") == Strings{"exact:other::Options", "exact:leveldb::Options"});
        CHECK(find(*store, "leveldb::Op") ==
              Strings{"prefix:leveldb::OpenDB", "prefix:leveldb::Options"});
        CHECK(find(*store, "zqxj").empty());
        CHECK(find(*store, "e").empty());
        CHECK(find(*store, "", 3).size() == 3);
        CHECK(find(*store, "", 100).size() == library().size());
    }
}

TEST_CASE("re-indexing removes and renames names in the name index, leaving nothing stale",
          "[store][names]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    std::vector<Symbol> edited = library();
    edited.erase(edited.begin() + 2); // GetLengthPrefixedSlice
    edited[0] = makeSymbol("flushBuffers", 1, true);
    edited.push_back(makeSymbol("rebuffer", 90, false)); // a second declaration of a name
    {
        auto store = SymbolStore::open(options);
        store->publish(makeTu("/p/lib.cc", library()));
        store->publish(makeTu("/p/two.cc", {makeSymbol("twoLengthSlices", 1, true)}));
        store->flush();
        CHECK(find(*store, "glps") == Strings{"word:GetLengthPrefixedSlice"});
        store->publish(makeTu("/p/lib.cc", edited));
        StoreEdit removal;
        removal.removeFiles = {"/p/two.cc"};
        store->apply(std::move(removal));
        store->flush();
        CHECK(find(*store, "glps").empty());
        CHECK(find(*store, "ngthpre").empty());
        CHECK(find(*store, "flushbuffer") ==
              Strings{"prefix:flushBuffers", "prefix:FlushBufferRecord"});
        CHECK(find(*store, "slice").empty());
        CHECK(find(*store, "rebuffer") == Strings{"exact:rebuffer"});
    }
    const std::string reindexed = indexTables(options.directory);
    CHECK(reindexed.find("prefixed") == std::string::npos);
    CHECK(reindexed.find("slice") == std::string::npos);
    CHECK(reindexed.find("name rebuffer x2") != std::string::npos);

    TempDir fresh;
    options.directory = fresh.path() / "store";
    {
        auto store = SymbolStore::open(options);
        store->publish(makeTu("/p/lib.cc", edited));
        store->flush();
    }
    CHECK(indexTables(options.directory) == reindexed);
}

TEST_CASE("words a commit adds are found by the next search of the same store (the vocabulary "
          "kept between searches is that of the snapshot read)",
          "[store][names]") {
    ScratchStore scratch;
    auto& store = scratch.store;
    store->publish(makeTu("/p/lib.cc", library()));
    store->flush();
    // These read the whole vocabulary (substrings) and words by prefix (word starts).
    CHECK(find(*store, "orbleng").empty());
    CHECK(find(*store, "zlp").empty());
    CHECK(find(*store, "ngthpre") == Strings{"substring:GetLengthPrefixedSlice"});

    store->publish(makeTu("/p/new.cc", {makeSymbol("zorbLengthPrefix", 1, true)}));
    store->flush();
    CHECK(find(*store, "orbleng") == Strings{"substring:zorbLengthPrefix"});
    CHECK(find(*store, "zlp") == Strings{"word:zorbLengthPrefix"});
    CHECK(find(*store, "ngthpre") ==
          Strings{"substring:zorbLengthPrefix", "substring:GetLengthPrefixedSlice"});

    StoreEdit removal;
    removal.removeFiles = {"/p/new.cc"};
    store->apply(std::move(removal));
    store->flush();
    CHECK(find(*store, "orbleng").empty());
    CHECK(find(*store, "zlp").empty());

    // A snapshot taken before a commit keeps answering as of its own transaction.
    StoreSnapshot before = store->snapshot();
    store->publish(makeTu("/p/new.cc", {makeSymbol("zorbLengthPrefix", 1, true)}));
    store->flush();
    CHECK(find(*store, "zlp") == Strings{"word:zorbLengthPrefix"});
    CHECK(before.findSymbols("zlp", 50).empty());
}

TEST_CASE("searches of one snapshot on many threads at once answer alike (the vocabulary and its "
          "word endings are built once, by whichever search comes first)",
          "[store][names]") {
    ScratchStore scratch;
    auto& store = scratch.store;
    store->publish(makeTu("/p/lib.cc", library()));
    store->flush();
    for (int commit = 0; commit < 3; ++commit) { // each commit: a new vocabulary to build
        store->publish(makeTu("/p/new" + std::to_string(commit) + ".cc",
                              {makeSymbol("zorbLengthPrefix" + std::to_string(commit), 1, true)}));
        store->flush();
        const Strings expected = {"substring:zorbLengthPrefix0"};
        std::vector<Strings> substrings(4), endings(4);
        std::vector<std::thread> threads;
        for (size_t t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                // "ngthpre": words ending with its first letters ("ngth"), then "pre...".
                substrings[t] = find(*store, "ngthpre");
                endings[t] = find(*store, "orbLengthPrefix0");
            });
        for (std::thread& thread : threads)
            thread.join();
        for (size_t t = 0; t < 4; ++t) {
            CHECK(substrings[t].size() == size_t(commit + 2)); // zorb...0-commit and GetLength...
            CHECK(substrings[t] == substrings[0]);
            CHECK(endings[t] == expected);
        }
    }
}

TEST_CASE("a declaration block a commit rewrote is read anew, not from the blocks decoded for "
          "earlier requests, and an older snapshot still reads its own",
          "[store][names]") {
    ScratchStore scratch;
    auto& store = scratch.store;
    auto lineOf = [](const std::vector<NameMatch>& found) {
        REQUIRE(found.size() == 1);
        return found[0].best.symbol.location.line;
    };
    store->publish(makeTu("/p/x.cc", {makeSymbol("zorbLength", 3, true)}));
    store->flush();
    CHECK(lineOf(store->findSymbols("zorbLength", 10)) == 3); // decoded, and kept
    CHECK(lineOf(store->findSymbols("zorbLength", 10)) == 3); // from what was kept
    const StoreSnapshot before = store->snapshot();
    // The same file, row and block, with other bytes.
    store->publish(makeTu("/p/x.cc", {makeSymbol("zorbLength", 7, true)}));
    store->flush();
    CHECK(lineOf(store->findSymbols("zorbLength", 10)) == 7);
    CHECK(lineOf(before.findSymbols("zorbLength", 10)) == 3);
    CHECK(lineOf(store->findSymbols("zorbLength", 10)) == 7);
}

TEST_CASE("names that differ only in case share a names row, each spelling indexed on its own",
          "[store][names]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    const std::vector<Symbol> all = {
        makeSymbol("FlushBuffer", 1, true, SymbolKind::Class), makeSymbol("flushBuffer", 2, true),
        makeSymbol("flush_buffer", 3, true), makeSymbol("flushBuffer", 4, false)};
    const std::vector<Symbol> edited = {all[0], all[2]};
    {
        auto store = SymbolStore::open(options);
        store->publish(makeTu("/p/a.cc", all));
        store->flush();
        CHECK(find(*store, "flushbuffer") ==
              Strings{"exact:FlushBuffer", "exact:flushBuffer", "word:flush_buffer"});
        store->publish(makeTu("/p/a.cc", edited));
        store->flush();
        CHECK(find(*store, "flushbuffer") == Strings{"exact:FlushBuffer", "word:flush_buffer"});
    }
    const std::string tables = indexTables(options.directory);
    CHECK(tables.find("name FlushBuffer x1\n") != std::string::npos);
    CHECK(tables.find("name flushBuffer") == std::string::npos);
    {
        auto env = lmdb::Env::open(options.directory, size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, true);
        auto row = findNamesRow(txn, txn.openDb("names", 0), "flushbuffer");
        REQUIRE(row);
        std::vector<NameVariant> variants;
        REQUIRE(decodeNameRow(*row, variants));
        REQUIRE(variants.size() == 1); // FlushBuffer; flush_buffer's key is its own
        CHECK(variants[0].declarations.size() == 1);
    }
    TempDir fresh;
    options.directory = fresh.path() / "store";
    {
        auto store = SymbolStore::open(options);
        store->publish(makeTu("/p/a.cc", edited));
        store->flush();
    }
    CHECK(indexTables(options.directory) == tables);
}

TEST_CASE("tokens held by hundreds of names span several postings chunks, and search through "
          "them finds what checking every name finds, before and after re-indexing",
          "[store][names]") {
    const std::vector<std::string> words = {"flush", "buffer", "read",  "write", "block",
                                            "cache", "table",  "merge", "seek",  "key"};
    auto capital = [](std::string w) {
        w[0] = char(w[0] - 'a' + 'A');
        return w;
    };
    // 10 x 10 x 10 names of three words: each word is in about 270 of them, one of the pairs
    // in 10 to 20.
    std::vector<std::vector<Symbol>> files(3);
    uint32_t n = 0;
    for (const std::string& a : words)
        for (const std::string& b : words)
            for (const std::string& c : words) {
                const std::string name =
                    n % 2 ? a + capital(b) + capital(c) : a + "_" + b + "_" + c;
                files[n % 3].push_back(makeSymbol(name, n + 1, n % 5 != 0));
                ++n;
            }
    ScratchStore scratch;
    auto& lmdb = scratch.store;
    const StoreOptions& options = scratch.options;
    MemoryStore memory;
    auto publish = [&](const std::vector<std::vector<Symbol>>& tree) {
        for (Store* store : {static_cast<Store*>(lmdb.get()), static_cast<Store*>(&memory)}) {
            for (size_t f = 0; f < tree.size(); ++f)
                store->publish(makeTu("/p/f" + std::to_string(f) + ".cc", tree[f]));
            store->flush();
        }
    };
    std::vector<std::string> queries = {"fb",   "rwb", "fbr",       "ushbuf",     "ferread",
                                        "ocks", "kkk", "mergeseek", "merge_seek", "zz"};
    for (const std::string& w : words) {
        queries.push_back(w);
        queries.push_back(w.substr(0, 2));
        queries.push_back(w.substr(1, 3));
    }
    auto same = [&] {
        for (const std::string& query : queries)
            for (size_t limit : {size_t(7), size_t(5000)}) {
                INFO(query << " limit " << limit);
                CHECK(find(*lmdb, query, limit) == find(memory, query, limit));
            }
    };
    publish(files);
    CHECK(find(*lmdb, "buffer", 5000).size() == 271);
    same();
    std::string tables = indexTables(options.directory);
    CHECK(tables.find("token Wbuffer:") != std::string::npos);
    // 271 postings: past twice kPostingsPerChunk, so split
    CHECK(postingChunks(options.directory, "Wbuffer") == 2);

    std::vector<std::vector<Symbol>> edited = files;
    for (auto& symbols : edited)
        std::erase_if(symbols, [](const Symbol& s) { return s.location.line % 3 == 0; }); // a third
    edited[1].push_back(makeSymbol("bufferCacheFlushNew", 5000, true));
    publish(edited);
    same();
    CHECK(find(*lmdb, "bcfn", 5000) == Strings{"word:bufferCacheFlushNew"});
    tables = indexTables(options.directory);
    TempDir fresh;
    StoreOptions freshOptions = options;
    freshOptions.directory = fresh.path() / "store";
    {
        auto store = SymbolStore::open(freshOptions);
        for (size_t f = 0; f < edited.size(); ++f)
            store->publish(makeTu("/p/f" + std::to_string(f) + ".cc", edited[f]));
        store->flush();
    }
    CHECK(indexTables(freshOptions.directory) == tables);
}

TEST_CASE("a group row finds each of its tokens, and none between them", "[store][names]") {
    const Strings tokens = {"Pa",    "Pa b", "Pa bc", "Pa bcd", "Pa bd",
                            "Pa bz", "Pab",  "Pb",    "Pb a",   "Pba"};
    PostingGroup group;
    for (size_t i = 0; i < tokens.size(); ++i)
        group.emplace_back(tokens[i], encodePostingChunk({{uint32_t(3 + i), uint32_t(i + 1)}}));
    const std::string key = postingPrefix(tokens.front()), value = encodePostingGroup(group);
    PostingGroup decoded;
    REQUIRE(decodePostingGroup(key, value, decoded));
    CHECK(decoded == group);
    bool damaged = true;
    for (const auto& [token, chunk] : group) {
        INFO(token);
        const std::optional<std::string_view> found =
            findInPostingGroup(key, value, token, damaged);
        REQUIRE(found);
        CHECK(*found == chunk);
        CHECK(!damaged);
    }
    for (const char* absent : {"P", "PZ", "Pa ", "Pa a", "Pa bb", "Pa bca", "Pa bce", "Pa c", "Paa",
                               "Pac", "Pb ", "Pb b", "Pbb", "Pc"}) {
        INFO(absent);
        CHECK(!findInPostingGroup(key, value, absent, damaged));
        CHECK(!damaged);
    }
    // A row that is not a group's, or cut short, is damaged.
    CHECK(!findInPostingGroup("Pa\0\0\0\0\0\0\0", value, "Pa", damaged));
    CHECK(damaged);
    CHECK(!findInPostingGroup(key, value.substr(0, value.size() - 2), "Pba", damaged));
    CHECK(damaged);
    CHECK(!decodePostingGroup(key, value.substr(0, value.size() - 2), decoded));
    CHECK(!decodePostingGroup(postingPrefix("Pa b"), value, decoded)); // not its first token
}

/// The `postings` rows that are groups, and the pair tokens they hold (`kind`: the tokens of
/// that kind; 0: all).
std::pair<size_t, size_t> postingGroups(const std::filesystem::path& directory,
                                        char kind = kPairToken) {
    auto env = lmdb::Env::open(directory, size_t(64) << 20, 16, 16, 0);
    lmdb::Txn txn = lmdb::Txn::begin(env, true);
    lmdb::Cursor cursor(txn, txn.openDb("postings", 0));
    std::pair<size_t, size_t> groups{0, 0};
    PostingGroup group;
    std::string_view k, v;
    for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v))
        if (isPostingGroupKey(k)) {
            REQUIRE(decodePostingGroup(k, v, group));
            ++groups.first;
            for (const auto& [token, chunk] : group)
                groups.second += kind == 0 || token[0] == kind;
        }
    return groups;
}

TEST_CASE("tokens of a few names share group rows, one that outgrows them gets chunks of its own, "
          "and "
          "search finds what checking every name finds as they move",
          "[store][names]") {
    // flushBuffer<n>: "Pflush buffer" in every one of them, "Pbuffer <n>" in one each;
    // readBlock<n> likewise, with fewer.
    auto tree = [](size_t flushes, size_t readsFrom, size_t reads) {
        std::vector<std::vector<Symbol>> files(2);
        for (size_t n = 0; n < flushes; ++n)
            files[n % 2].push_back(makeSymbol("flushBuffer" + std::to_string(n), n + 1, true));
        for (size_t n = readsFrom; n < reads; ++n)
            files[n % 2].push_back(makeSymbol("readBlock" + std::to_string(n), n + 1, n % 3));
        return files;
    };
    ScratchStore scratch;
    auto& lmdb = scratch.store;
    const StoreOptions& options = scratch.options;
    auto publish = [&](Store& store, const std::vector<std::vector<Symbol>>& files) {
        for (size_t f = 0; f < files.size(); ++f)
            store.publish(makeTu("/p/f" + std::to_string(f) + ".cc", files[f]));
        store.flush();
    };
    const Strings queries = {"flushbuf", "fb",     "fbu",         "buffer1",     "buffer 29",
                             "uffer29",  "rb",     "readblock",   "readblock7",  "block12",
                             "lock1",    "block",  "flushbuffer", "bufferblock", "b1",
                             "readbloc", "flubuf", "read_block",  "ffer2"};
    auto same = [&](const std::vector<std::vector<Symbol>>& files) {
        MemoryStore memory;
        publish(memory, files);
        for (const std::string& query : queries)
            for (size_t limit : {size_t(5), size_t(5000)}) {
                INFO(query << " limit " << limit);
                CHECK(find(*lmdb, query, limit) == find(memory, query, limit));
            }
    };

    const auto first = tree(300, 0, 100);
    publish(*lmdb, first);
    same(first);
    CHECK(find(*lmdb, "flushbuf", 5000).size() == 300);
    indexTables(options.directory); // checks the rows' order and bounds
    // 300 names: past kPostingsPerChunk, so chunks of its own (two: past twice that too) ...
    CHECK(postingChunks(options.directory, "Pflush buffer") == 2);
    // ... while the 400 tokens of one name each, and "Pread block", share rows of ~1 KB.
    auto [groups, grouped] = postingGroups(options.directory);
    CHECK(grouped == 300 + 100 + 1);
    // Words are grouped too: the 300 numbers, "Wread" and "Wblock" (100 names); "Wflush" (300)
    // is not.
    CHECK(postingGroups(options.directory, kWordToken).second == 300 + 2);
    CHECK(postingChunks(options.directory, "Wflush") == 2);
    CHECK(postingGroups(options.directory, 0).second > grouped + 300);
    CHECK(groups >= 8);
    CHECK(groups <= 40);

    // "Pread block" outgrows its group; "Pflush buffer" shrinks back to one chunk of its own;
    // most of the one-name tokens go, the first ones of their groups among them.
    const auto second = tree(40, 50, 250);
    publish(*lmdb, second);
    same(second);
    CHECK(find(*lmdb, "readblock", 5000).size() == 200);
    CHECK(postingChunks(options.directory, "Pflush buffer") == 1);
    CHECK(postingChunks(options.directory, "Pread block") == 1);
    std::tie(groups, grouped) = postingGroups(options.directory);
    CHECK(grouped == 40 + 200);
    const std::string tables = indexTables(options.directory);

    // The same names written at once hold the same tokens (laid out in rows otherwise).
    TempDir fresh;
    StoreOptions freshOptions = options;
    freshOptions.directory = fresh.path() / "store";
    {
        auto store = SymbolStore::open(freshOptions);
        publish(*store, second);
    }
    CHECK(indexTables(freshOptions.directory) == tables);

    // Every name gone: no row left.
    publish(*lmdb, tree(0, 0, 0));
    CHECK(postingGroups(options.directory) == std::pair<size_t, size_t>(0, 0));
    CHECK(postingChunks(options.directory, "Pflush buffer") == 0);
}

TEST_CASE("a search skips through tokens of many postings chunks to the names a rarer token "
          "holds, and finds what checking every name finds",
          "[store][names]") {
    const std::vector<std::string> words = {"flush", "buffer", "read", "write", "block", "cache",
                                            "table", "merge",  "seek", "key",   "slice", "arena",
                                            "batch", "level",  "file", "lock"};
    // 16 x 16 x 16 names of three words: each word is in about 770 of them (4 to 6 chunks), a
    // pair of words in 16 to 32, three initials in 1 to 8: intersections of a rare token with a
    // common one skip most of the common one's chunks.
    std::vector<std::vector<Symbol>> files(4);
    uint32_t n = 0;
    for (const std::string& a : words)
        for (const std::string& b : words)
            for (const std::string& c : words) {
                std::string B = b, C = c;
                B[0] = char(B[0] - 'a' + 'A');
                C[0] = char(C[0] - 'a' + 'A');
                const std::string name = n % 3 ? a + B + C : a + "_" + b + "_" + c;
                files[n % 4].push_back(makeSymbol(name, n + 1, n % 7 != 0));
                ++n;
            }
    BothStores stores;
    stores.publish(files);
    auto& lmdb = stores.lmdb;
    MemoryStore& memory = stores.memory;
    CHECK(postingChunks(stores.options.directory, "Wcache") >= 4);
    std::vector<std::string> queries = {"fbr",        "lfc",         "cachelevel", "kslice",
                                        "slicekey",   "arenabatchb", "abl",        "lockfile",
                                        "ferre",      "cheleve",     "kbl",        "fileflush",
                                        "lock_file_", "tablearena",  "ewr",        "zzz"};
    for (const std::string& w : words)
        queries.push_back(w.substr(1, 3));
    for (const std::string& query : queries)
        for (size_t limit : {size_t(3), size_t(40), size_t(5000)}) {
            INFO(query << " limit " << limit);
            const Strings found = find(*lmdb, query, limit);
            CHECK(found == find(memory, query, limit));
            if (limit == 5000 && query != "zzz" && query.size() >= 3)
                CHECK(!found.empty());
        }
}

TEST_CASE("names rows kept in blocks are found by exact name and by prefix, and stay exact as "
          "rows come and go at the blocks' edges",
          "[store][names]") {
    // 3,000 names: a few hundred blocks of about 400 bytes. Each edit below removes or adds
    // rows among them, the first row of a block included (the block's key then changes), and
    // a fresh store given the same files holds the same rows.
    auto nameOf = [](uint32_t i) {
        static const char* const parts[] = {"alpha", "Beta", "gamma", "Delta", "omega", "Sigma"};
        return std::string(parts[i % 6]) + parts[(i / 6) % 6] + "_" + std::to_string(i);
    };
    auto tree = [&](auto&& keep) {
        std::vector<std::vector<Symbol>> files(3);
        for (uint32_t i = 0; i < 3000; ++i)
            if (keep(i))
                files[i % 3].push_back(makeSymbol(nameOf(i), i + 1, i % 4 != 0));
        return files;
    };
    BothStores stores;
    auto same = [&](const std::vector<std::string>& queries) {
        for (const std::string& query : queries) {
            INFO(query);
            CHECK(find(*stores.lmdb, query, 5000) == find(stores.memory, query, 5000));
        }
    };
    const std::vector<std::string> queries = {"alphabeta_1", "alpha", "a",      "sigmaomega_29",
                                              "gammadelta",  "delta", "omega_", "betasigma_2999",
                                              "zzz",         "",      "ab",     "sigmasigma_35"};
    stores.publish(tree([](uint32_t) { return true; }));
    same(queries);
    {
        auto env = lmdb::Env::open(stores.options.directory, size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, true);
        const MDB_dbi names = txn.openDb("names", 0);
        CHECK(txn.entries(names) > 20);
        CHECK(txn.entries(names) < 3000 / 8);
        for (uint32_t i = 0; i < 3000; i += 37) {
            INFO(nameOf(i));
            CHECK(findNamesRow(txn, names, nameKey(nameOf(i))));
            CHECK(!findNamesRow(txn, names, nameKey(nameOf(i)) + "x"));
        }
        CHECK(!findNamesRow(txn, names, "a"));
        CHECK(!findNamesRow(txn, names, "zzzz"));
    }
    const std::string tables = indexTables(stores.options.directory);
    stores.publish(tree([](uint32_t i) { return i % 5 != 0; })); // a fifth of the rows go
    same(queries);
    stores.publish(tree([](uint32_t i) { return i % 7 != 0; })); // they come back, others go
    same(queries);
    stores.publish(tree([](uint32_t) { return true; }));
    same(queries);
    CHECK(indexTables(stores.options.directory) == tables);
    auto blocks = [&] {
        auto env = lmdb::Env::open(stores.options.directory, size_t(64) << 20, 16, 16, 0);
        lmdb::Txn txn = lmdb::Txn::begin(env, true);
        return txn.entries(txn.openDb("names", 0));
    };
    const size_t full = blocks();
    // Nine rows in ten go: the blocks left with less than half their bytes join their
    // neighbours, not a block of a row or two each.
    stores.publish(tree([](uint32_t i) { return i % 10 == 0; }));
    same(queries);
    CHECK(blocks() < full / 3);
}

TEST_CASE("a rare word's names asked one by one whether they hold a common word, whose postings "
          "span many chunks, find what checking every name finds",
          "[store][names]") {
    // 2,500 names hold "common", so its postings span about a dozen chunks; 59 names hold
    // "zebra" as well, spread over those chunks by their lengths and ids. "zebra" is the rarer
    // source by far (more than 32 times rarer): each of its names is asked whether it holds a
    // "common..." word, the asks in increasing order across the chunks of "common".
    const std::vector<std::string> words = {
        "alpha", "beta",  "gamma", "delta", "eps",  "zeta",  "eta",   "theta", "iota", "kappa",
        "lam",   "mu",    "nu",    "xi",    "omi",  "pi",    "rho",   "sigma", "tau",  "upsi",
        "phi",   "chi",   "psi",   "omega", "one",  "two",   "three", "four",  "five", "six",
        "seven", "eight", "nine",  "ten",   "red",  "green", "blue",  "cyan",  "gold", "grey",
        "iron",  "jade",  "lime",  "navy",  "onyx", "pink",  "ruby",  "sand",  "teal", "wine"};
    auto capital = [](std::string w) {
        w[0] = char(w[0] - 'a' + 'A');
        return w;
    };
    std::vector<std::vector<Symbol>> files(5);
    uint32_t n = 0;
    for (const std::string& a : words)
        for (const std::string& b : words) {
            // as long as the names below, so that theirs fall in every chunk of "common"
            const std::string name = "common" + capital(a) + capital(b) + capital(words[n % 50]);
            files[n % 5].push_back(makeSymbol(name, n + 1, true));
            if (++n % 42 == 0) {
                const std::string rare =
                    n % 4 ? "zebraCommon" + capital(a) + capital(b) : "zebra_common_" + a + "_" + b;
                files[n % 5].push_back(makeSymbol(rare, n + 10000, n % 3 != 0));
            }
        }
    BothStores stores;
    stores.publish(files);
    CHECK(postingChunks(stores.options.directory, "Wcommon") >= 8);
    CHECK(find(*stores.lmdb, "zebra", 5000).size() == 59);
    for (const std::string query : {"ebracom", "bracommon", "racomm", "ebra_com", "bracommonalp",
                                    "zebracom", "zebracommon", "zecom"})
        for (size_t limit : {size_t(5), size_t(30), size_t(5000)}) {
            INFO(query << " limit " << limit);
            const Strings found = find(*stores.lmdb, query, limit);
            CHECK(found == find(stores.memory, query, limit));
            CHECK(!found.empty());
        }
}

TEST_CASE("substrings and word starts across two words, where a few words end or start the "
          "first piece and many start the second, find what checking every name finds",
          "[store][names]") {
    // 6 words end with "der", 24 start with "re": a query's pairs of them are 144, more than
    // are counted one by one, so the pairs the index holds are read by their common start.
    const std::vector<std::string> firsts = {"reader", "header", "loader",
                                             "folder", "ladder", "border"};
    std::vector<std::string> seconds;
    for (const char* tail : {"ad",   "set",  "do",   "try",  "turn", "play", "cord", "view",
                             "size", "move", "name", "load", "bind", "pack", "scan", "port",
                             "sult", "tain", "lay",  "call", "fill", "mote", "use",  "gion"})
        seconds.push_back(std::string("re") + tail);
    auto capital = [](std::string w) {
        w[0] = char(w[0] - 'a' + 'A');
        return w;
    };
    // Each first word before a few of the second words (not all: most pairs no name has), and
    // names where the two words are not neighbours.
    std::vector<std::vector<Symbol>> files(2);
    uint32_t n = 0;
    for (size_t i = 0; i < firsts.size(); ++i)
        for (size_t j = i; j < seconds.size(); j += 5) {
            const std::string name = n % 4 ? firsts[i] + capital(seconds[j])
                                           : "get_" + firsts[i] + "_" + seconds[j] + "_now";
            files[n % 4 / 2].push_back(makeSymbol(name, n + 1, n % 3 != 0));
            files[n % 4 / 2].push_back(
                makeSymbol(firsts[i] + "Other" + capital(seconds[j]), n + 2, true));
            n += 2;
        }
    BothStores stores;
    stores.publish(files);
    auto& lmdb = stores.lmdb;
    MemoryStore& memory = stores.memory;
    const std::vector<std::string> queries = {
        "derre",    "derres", "aderread", "erreco", "derrecord", "eaderrel",   "olderrepo",
        "ladrere",  "headre", "rere",     "fore",   "borrem",    "derotherre", "derot",
        "getreare", "reare",  "orderret", "erreg",  "dderrese",  "derrx",      "loare"};
    for (const std::string& query : queries)
        for (size_t limit : {size_t(3), size_t(1000)}) {
            INFO(query << " limit " << limit);
            CHECK(find(*lmdb, query, limit) == find(memory, query, limit));
        }
    CHECK(find(*lmdb, "derre", 1000).size() > 10);
    // header before reload, in one name; as neighbours only in that one
    CHECK(find(*lmdb, "eaderrel", 1000) == Strings{"substring:headerReload"});
}

TEST_CASE("word starts over two words that each start hundreds of names, with hundreds of pairs "
          "of them, find what checking every name finds",
          "[store][names]") {
    // 30 words start with "lo" and 30 with "cl", each in about 60 names: the cut lo|cl holds
    // many names on either side, so the pairs the index holds are read by their start; they
    // are some 600 tokens, too many to merge as streams, so their names are read beforehand.
    std::vector<std::string> firsts, seconds;
    for (char a = 'a'; a < 'f'; ++a)
        for (char b = 'p'; b < 'v'; ++b) {
            firsts.push_back(std::string("lo") + a + b);
            seconds.push_back(std::string("cl") + b + a);
        }
    auto capital = [](std::string w) {
        w[0] = char(w[0] - 'a' + 'A');
        return w;
    };
    std::vector<std::vector<Symbol>> files(3);
    for (uint32_t n = 0; n < 1800; ++n) {
        const std::string& first = firsts[n % firsts.size()];
        const std::string& second = seconds[(n / firsts.size() + 7 * n) % seconds.size()];
        std::string name;
        switch (n % 3) {
        case 0:
            name = first + capital(second) + "Tail" + std::to_string(n);
            break;
        case 1:
            name = first + "_mid_" + second + std::to_string(n);
            break; // not neighbours
        default:
            name = "x" + std::to_string(n) + "_" + second + "_" + first;
            break;
        }
        files[n % 3].push_back(makeSymbol(name, n + 1, n % 5 != 0));
    }
    BothStores stores;
    stores.publish(files);
    auto& lmdb = stores.lmdb;
    MemoryStore& memory = stores.memory;
    const std::vector<std::string> queries = {"locl",  "locls",  "loapcl", "loclqa", "lcl",
                                              "loctl", "clolo",  "clpalo", "clqbl",  "locx",
                                              "lomcl", "lotacl", "locltai"};
    for (const std::string& query : queries)
        for (size_t limit : {size_t(3), size_t(1000)}) {
            INFO(query << " limit " << limit);
            CHECK(find(*lmdb, query, limit) == find(memory, query, limit));
        }
    // lo* before cl* in a third of the names, each a word start ("locl" ranks them first)
    const Strings all = find(*lmdb, "locl", 1000);
    CHECK(std::count_if(all.begin(), all.end(),
                        [](const std::string& s) { return s.starts_with("word:"); }) == 600);
}

TEST_CASE("each way to cut a query into word starts proposes its own names, however many ways "
          "come down to as few names as another",
          "[store][names]") {
    // "ratedisk" cuts as rate|disk, rat|edisk, ra|te|disk, ...: each cut's rarest constraint is
    // the one pair of words of one name, a different name each time, all equally rare.
    // (Not at the name's start: those are prefixes, found by the names table.)
    const std::vector<std::string> names = {"getRateDisk",  "getRatEdisk",    "getRaTeDisk",
                                            "getRatedIsk",  "x_rate_di_skip", "isRateDiskette",
                                            "newRatedDisk", "pirateDisk",     "rateDiskWriter"};
    std::vector<Symbol> symbols;
    uint32_t line = 0;
    for (const std::string& name : names)
        symbols.push_back(makeSymbol(name, ++line, true));
    // Other names with the same words, not as neighbours.
    for (const char* name : {"rateOfDisk", "diskRate", "ratTheEdisk", "teRaDisk", "iskDiRate"})
        symbols.push_back(makeSymbol(name, ++line, false));
    BothStores stores;
    stores.publish({symbols});
    auto& lmdb = stores.lmdb;
    MemoryStore& memory = stores.memory;
    for (const char* query : {"ratedisk", "ratedi", "ratdisk", "radisk", "rdisk", "radi"})
        for (size_t limit : {size_t(2), size_t(100)}) {
            INFO(query << " limit " << limit);
            CHECK(find(*lmdb, query, limit) == find(memory, query, limit));
        }
    // ra|t|edisk in ratTheEdisk: a piece may end a word early
    CHECK(find(*lmdb, "ratedisk", 100) == Strings{"prefix:rateDiskWriter", "word:getRaTeDisk",
                                                  "word:getRatEdisk", "word:getRateDisk",
                                                  "word:getRatedIsk", "word:newRatedDisk",
                                                  "word:isRateDiskette", "word:x_rate_di_skip",
                                                  "word:ratTheEdisk", "substring:pirateDisk"});
}

/// 4,228 of LevelDB's names (its gtest classes and 4,000 others, sampled), each a definition.
std::vector<Symbol> leveldbNames() {
    std::ifstream in(SYMDEX_FIXTURES_DIR "/names/leveldb_names.txt");
    std::vector<Symbol> symbols;
    std::string name;
    uint32_t line = 0;
    while (std::getline(in, name))
        symbols.push_back(makeSymbol(name, ++line, true));
    REQUIRE(symbols.size() > 4000);
    return symbols;
}

TEST_CASE("long abbreviations of names of many words find what checking every name finds",
          "[store][names]") {
    // 4,228 of LevelDB's names (its gtest classes and 4,000 others, sampled): "faitftnlorte"
    // cuts into word starts hundreds of ways, and FaultInjectionTest_FaultTestNoLogReuse_Test's
    // (fa|i|t|f|t|n|lo|re|te) is not among the first 64 unless the ways whose initials no name
    // has are left out (with them counted, 2 assertions fail).
    const std::vector<Symbol> symbols = leveldbNames();
    BothStores stores;
    stores.publish({symbols});
    auto& lmdb = stores.lmdb;
    MemoryStore& memory = stores.memory;
    const std::vector<std::pair<std::string, std::string>> queries = {
        {"faitftnlorte", "FaultInjectionTest_FaultTestNoLogReuse_Test"},
        {"dbterwrtsakete", "DBTest_RepeatedWritesToSameKey_Test"},
        {"dbteimwidancte", "DBTest_IterMultiWithDeleteAndCompaction_Test"},
        {"adbointetobofite", "AddBoundaryInputsTest_TestOneBoundaryFiles_Test"},
        {"enpottcloelfit", "EnvPosixTest_TestCloseOnExecLockFile_Test"},
        {"entetonoeft", "EnvTest_TestOpenNonExistentFile_Test"},
        {"ltpaliigte", "LogTest_PartialLastIsIgnored_Test"}};
    for (const auto& [query, target] : queries) {
        INFO(query);
        const Strings found = find(*lmdb, query, 100);
        CHECK(found == find(memory, query, 100));
        CHECK(std::find(found.begin(), found.end(), "word:" + target) != found.end());
    }
}

TEST_CASE("with the names in memory, mid-name substrings and word starts find what checking every "
          "name finds",
          "[store][names]") {
    // The daemon's searches: the summaries hold the names, so a constraint of a few hundred
    // names that several cuts or runs share is read alone, once (NameSearch::addPlans), and
    // what it holds is checked name by name. Four words of sixteen, whose initials are four
    // letters: each three initials in a row are some hundreds of names', and the many ways to
    // cut a query share them, as in a big tree's camelCase names.
    const std::vector<std::string> words = {"Am",   "Amber",  "Ample", "Arc", "Me",   "Mer",
                                            "Mint", "Mole",   "Ra",    "Rat", "Rope", "Rim",
                                            "Th",   "Thread", "Tin",   "Top"};
    std::vector<Symbol> symbols;
    uint32_t line = 0;
    uint32_t state = 12345;
    auto random = [&] { return (state = state * 1103515245u + 12345u) >> 16; };
    std::set<std::string> names;
    while (names.size() < 6000) {
        std::string name = "x";
        for (int w = 0; w < 4; ++w)
            name += words[random() % words.size()];
        if (names.insert(name).second)
            symbols.push_back(makeSymbol(name, ++line, line % 3 != 0));
    }
    BothStores stores;
    stores.publish({symbols});
    auto& lmdb = stores.lmdb;
    REQUIRE(lmdb->prepareSummaries().has_value());
    MemoryStore& memory = stores.memory;
    const Strings queries = {"amerath", "mbermer", "amerat",  "mertin", "aropt", "ambmerra",
                             "pleme",   "berme",   "readamb", "intmo",  "opeth", "ratthre",
                             "arcrimt", "mpler",   "hreadam", "amra",   "mrt",   "ambermerti"};
    size_t answered = 0;
    for (const std::string& query : queries)
        for (size_t limit : {size_t(5), size_t(100), size_t(1000)}) {
            INFO(query << " limit " << limit);
            const Strings found = find(*lmdb, query, limit);
            CHECK(found == find(memory, query, limit));
            answered += !found.empty();
        }
    CHECK(answered == 3 * queries.size());
}

namespace {

/// Each match in full: rank, qualified name, definition or not, where, and how many occurrences.
Strings findInFull(const Store& store, const std::string& query, size_t limit) {
    Strings out;
    for (const NameMatch& m : store.findSymbols(query, limit))
        out.push_back(std::to_string(int(m.rank)) + " " + m.best.symbol.qualifiedName +
                      (m.best.symbol.isDefinition() ? " def " : " decl ") + m.best.path + ":" +
                      std::to_string(m.best.symbol.location.line) + " x" +
                      std::to_string(m.occurrences));
    return out;
}

} // namespace

TEST_CASE("names whose declarations cannot rank among the first asked for are passed over, and "
          "the answers are those of checking every name",
          "[store][names]") {
    // 240 names starting with "pa", of two lengths, in namespaces of 1-2 letters: declared in
    // one file, defined (most of them) in another, some specializations. Many tie up to the
    // qualified name's length, so that the order of the last answers taken falls to the
    // qualified names themselves: a name passed over at a tie would be missed.
    const char* words[] = {"ck",  "th",  "rs",  "in",  "ri",  "ss",
                           "tte", "rmA", "rcB", "tch", "dds", "lle"};
    std::vector<std::vector<Symbol>> files(4);
    uint32_t line = 1;
    for (int i = 0; i < 240; ++i) {
        const std::string space(size_t(1 + i % 2), char('e' - (i / 2) % 5));
        const std::string name = "pa" + std::string(words[i % 12]) + std::to_string(i / 12);
        const std::string qualified = space + "::" + name;
        Symbol declaration = makeSymbol(qualified, line, false);
        Symbol definition = makeSymbol(qualified, line + 1, true);
        if (i % 11 == 0)
            definition.flags |= kSpecialization, declaration.flags |= kSpecialization;
        files[size_t(i % 2)].push_back(declaration);
        if (i % 5 != 0) // the rest are only declared
            files[2 + size_t(i % 2)].push_back(definition);
        line += 2;
    }
    BothStores stores;
    stores.publish(files);
    const Strings queries = {"pa", "p", "pac", "pam", "pat", "parse", "pr", "pdx"};
    auto compare = [&](const char* when) {
        for (const std::string& query : queries)
            for (size_t limit : {size_t(1), size_t(7), size_t(25), size_t(60), size_t(1000)}) {
                INFO(when << ": " << query << " limit " << limit);
                const Strings found = findInFull(*stores.lmdb, query, limit);
                CHECK(found == findInFull(stores.memory, query, limit));
                if (query == "pa") // every one of the 240 symbols, up to the limit
                    CHECK(found.size() == std::min<size_t>(limit, 240));
            }
    };
    compare("committed");
    // The definitions of one file become declarations, not yet committed (the overlay's
    // declarations carry their ranks too), then committed.
    std::vector<Symbol> changed = files[2];
    for (Symbol& s : changed)
        s.flags &= ~kDefinition;
    for (Store* store :
         {static_cast<Store*>(stores.lmdb.get()), static_cast<Store*>(&stores.memory)})
        store->publish(makeTu("/p/f2.cc", changed));
    compare("staged");
    stores.lmdb->flush();
    stores.memory.flush();
    compare("re-indexed");
}

TEST_CASE("a name's declarations are grouped by USR and counted, the definition shown, whether "
          "or not the store decodes the declarations a definition already shows",
          "[store][names]") {
    // ns::open: declared in f0 and f1, defined in f1 and f2 (the first by path is shown); an
    // overload of it only declared in f0; other::open declared in f0, defined in f3.
    auto overload = [](uint32_t line, bool definition) {
        Symbol s = makeSymbol("ns::open", line, definition);
        s.usr = "c:@ns::open#I";
        return s;
    };
    std::vector<std::vector<Symbol>> files = {
        {makeSymbol("ns::open", 10, false), overload(11, false),
         makeSymbol("other::open", 12, false)},
        {makeSymbol("ns::open", 20, false), makeSymbol("ns::open", 30, true)},
        {makeSymbol("ns::open", 5, true)},
        {makeSymbol("other::open", 7, true)}};
    BothStores stores;
    stores.publish(files);
    auto check = [&](const char* when, const Strings& expected) {
        INFO(when);
        for (const char* query : {"open", "op", "ns::open"}) {
            INFO(query);
            const Strings found = findInFull(*stores.lmdb, query, 10);
            CHECK(found == findInFull(stores.memory, query, 10));
            if (std::string(query) == "open")
                CHECK(found == expected);
        }
    };
    check("committed", {"0 ns::open def /p/f1.cc:30 x4", "0 other::open def /p/f3.cc:7 x2",
                        "0 ns::open decl /p/f0.cc:11 x1"});
    // f1 loses its definition and the overload gains one in a new file, not yet committed.
    for (Store* store :
         {static_cast<Store*>(stores.lmdb.get()), static_cast<Store*>(&stores.memory)}) {
        store->publish(makeTu("/p/f1.cc", {makeSymbol("ns::open", 20, false)}));
        store->publish(makeTu("/p/f4.cc", {overload(3, true)}));
    }
    const Strings edited = {"0 ns::open def /p/f2.cc:5 x3", "0 ns::open def /p/f4.cc:3 x2",
                            "0 other::open def /p/f3.cc:7 x2"};
    check("staged", edited);
    stores.lmdb->flush();
    stores.memory.flush();
    check("committed again", edited);
}

TEST_CASE(
    "a search of a prepared snapshot, which counts initials from memory, finds what checking "
    "every name finds, and a later snapshot is not answered from the counts of an earlier one",
    "[store][names]") {
    const std::vector<Symbol> symbols = leveldbNames();
    // The names from the 2,001st on, then all: the long abbreviations below find names of the
    // first 2,000 (FaultInjectionTest_... is the 601st), whose cuts are the ways whose initials
    // some name has; the counts of the first snapshot do not have them all.
    const std::vector<Symbol> first(symbols.begin() + 2000, symbols.end());
    BothStores stores;
    stores.publish({first});
    auto& lmdb = stores.lmdb;
    MemoryStore& memory = stores.memory;
    const Strings queries = {"faitftnlorte",   "dbterwrtsakete", "adbointetobofite",
                             "enpottcloelfit", "ltpaliigte",     "glps",
                             "dbte",           "wrba",           "tete"};
    auto agree = [&](const char* when) {
        INFO(when);
        for (const std::string& query : queries) {
            INFO(query);
            CHECK(find(*lmdb, query, 100) == find(memory, query, 100));
        }
    };
    agree("half, unprepared");
    lmdb->prepareNameSearch();
    agree("half, prepared");
    stores.publish({symbols}); // /p/f0.cc again, now with every name
    agree("all, a snapshot after the prepared one");
    const Strings all = find(*lmdb, "faitftnlorte", 100);
    CHECK(std::find(all.begin(), all.end(), "word:FaultInjectionTest_FaultTestNoLogReuse_Test") !=
          all.end());
    // Preparing while searches run (each thread's searches agree with the unprepared answer).
    const Strings expected = find(memory, "faitftnlorte", 100);
    std::vector<Strings> answers(3);
    std::vector<std::thread> threads;
    threads.emplace_back([&] { lmdb->prepareNameSearch(); });
    for (size_t t = 0; t < answers.size(); ++t)
        threads.emplace_back([&, t] { answers[t] = find(*lmdb, "faitftnlorte", 100); });
    for (std::thread& thread : threads)
        thread.join();
    for (const Strings& answer : answers)
        CHECK(answer == expected);
    agree("all, prepared");
    stores.publish({first}); // the rest removed again
    lmdb->prepareNameSearch();
    agree("half again, prepared");
}

TEST_CASE("declarations summaries cannot give back exactly are decoded by brief searches, each "
          "block on its own",
          "[store][names]") {
    ScratchStore scratch;
    auto& store = scratch.store;
    const std::string longName = "veryLong" + std::string(60, 'x') + "Name"; // 72 characters
    Symbol conversion = makeSymbol("ops::Num::operator bool", 1, true);
    conversion.name = "operator const std::locale &"; // not the qualified name's tail
    Symbol farColumn = makeSymbol("farColumnName", 2, true);
    farColumn.location.column = 70000;
    Symbol utf8 = makeSymbol("gr\xc3\xb6\xc3\x9f"
                             "eZahl",
                             3, true);
    // Each in a file of its own (a block of its own), beside a file of plain names.
    store->publish(makeTu("/p/long.cc", {makeSymbol(longName, 1, true)}));
    store->publish(makeTu("/p/conversion.cc", {conversion}));
    store->publish(makeTu("/p/far.cc", {farColumn}));
    store->publish(makeTu("/p/utf8.cc", {utf8}));
    store->publish(makeTu("/p/plain.cc", library()));
    store->flush();
    const SummaryStats stats = store->prepareSummaries().value();
    CHECK(stats.decoded == 5);
    CHECK(stats.blocks == 1); // plain.cc's only
    CHECK(stats.rows == library().size());
    auto shown = [&](const std::string& query, NameDetail detail) {
        Strings out;
        for (const NameMatch& m : store->findSymbols(query, 100, detail))
            out.push_back(m.best.symbol.qualifiedName + "|" + m.best.symbol.name + "|" +
                          std::to_string(m.best.symbol.location.line) + ":" +
                          std::to_string(m.best.symbol.location.column) + "|" +
                          (m.best.symbol.usr.empty() ? "summary" : "decoded"));
        return out;
    };
    CHECK(shown(longName, NameDetail::Brief) ==
          Strings{longName + "|" + longName + "|1:5|decoded"});
    CHECK(shown("operator const", NameDetail::Brief) ==
          Strings{"ops::Num::operator bool|operator const std::locale &|1:5|decoded"});
    CHECK(shown("farColumn", NameDetail::Brief) ==
          Strings{"farColumnName|farColumnName|2:70000|decoded"});
    CHECK(shown("ZAHL", NameDetail::Brief) ==
          Strings{utf8.name + "|" + utf8.name + "|3:5|decoded"});
    CHECK(shown("flushbuf", NameDetail::Brief) ==
          Strings{"flushBuffer|flushBuffer|1:5|summary",
                  "FlushBufferRecord|FlushBufferRecord|2:5|summary"});
    CHECK(shown("flushbuf", NameDetail::Full) ==
          Strings{"flushBuffer|flushBuffer|1:5|decoded",
                  "FlushBufferRecord|FlushBufferRecord|2:5|decoded"});
}

TEST_CASE("a prepared snapshot answers a name's declarations by its id as its names row does: "
          "spellings that share a key, blocks not summarized, files staged over it",
          "[store][names]") {
    ScratchStore scratch;
    auto& store = scratch.store;
    const StoreOptions& options = scratch.options;
    // library(): ten names (leveldb::Options and other::Options are one name). Besides: a second
    // declaration of flushBuffer; utf8LENGTH, which shares utf8Length's key; bufferSize in a
    // block the summaries cannot hold (a column past 65,535).
    Symbol farColumn = makeSymbol("bufferSize", 2, false);
    farColumn.location.column = 70000;
    store->publish(makeTu("/p/plain.cc", library()));
    store->publish(makeTu(
        "/p/more.cc", {makeSymbol("flushBuffer", 40, false), makeSymbol("utf8LENGTH", 41, true)}));
    store->publish(makeTu("/p/far.cc", {farColumn}));
    // rebuffer defined again in a file before plain.cc by path, and declared there; twenty
    // declarations of open, seventeen overloads (more USRs than a name's are looked through
    // before they are mapped).
    std::vector<Symbol> others = {makeSymbol("rebuffer", 61, false),
                                  makeSymbol("rebuffer", 60, true)};
    for (uint32_t i = 0; i < 20; ++i) {
        Symbol open = makeSymbol("open", 70 + i, i % 3 == 0);
        open.usr += "#" + std::to_string(i % 17);
        others.push_back(open);
    }
    store->publish(makeTu("/p/a.cc", others));
    store->flush();
    const SummaryStats stats = store->prepareSummaries().value();
    // Twelve names, less utf8Length and utf8LENGTH (one row for both) and bufferSize.
    CHECK(stats.names == 9);

    auto shown = [&](const std::string& query, NameDetail detail) {
        Strings out;
        for (const NameMatch& m : store->findSymbols(query, 100, detail))
            out.push_back(m.best.symbol.qualifiedName + " " + m.best.path + ":" +
                          std::to_string(m.best.symbol.location.line) + ":" +
                          std::to_string(m.best.symbol.location.column) +
                          (m.best.symbol.isDefinition() ? " def x" : " decl x") +
                          std::to_string(m.occurrences));
        return out;
    };
    const Strings queries = {"flushbuf", "buffer", "fbr",    "glps",    "options",
                             "opt",      "length", "utf8",   "bufsize", "uffer",
                             "ength",    "rebuf",  "httpse", "ushbu",   "pen"};
    auto agree = [&](const char* when) {
        INFO(when);
        for (const std::string& query : queries) {
            INFO(query);
            CHECK(shown(query, NameDetail::Brief) == shown(query, NameDetail::Full));
        }
    };
    agree("committed");
    CHECK(
        shown("ushbu", NameDetail::Brief) ==
        Strings{"flushBuffer /p/plain.cc:1:5 def x2", "FlushBufferRecord /p/plain.cc:2:5 decl x1"});
    CHECK(shown("ength", NameDetail::Brief) ==
          Strings{"get_length /p/plain.cc:4:5 def x1", "utf8LENGTH /p/more.cc:41:5 def x1",
                  "utf8Length /p/plain.cc:11:5 def x1",
                  "GetLengthPrefixedSlice /p/plain.cc:3:5 def x1"});
    CHECK(shown("bufsize", NameDetail::Brief) == Strings{"bufferSize /p/plain.cc:9:5 def x2"});
    CHECK(shown("ebuf", NameDetail::Brief) == Strings{"rebuffer /p/a.cc:60:5 def x3"});
    const Strings opens = shown("pen", NameDetail::Brief);
    REQUIRE(opens.size() == 18);                   // 17 overloads of open, and OpenDB
    CHECK(opens[0] == "open /p/a.cc:70:5 def x2"); // #0: lines 70 (a definition) and 87
    CHECK(std::count(opens.begin(), opens.end(), "open /p/a.cc:72:5 decl x2") == 1); // 72, 89

    // Staged over the prepared snapshot: more.cc now defines flushBuffer (first by path of the
    // two definitions), and plain.cc no longer has rebuffer (a.cc's two are left); the
    // summaries still hold both files as committed.
    store->publish(makeTu("/p/more.cc", {makeSymbol("flushBuffer", 50, true)}));
    std::vector<Symbol> fewer = library();
    std::erase_if(fewer, [](const Symbol& s) { return s.name == "rebuffer"; });
    store->publish(makeTu("/p/plain.cc", fewer));
    agree("staged");
    CHECK(
        shown("ushbu", NameDetail::Brief) ==
        Strings{"flushBuffer /p/more.cc:50:5 def x2", "FlushBufferRecord /p/plain.cc:2:5 decl x1"});
    CHECK(shown("rebuf", NameDetail::Brief) == Strings{"rebuffer /p/a.cc:60:5 def x2"});
    CHECK(shown("ength", NameDetail::Brief) ==
          Strings{"get_length /p/plain.cc:4:5 def x1", "utf8Length /p/plain.cc:11:5 def x1",
                  "GetLengthPrefixedSlice /p/plain.cc:3:5 def x1"});
}
