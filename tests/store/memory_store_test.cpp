// The in-memory store against the LMDB store: the same publications and edits must give the same
// store (dump) and the same answers to every query. Hand-made publications check the write rules
// (priorities within a generation, removals, stamps); the golden tree indexed by the Indexer
// into both, then edited and re-indexed, checks them on real parses.
#include "indexer/indexer.h"
#include "store/memory_store.h"
#include "store/name_index.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <set>
#include <sstream>

using namespace symdex;
using symdex::test::TempDir;

namespace {

std::string dumpOf(const Store& store) {
    std::ostringstream out;
    dumpStore(store, out);
    return out.str();
}

std::string hit(const std::string& path, Position pos) {
    return path + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

/// Every query's answer for every name the store holds, one line each.
std::string answersOf(const Store& store) {
    const StoreSnapshot snapshot = store.snapshot();
    std::set<std::string> names, paths;
    snapshot.forEachFile([&](uint32_t, const FileRecord& f) {
        paths.insert(f.path);
        for (const Symbol& s : snapshot.fileSymbols(f.path).value_or(std::vector<Symbol>{})) {
            names.insert(s.name);
            names.insert(s.qualifiedName);
        }
    });
    std::ostringstream out;
    // Beside each name, queries of every kind built from it: its first two letters, its
    // initials, a piece starting inside its first word, and its letters run together.
    std::set<std::string> queries = names;
    for (const std::string& name : names) {
        queries.insert(name.substr(0, 2));
        std::string initials, joined;
        for (const std::string& word : nameWords(name)) {
            initials += word[0];
            joined += word;
        }
        queries.insert(initials);
        queries.insert(joined);
        if (joined.size() > 5)
            queries.insert(joined.substr(1, 5));
    }
    for (const std::string& query : queries) {
        out << "find " << query << ":";
        for (const NameMatch& m : snapshot.findSymbols(query, 20))
            out << " " << int(m.rank) << "/" << m.best.symbol.qualifiedName << "@"
                << hit(m.best.path, m.best.symbol.location) << "x" << m.occurrences;
        out << "\n";
    }
    for (const std::string& name : names) {
        out << "find " << name << ":";
        for (const NameMatch& m : snapshot.findSymbols(name, 20))
            out << " " << int(m.rank) << "/" << m.best.symbol.qualifiedName << "@"
                << hit(m.best.path, m.best.symbol.location) << "x" << m.occurrences;
        out << "\nresolve " << name << ":";
        for (uint64_t usr : snapshot.resolveName(name)) {
            out << " " << usr << " name " << snapshot.nameOf(usr).value_or("-") << " decls";
            if (!snapshot.occurrences(usr).empty())
                CHECK(snapshot.nameOf(usr) == snapshot.occurrences(usr).front().symbol.name);
            for (const SymbolHit& h : snapshot.occurrences(usr))
                out << " " << hit(h.path, h.symbol.location);
            out << " refs";
            for (const ReferenceHit& h : snapshot.references(usr))
                out << " " << hit(h.path, h.reference.location) << "/" << h.reference.roles;
            for (Relation relation :
                 {Relation::Callers, Relation::Callees, Relation::Bases, Relation::Derived,
                  Relation::Overrides, Relation::OverriddenBy}) {
                out << " " << relationName(relation);
                for (const Related& r : snapshot.related(usr, relation)) {
                    out << " " << r.usrHash << "@";
                    for (const ReferenceHit& h : r.sites)
                        out << hit(h.path, h.reference.location) << ",";
                }
            }
        }
        out << "\n";
    }
    for (const std::string& path : paths) {
        const std::vector<Symbol> symbols = *snapshot.fileSymbols(path);
        const std::vector<Reference> refs = *snapshot.fileReferences(path);
        out << "file " << path << ": " << symbols.size() << " symbols, " << refs.size()
            << " references\n";
        // Each line's rows, as the binary search finds them, are those of the whole file there.
        uint32_t lastLine = 0;
        for (const Symbol& s : symbols)
            lastLine = std::max(lastLine, s.location.line);
        for (const Reference& r : refs)
            lastLine = std::max(lastLine, r.location.line);
        for (uint32_t line = 0; line <= lastLine + 1; ++line) {
            std::vector<std::string> expected, found;
            for (const Symbol& s : symbols)
                if (s.location.line == line)
                    expected.push_back(s.usr + hit(path, s.location));
            for (const Reference& r : refs)
                if (r.location.line == line)
                    expected.push_back(std::to_string(r.usrHash) + hit(path, r.location));
            const std::vector<Symbol> symbolsInLines =
                *snapshot.fileSymbolsInLines(path, line, line);
            const std::vector<Reference> refsInLines =
                *snapshot.fileReferencesInLines(path, line, line);
            for (const Symbol& s : symbolsInLines)
                found.push_back(s.usr + hit(path, s.location));
            for (const Reference& r : refsInLines)
                found.push_back(std::to_string(r.usrHash) + hit(path, r.location));
            INFO(path << ":" << line);
            REQUIRE(found == expected);
        }
    }
    CHECK_FALSE(snapshot.fileSymbolsInLines("/no/such/file.cpp", 1, 1));
    CHECK_FALSE(snapshot.fileReferencesInLines("/no/such/file.cpp", 1, 1));
    const StoreStats st = snapshot.stats();
    out << "stats " << st.files << " " << st.tus << " " << st.symbols << " " << st.references << " "
        << st.distinctNames << " " << st.tusWithErrors << " " << st.tusFailed << "\n";
    return out.str();
}

void requireSame(const Store& lmdb, const Store& memory) {
    REQUIRE(dumpOf(memory) == dumpOf(lmdb));
    REQUIRE(answersOf(memory) == answersOf(lmdb));
}

Symbol symbol(const std::string& name, uint32_t line, bool definition = true) {
    Symbol s;
    s.usr = "c:@F@" + name;
    s.name = name;
    s.qualifiedName = name;
    s.kind = SymbolKind::Function;
    s.location = {line, 5};
    s.extent = {{line, 1}, {line, 20}};
    if (definition)
        s.flags |= kDefinition;
    return s;
}

Reference reference(const std::string& name, uint32_t line) {
    Reference r;
    r.usrHash = symbol(name, 0).usrHash();
    r.location = {line, 3};
    r.roles = kRoleCall;
    return r;
}

IndexedFile file(const std::string& path, std::vector<Symbol> symbols,
                 std::vector<Reference> refs = {}, uint32_t priority = 0) {
    IndexedFile f;
    f.file.path = path;
    f.file.contentHash = std::hash<std::string>{}(path + std::to_string(symbols.size()));
    f.symbols = std::move(symbols);
    f.references = std::move(refs);
    f.priority = priority;
    return f;
}

IndexedTu tu(const std::string& main, std::vector<IndexedFile> files,
             std::vector<std::string> included, uint64_t generation) {
    IndexedTu t;
    t.mainFile = main;
    t.includedFiles = std::move(included);
    t.files = std::move(files);
    t.generation = generation;
    t.absentPaths = {"/t/missing.h"};
    return t;
}

} // namespace

TEST_CASE("memory store: the write rules are the LMDB store's", "[store][memory]") {
    TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / ".symdex";
    auto lmdb = SymbolStore::open(options);
    MemoryStore memory;
    auto both = [&](auto&& write) {
        write(static_cast<Store&>(*lmdb));
        write(static_cast<Store&>(memory));
        lmdb->flush();
        memory.flush();
        requireSame(*lmdb, memory);
    };

    // Two TUs of one generation share h.h: the lower priority number wins, whatever the order.
    both([](Store& s) {
        s.publish(tu("/t/b.cpp",
                     {file("/t/b.cpp", {symbol("b", 1)}, {reference("h2", 2)}),
                      file("/t/h.h", {symbol("h2", 1)}, {}, 2)},
                     {"/t/b.cpp", "/t/h.h"}, 1));
        s.publish(tu("/t/a.cpp",
                     {file("/t/a.cpp", {symbol("a", 1)}, {reference("h1", 3)}),
                      file("/t/h.h", {symbol("h1", 1), symbol("h1", 2, false)}, {}, 1)},
                     {"/t/a.cpp", "/t/h.h"}, 1));
    });
    CHECK(memory.resolveName("h2").empty());
    CHECK(memory.occurrences(memory.resolveName("h1").at(0)).size() == 2);
    CHECK(memory.file("/t/h.h")->ownerFileId == memory.snapshot().tu("/t/a.cpp")->fileIds[0]);

    // A later generation replaces it whatever its priority; generation 0 always does.
    both([](Store& s) {
        s.publish(tu("/t/b.cpp",
                     {file("/t/b.cpp", {symbol("b", 1)}), file("/t/h.h", {symbol("h3", 4)}, {}, 7)},
                     {"/t/b.cpp", "/t/h.h"}, 2));
    });
    CHECK(memory.resolveName("h1").empty());
    REQUIRE(memory.resolveName("h3").size() == 1);

    // A snapshot keeps what it saw while the store changes.
    const StoreSnapshot before = memory.snapshot();
    both([](Store& s) {
        StoreEdit edit;
        edit.removeTus = {"/t/a.cpp"};
        edit.removeFiles = {"/t/a.cpp"};
        FileRecord stamp;
        stamp.path = "/t/h.h";
        stamp.mtimeNs = 42;
        stamp.size = 7;
        edit.touchFiles = {stamp};
        edit.removeAbsentPaths = {"/t/never-seen.h"};
        s.apply(edit);
    });
    CHECK(!memory.file("/t/a.cpp"));
    CHECK(!memory.tu("/t/a.cpp"));
    CHECK(memory.file("/t/h.h")->mtimeNs == 42);
    CHECK(memory.resolveName("a").empty());
    CHECK(before.file("/t/a.cpp"));
    CHECK(before.resolveName("a").size() == 1);
}

TEST_CASE("memory store: the golden tree indexes, re-indexes and prunes as on LMDB",
          "[store][memory]") {
    TempDir dir;
    test::copyFixture("golden", dir.path());
    const std::vector<std::string> sources = {"src/circle.cpp", "src/util.cpp", "src/main.cpp",
                                              "src/broken.cpp"};
    test::writeCompileDb(dir.path(), sources, {"-std=c++17", "-Iinclude"});
    StoreOptions options;
    options.directory = dir.path() / ".symdex";
    auto lmdb = SymbolStore::open(options);
    MemoryStore memory;
    auto indexBoth = [&] {
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions indexOptions;
        indexOptions.threads = 2;
        const IndexSummary a = Indexer(*lmdb, indexOptions).run(*db);
        const IndexSummary b = Indexer(memory, indexOptions).run(*db);
        CHECK(a.tusParsed == b.tusParsed);
        CHECK(a.tusUpToDate == b.tusUpToDate);
        requireSame(*lmdb, memory);
        return b;
    };

    IndexSummary first = indexBoth();
    CHECK(first.tusParsed == 4);
    CHECK(memory.resolveName("geo::Circle").size() == 1);
    CHECK(indexBoth().tusParsed == 0); // up to date on the memory store too

    // A header edit re-parses the TUs that include it.
    const std::string header = dir / "include/shapes.h";
    test::writeFile(header, test::readFile(header) + "\nnamespace geo { int added(); }\n");
    IndexSummary edited = indexBoth();
    CHECK(edited.tusParsed >= 3);
    CHECK(memory.resolveName("geo::added").size() == 1);

    // A TU that leaves the database leaves both stores alike.
    test::writeCompileDb(dir.path(), {"src/circle.cpp", "src/main.cpp"},
                         {"-std=c++17", "-Iinclude"});
    IndexSummary pruned = indexBoth();
    CHECK(pruned.tusRemoved == 2);
    CHECK(!memory.tu(dir / "src/util.cpp"));
}
