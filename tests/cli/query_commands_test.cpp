// `symdex find/def/refs/symbols` on the in-memory store: the commands run in this process with a
// backend over a MemoryStore holding the golden tree, and print exactly what they print from the
// LMDB store of the same tree (and, daemon_test checks, through symdexd).
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "indexer/indexer.h"
#include "store/memory_store.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>
#include <unistd.h>

using namespace symdex;
using symdex::test::TempDir;

namespace {

struct Printed {
    int rc = -1;
    std::string out;
};

/// Runs `command` with stdout going to a string.
Printed capture(const std::function<int()>& command) {
    std::fflush(stdout);
    FILE* file = std::tmpfile();
    REQUIRE(file);
    const int saved = ::dup(STDOUT_FILENO);
    ::dup2(::fileno(file), STDOUT_FILENO);
    Printed printed;
    try {
        printed.rc = command();
    } catch (...) {
        std::fflush(stdout);
        ::dup2(saved, STDOUT_FILENO);
        ::close(saved);
        std::fclose(file);
        throw;
    }
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    std::rewind(file);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
        printed.out.append(buffer, n);
    std::fclose(file);
    return printed;
}

using Command = int (*)(const QStringList&, const cli::OpenBackend&);

/// The golden tree indexed twice: into a MemoryStore, and into the LMDB store in dir/.symdex.
struct Trees {
    TempDir dir;
    std::shared_ptr<MemoryStore> memory = std::make_shared<MemoryStore>();

    Trees() {
        test::copyFixture("golden", dir.path());
        test::writeCompileDb(dir.path(),
                             {"src/circle.cpp", "src/util.cpp", "src/main.cpp", "src/broken.cpp"},
                             {"-std=c++17", "-Iinclude"});
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        IndexOptions options;
        options.threads = 2;
        REQUIRE(Indexer(*memory, options).run(*db).tusParsed == 4);
        StoreOptions storeOptions;
        storeOptions.directory = dir.path() / ".symdex";
        auto lmdb = SymbolStore::open(storeOptions);
        REQUIRE(Indexer(*lmdb, options).run(*db).tusParsed == 4);
    } // the LMDB store is closed: the commands open it again, read-only

    /// Runs `command` on the memory store, and on the LMDB store with --daemon never; requires
    /// the same exit code and output, and returns them.
    Printed run(Command command, const char* name, QStringList args) {
        const QStringList memoryArgs = QStringList{QString("symdex ") + name} + args;
        const QStringList lmdbArgs =
            memoryArgs +
            QStringList{"--store", QString::fromStdString(dir / ".symdex"), "--daemon", "never"};
        std::shared_ptr<const Store> store = memory;
        const Printed fromMemory = capture([&] {
            return command(memoryArgs,
                           [&](const QCommandLineParser&) { return cli::storeBackend(store); });
        });
        const Printed fromLmdb = capture([&] { return command(lmdbArgs, cli::openQueryBackend); });
        CHECK(fromMemory.out == fromLmdb.out);
        CHECK(fromMemory.rc == fromLmdb.rc);
        return fromMemory;
    }

    std::string path(const std::string& rel) const { return dir / rel; }
};

} // namespace

TEST_CASE("query commands print the same from the in-memory store as from LMDB", "[cli]") {
    Trees t;
    const std::string root = t.dir.path().string() + "/";

    Printed def = t.run(cli::runDef, "def", {"geo::Circle::area"});
    CHECK(def.rc == cli::kExitOk);
    CHECK(def.out == root + "src/circle.cpp:11:14: method geo::Circle::area\n");

    Printed all = t.run(cli::runDef, "def", {"geo::Circle::area", "--all"});
    CHECK(all.out == root + "include/shapes.h:29:10: method geo::Circle::area (declaration)\n" +
                         root + "src/circle.cpp:11:14: method geo::Circle::area\n");

    Printed find = t.run(cli::runFind, "find", {"scale"});
    CHECK(find.rc == cli::kExitOk);
    CHECK(std::count(find.out.begin(), find.out.end(), '\n') == 2); // the two overloads

    Printed refs = t.run(cli::runRefs, "refs", {"geo::counter", "--decls"});
    CHECK(refs.rc == cli::kExitOk);
    CHECK(refs.out.find(root + "src/circle.cpp:5:5: definition:") != std::string::npos);

    Printed outline =
        t.run(cli::runSymbols, "symbols", {QString::fromStdString(t.path("src/circle.cpp"))});
    CHECK(outline.rc == cli::kExitOk);
    CHECK(outline.out.find(t.path("src/circle.cpp") + ":11:14:   method area\n") !=
          std::string::npos); // nested in namespace geo

    for (Command json : {cli::runFind, cli::runDef, cli::runRefs})
        CHECK(t.run(json, "q", {"Circle", "--json"}).out.starts_with("["));

    // Relations.
    Printed callers = t.run(cli::runCallers, "callers", {"helper"});
    CHECK(callers.rc == cli::kExitOk);
    CHECK(callers.out == root + "src/main.cpp:10:12: main: return helper(circle) + clamped + "
                                "int(origin.x) + geo::counter;\n");
    Printed callees = t.run(cli::runCallees, "callees", {"geo::scale"});
    CHECK(callees.out == "# geo::scale (function)\n" + root +
                             "src/util.cpp:5:39: geo::detail::twice: int scale(int value) { return "
                             "detail::twice(value); }\n");
    CHECK(t.run(cli::runBases, "bases", {"geo::Circle"}).out ==
          root + "include/shapes.h:19:7: class geo::Shape\n");
    CHECK(t.run(cli::runDerived, "derived", {"geo::Shape", "--depth", "0"}).out ==
          root + "include/shapes.h:26:7: class geo::Circle\n");
    CHECK(t.run(cli::runOverrides, "overrides", {"geo::Shape::area"}).out ==
          root + "src/circle.cpp:11:14: method geo::Circle::area\n");
    CHECK(t.run(cli::runOverrides, "overrides", {"geo::Circle::area", "--up"}).out ==
          root + "include/shapes.h:22:18: method geo::Shape::area\n");
    CHECK(t.run(cli::runShow, "show", {"geo::Shape::area"}).out ==
          root + "include/shapes.h:22:18: method geo::Shape::area (declaration)\n"
                 "  signature: virtual Area area() const = 0\n"
                 "  references 1 callers 1 callees 0 overrides 0 overridden-by 1\n");
    CHECK(t.run(cli::runShow, "show", {"geo::Circle"}).out ==
          root + "include/shapes.h:26:7: class geo::Circle\n"
                 "  signature: class Circle : public Shape\n"
                 "  comment: A circle around the origin: the plain comment documents it too.\n"
                 "  references 5 bases 1 derived 0\n");
    CHECK(t.run(cli::runDerived, "derived", {"geo::Circle"}).rc == cli::kExitNotFound);
    for (Command json : {cli::runCallers, cli::runCallees, cli::runBases, cli::runDerived,
                         cli::runOverrides, cli::runShow})
        CHECK(t.run(json, "q", {"geo::Shape::area", "--json"}).out.starts_with("["));

    Printed none = t.run(cli::runDef, "def", {"no_such_symbol"});
    CHECK(none.rc == cli::kExitNotFound);
    CHECK(none.out.empty());
}

TEST_CASE("stats --slowest lists the TUs whose last parse took longest, slowest first", "[cli]") {
    Trees t;
    const QString store = QString::fromStdString(t.dir / ".symdex");
    const Printed text = capture([&] {
        return cli::runStats({"symdex stats", "--slowest", "2", "--store", store});
    });
    CHECK(text.rc == cli::kExitOk);
    // Three lines of figures, then the two TUs: "   S.SS s  PATH".
    std::vector<std::string> lines;
    std::istringstream in(text.out);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    REQUIRE(lines.size() == 5);
    std::vector<double> seconds;
    for (size_t i = 3; i < 5; ++i) {
        INFO(lines[i]);
        CHECK(lines[i].find(" s  ") != std::string::npos);
        CHECK(lines[i].ends_with(".cpp"));
        seconds.push_back(std::stod(lines[i]));
    }
    CHECK(seconds[0] >= seconds[1]);

    const Printed json = capture([&] {
        return cli::runStats({"symdex stats", "--slowest", "9", "--json", "--store", store});
    });
    const QJsonArray tus = QJsonDocument::fromJson(QByteArray::fromStdString(json.out))
                               .object()["slowestTus"]
                               .toArray();
    REQUIRE(tus.size() == 4); // every TU there is, no more
    for (qsizetype i = 1; i < tus.size(); ++i)
        CHECK(tus[i - 1].toObject()["parseMillis"].toInteger() >=
              tus[i].toObject()["parseMillis"].toInteger());
    CHECK(tus[0].toObject()["path"].toString().endsWith(".cpp"));

    CHECK_THROWS_AS(cli::runStats({"symdex stats", "--slowest", "0", "--store", store}),
                    cli::UsageError);
}
