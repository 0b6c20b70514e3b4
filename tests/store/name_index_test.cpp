// The name index (store/name_index.h): how names split into words, how queries match and rank,
// that the LMDB store's index finds what a check of every name finds (the memory store has no
// index), and that re-indexing leaves no entry of a removed or renamed name behind.
#include "store/encoding.h"
#include "store/lmdb.h"
#include "store/memory_store.h"
#include "store/name_index.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>

using namespace symdex;
using symdex::test::TempDir;
using Strings = std::vector<std::string>;

namespace {

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
        byId[uint32_t(readBigEndian(k, 4))] = std::string(v);
    });
    each("nameIds", 0, [&](std::string_view k, std::string_view v) {
        CHECK(byId.at(uint32_t(readBigEndian(v, 4))) == k);
        out << "name " << k << " x" << readBigEndian(v.substr(4), 4) << "\n";
    });
    each("words", 0, [&](std::string_view k, std::string_view v) {
        out << "word " << k << " x" << readBigEndian(v, 4) << "\n";
    });
    std::map<std::string, std::set<std::string>> postings;
    each("postings", MDB_DUPSORT | MDB_DUPFIXED, [&](std::string_view k, std::string_view v) {
        const std::string& name = byId.at(uint32_t(readBigEndian(v.substr(2), 4)));
        CHECK(readBigEndian(v, 2) == name.size());
        postings[std::string(k)].insert(name);
    });
    for (const auto& [token, names] : postings) {
        out << "token " << token << ":";
        for (const std::string& name : names)
            out << " " << name;
        out << "\n";
    }
    CHECK(byId.size() == txn.entries(txn.openDb("nameIds", 0)));
    return out.str();
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
}

TEST_CASE("name search ranks exact, prefix, word start, substring, definitions and shorter "
          "names first, and finds the same through the index as by checking every name",
          "[store][names]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    options.initialMapSize = size_t(64) << 20;
    auto lmdb = SymbolStore::open(options);
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
        store->apply(StoreEdit{{}, {"/p/two.cc"}, {}});
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
