// The daemon's request handlers in this process, on the in-memory store: the golden tree indexed
// by the daemon's own IndexService into a MemoryStore, then the LSP and symdex/* methods called
// as the server calls them (findMethod), with no socket, no LMDB and no child process. The
// end-to-end tests (daemon_test.cpp) run the same questions through the real symdexd.
#include "daemon/handlers/handler.h"
#include "daemon/index_service.h"
#include "daemon_harness.h"
#include "store/memory_store.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <thread>

using namespace symdex;
using namespace symdex::daemon;
using namespace std::chrono_literals;
using symdex::test::FixtureTree;
using Strings = std::vector<std::string>;

namespace {

/// The golden tree in a MemoryStore, indexed, and a server context over it.
struct MemoryServer {
    FixtureTree tree;
    MemoryStore store;
    std::unique_ptr<IndexService> indexer;
    std::unique_ptr<ServerContext> server;

    /// `prepare` edits the tree before it is indexed.
    explicit MemoryServer(const std::function<void(FixtureTree&)>& prepare = {}) {
        if (prepare)
            prepare(tree);
        IndexServiceOptions options;
        options.database = tree.root.string();
        options.threads = 2;
        options.lowPriority = false;
        indexer = std::make_unique<IndexService>(store, options, IndexService::Callbacks{});
        indexer->start();
        const auto deadline = std::chrono::steady_clock::now() + 120s;
        while (!indexer->status().lastRun && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(20ms);
        REQUIRE(indexer->status().lastRun);
        REQUIRE(indexer->status().lastRun->error.empty());
        server.reset(new ServerContext{store, *indexer,
                                       std::filesystem::canonical(tree.root).string(), "(memory)",
                                       "(none)", [] { return QJsonObject{}; }});
    }

    QJsonValue call(const char* method, const QJsonValue& params) {
        const MethodSpec* spec = findMethod(method);
        REQUIRE(spec);
        std::atomic<bool> cancelled{false};
        RequestContext request{*server, PositionEncoding::Utf16, cancelled};
        if (!spec->text)
            return spec->fn(request, params);
        // A handler that writes JSON text: what a client would parse.
        QJsonParseError error;
        const QJsonDocument doc =
            QJsonDocument::fromJson("[" + spec->text(request, params) + "]", &error);
        REQUIRE(error.error == QJsonParseError::NoError);
        return doc.array().at(0);
    }

    /// The JSON-RPC error code the call fails with (0 if it does not fail).
    int errorOf(const char* method, const QJsonValue& params) {
        try {
            call(method, params);
        } catch (const protocol::RpcError& e) {
            return e.code;
        }
        return 0;
    }
};

QJsonObject withDeclaration(QJsonObject params, bool include) {
    params["context"] = QJsonObject{{"includeDeclaration", include}};
    return params;
}

} // namespace

TEST_CASE("handlers: definition on a definition's name ignores declarations other TUs cannot see",
          "[handlers]") {
    // LevelDB's db/filename.cc declares WriteStringToFileSync, which util/env.cc defines: on the
    // definition, clangd (which sees env.cc's TU alone) answers the definition itself.
    MemoryServer s([](FixtureTree& tree) {
        std::ofstream(tree.path("src/util.cpp"), std::ios::app) << "int onlyHere() { return 1; }\n";
        std::ofstream(tree.path("src/fwd.cpp")) << "int onlyHere();\n"
                                                   "int useIt() { return onlyHere(); }\n";
        tree.sources.push_back("src/fwd.cpp");
        tree.writeDatabase();
    });
    using namespace symdex::test;
    const std::string util = s.tree.uri("src/util.cpp");
    const std::string fwd = s.tree.uri("src/fwd.cpp");
    CHECK(locations(s.call("textDocument/definition", positionParams(util, 9, 5)), s.tree) ==
          Strings{"src/util.cpp:9:4-9:12"});
    CHECK(locations(s.call("textDocument/definition", positionParams(fwd, 1, 22)), s.tree) ==
          Strings{"src/util.cpp:9:4-9:12"});
    // On the declaration, the definition.
    CHECK(locations(s.call("textDocument/definition", positionParams(fwd, 0, 5)), s.tree) ==
          Strings{"src/util.cpp:9:4-9:12"});
}

TEST_CASE("handlers: LSP answers on the in-memory store land on exact locations",
          "[daemon][handlers]") {
    MemoryServer s;
    const FixtureTree& tree = s.tree;
    const std::string main = tree.uri("src/main.cpp");
    using test::locations;
    using test::positionParams;

    // The same questions and answers as daemon_test's "LSP answers land on exact locations".
    CHECK(locations(s.call("textDocument/definition", positionParams(main, 9, 11)), tree) ==
          Strings{"src/main.cpp:2:11-2:17"});
    const std::string shapes = tree.uri("include/shapes.h");
    const std::string circleCpp = tree.uri("src/circle.cpp");
    CHECK(locations(s.call("textDocument/definition", positionParams(shapes, 27, 14)), tree) ==
          Strings{"src/circle.cpp:8:8-8:14"});
    CHECK(locations(s.call("textDocument/definition", positionParams(circleCpp, 8, 10)), tree) ==
          Strings{"include/shapes.h:27:13-27:19"});
    CHECK(locations(s.call("textDocument/declaration", positionParams(circleCpp, 8, 10)), tree) ==
          Strings{"include/shapes.h:27:13-27:19"});
    CHECK(locations(s.call("textDocument/definition", positionParams(main, 5, 16)), tree) ==
          Strings{"src/main.cpp:5:16-5:22"}); // a local variable: its own declaration
    CHECK(locations(s.call("textDocument/definition", positionParams(main, 9, 20)), tree) ==
          Strings{"src/main.cpp:5:16-5:22"});
    CHECK(locations(s.call("textDocument/definition", positionParams(main, 9, 61)), tree) ==
          Strings{"src/circle.cpp:4:4-4:11"});
    CHECK(s.call("textDocument/definition", positionParams(main, 9, 2)).isNull());

    const QJsonObject at = positionParams(tree.uri("src/util.cpp"), 4, 5);
    CHECK(locations(s.call("textDocument/references", withDeclaration(at, false)), tree) ==
          Strings{"src/broken.cpp:2:29-2:34", "src/main.cpp:6:27-6:32"});
    CHECK(locations(s.call("textDocument/references", withDeclaration(at, true)), tree) ==
          Strings{"include/shapes.h:44:4-44:9", "src/broken.cpp:2:29-2:34",
                  "src/main.cpp:6:27-6:32", "src/util.cpp:4:4-4:9"});
    // On an override, as clangd: the uses of the method it overrides (a call through the base
    // may land here) and that method's declaration; on the base, its overrides' declarations
    // with the declarations, and its own uses alone without.
    const QJsonObject override = positionParams(circleCpp, 10, 13);
    CHECK(locations(s.call("textDocument/references", withDeclaration(override, false)), tree) ==
          Strings{"include/shapes.h:21:17-21:21", "src/main.cpp:2:62-2:66"});
    CHECK(locations(s.call("textDocument/references", withDeclaration(override, true)), tree) ==
          Strings{"include/shapes.h:21:17-21:21", "include/shapes.h:28:9-28:13",
                  "src/circle.cpp:10:13-10:17", "src/main.cpp:2:62-2:66"});
    const QJsonObject base = positionParams(shapes, 21, 18);
    CHECK(locations(s.call("textDocument/references", withDeclaration(base, false)), tree) ==
          Strings{"src/main.cpp:2:62-2:66"});
    CHECK(locations(s.call("textDocument/references", withDeclaration(base, true)), tree) ==
          Strings{"include/shapes.h:21:17-21:21", "include/shapes.h:28:9-28:13",
                  "src/circle.cpp:10:13-10:17", "src/main.cpp:2:62-2:66"});

    const QJsonArray symbols =
        s.call("textDocument/documentSymbol",
               QJsonObject{{"textDocument", QJsonObject{{"uri", QString::fromStdString(
                                                                    tree.uri("src/circle.cpp"))}}}})
            .toArray();
    REQUIRE(symbols.size() == 1);
    Strings children;
    for (const QJsonValue& c : symbols[0]["children"].toArray())
        children.push_back(c["name"].toString().toStdString() + " " +
                           std::to_string(c["kind"].toInt()));
    CHECK(children == Strings{"counter 13", "~Shape 9", "Circle 9", "area 6"});

    const QJsonArray circle =
        s.call("workspace/symbol", QJsonObject{{"query", "circle"}}).toArray();
    REQUIRE(!circle.isEmpty());
    CHECK(circle[0]["name"].toString() == "Circle");
    CHECK(locations(QJsonArray{circle[0]["location"]}, tree) ==
          Strings{"include/shapes.h:25:6-25:12"});
}

TEST_CASE("handlers: symdex/* methods and bad params on the in-memory store",
          "[daemon][handlers]") {
    MemoryServer s;
    const QJsonArray found = s.call("symdex/find", QJsonObject{{"pattern", "scale"}}).toArray();
    REQUIRE(found.size() == 2); // the two overloads
    const QJsonArray usrs =
        s.call("symdex/resolve", QJsonObject{{"name", "geo::Circle"}}).toArray();
    REQUIRE(usrs.size() == 1);
    const QJsonArray decls =
        s.call("symdex/occurrences", QJsonObject{{"usrHash", usrs[0]}}).toArray();
    CHECK(decls.size() >= 1);

    const QJsonObject stats = s.call("symdex/stats", QJsonValue()).toObject();
    CHECK(stats["tus"].toInt() == 4);
    CHECK(stats["store"].toString() == "(memory)");
    const QJsonObject status = s.call("symdex/status", QJsonValue()).toObject();
    CHECK(status["lastRun"]["tus"].toArray().size() == 4); // the TUs the run parsed

    // Malformed params are InvalidParams (-32602); a document outside the root is refused too.
    CHECK(s.errorOf("textDocument/definition", QJsonObject{}) == -32602);
    CHECK(s.errorOf("symdex/occurrences", QJsonObject{{"usrHash", "not hex"}}) == -32602);
    CHECK(s.errorOf("textDocument/definition",
                    test::positionParams("file:///elsewhere/x.cpp", 1, 1)) != 0);
}

TEST_CASE("handlers: documentHighlight marks reads, writes and declarations in one document",
          "[daemon][handlers]") {
    MemoryServer s;
    auto highlights = [&](const std::string& rel, int line, int character) {
        Strings out;
        for (const QJsonValue& h : s.call("textDocument/documentHighlight",
                                          test::positionParams(s.tree.uri(rel), line, character))
                                       .toArray()) {
            const QJsonObject start = h["range"]["start"].toObject();
            const QJsonObject end = h["range"]["end"].toObject();
            out.push_back(std::to_string(start["line"].toInt()) + ":" +
                          std::to_string(start["character"].toInt()) + "-" +
                          std::to_string(end["character"].toInt()) + " " +
                          std::to_string(h["kind"].toInt()));
        }
        return out;
    };
    // geo::counter in circle.cpp: its definition (Text) and "++counter" (a write).
    CHECK(highlights("src/circle.cpp", 8, 53) == Strings{"4:4-11 1", "8:52-59 3"});
    // From the definition too: the same set.
    CHECK(highlights("src/circle.cpp", 4, 6) == Strings{"4:4-11 1", "8:52-59 3"});
    // geo::counter read in main.cpp:10 (and nothing of circle.cpp).
    CHECK(highlights("src/main.cpp", 9, 60) == Strings{"9:59-66 2"});
    // Nothing under the cursor: null.
    CHECK(s.call("textDocument/documentHighlight",
                 test::positionParams(s.tree.uri("src/main.cpp"), 9, 2))
              .isNull());
}

namespace {

/// "line:character" of an LSP range's start (or of a Location's).
std::string startOf(const QJsonValue& rangeOrLocation) {
    const QJsonObject range = rangeOrLocation.toObject().contains("range")
                                  ? rangeOrLocation["range"].toObject()
                                  : rangeOrLocation.toObject();
    return std::to_string(range["start"]["line"].toInt()) + ":" +
           std::to_string(range["start"]["character"].toInt());
}

/// "name file start" of a hierarchy item.
std::string itemText(const QJsonValue& item) {
    const QString uri = item["uri"].toString();
    return item["name"].toString().toStdString() + " " +
           uri.mid(uri.lastIndexOf('/') + 1).toStdString() + " " + startOf(item["selectionRange"]);
}

} // namespace

TEST_CASE("handlers: call and type hierarchies, implementation and hover", "[daemon][handlers]") {
    MemoryServer s;
    auto at = [&](const std::string& rel, int line, int character) {
        return test::positionParams(s.tree.uri(rel), line, character);
    };
    // helper (main.cpp:3) is called by main, and calls geo::Shape::area.
    const QJsonArray prepared =
        s.call("textDocument/prepareCallHierarchy", at("src/main.cpp", 2, 12)).toArray();
    REQUIRE(prepared.size() == 1);
    const QJsonValue helper = prepared[0];
    CHECK(itemText(helper) == "helper main.cpp 2:11");
    CHECK(helper["kind"].toInt() == 12); // Function
    const QJsonArray incoming =
        s.call("callHierarchy/incomingCalls", QJsonObject{{"item", helper}}).toArray();
    REQUIRE(incoming.size() == 1);
    CHECK(itemText(incoming[0]["from"]) == "main main.cpp 4:4");
    REQUIRE(incoming[0]["fromRanges"].toArray().size() == 1);
    CHECK(startOf(incoming[0]["fromRanges"][0]) == "9:11");
    CHECK(incoming[0]["fromRanges"][0]["end"]["character"].toInt() == 17); // "helper"
    const QJsonArray outgoing =
        s.call("callHierarchy/outgoingCalls", QJsonObject{{"item", helper}}).toArray();
    REQUIRE(outgoing.size() == 1);
    CHECK(itemText(outgoing[0]["to"]) == "area shapes.h 21:17"); // declared only (pure)
    CHECK(startOf(outgoing[0]["fromRanges"][0]) == "2:62");

    // Circle derives from Shape.
    const QJsonArray circle =
        s.call("textDocument/prepareTypeHierarchy", at("include/shapes.h", 25, 7)).toArray();
    REQUIRE(circle.size() == 1);
    CHECK(itemText(circle[0]) == "Circle shapes.h 25:6");
    const QJsonArray supertypes =
        s.call("typeHierarchy/supertypes", QJsonObject{{"item", circle[0]}}).toArray();
    REQUIRE(supertypes.size() == 1);
    CHECK(itemText(supertypes[0]) == "Shape shapes.h 18:6");
    const QJsonArray subtypes =
        s.call("typeHierarchy/subtypes", QJsonObject{{"item", supertypes[0]}}).toArray();
    REQUIRE(subtypes.size() == 1);
    CHECK(itemText(subtypes[0]) == "Circle shapes.h 25:6");
    CHECK(s.call("typeHierarchy/subtypes", QJsonObject{{"item", circle[0]}}).toArray().isEmpty());
    // On a method, its class's hierarchy (as clangd): area in circle.cpp is Circle's; a field has
    // none (clangd's choice too).
    const QJsonArray fromMethod =
        s.call("textDocument/prepareTypeHierarchy", at("src/circle.cpp", 10, 15)).toArray();
    REQUIRE(fromMethod.size() == 1);
    CHECK(itemText(fromMethod[0]) == "Circle shapes.h 25:6");
    CHECK(s.call("textDocument/prepareTypeHierarchy", at("include/shapes.h", 31, 13))
              .toArray()
              .isEmpty());
    // Right after a '(' on an argument without a class ("circle(|geo::scale(2.0))", a
    // namespace), the hierarchy of what is left of the parenthesis, as clangd: the variable
    // `circle`'s class. Its call hierarchy does not look left.
    const QJsonArray leftOf =
        s.call("textDocument/prepareTypeHierarchy", at("src/main.cpp", 5, 23)).toArray();
    REQUIRE(leftOf.size() == 1);
    CHECK(itemText(leftOf[0]) == "Circle shapes.h 25:6");
    CHECK(
        s.call("textDocument/prepareCallHierarchy", at("src/main.cpp", 5, 23)).toArray().isEmpty());

    // Only functions have calls, only classes bases (clangd's answer elsewhere: no item).
    CHECK(s.call("textDocument/prepareCallHierarchy", at("include/shapes.h", 25, 7))
              .toArray()
              .isEmpty());
    CHECK(
        s.call("textDocument/prepareTypeHierarchy", at("src/main.cpp", 2, 12)).toArray().isEmpty());

    // Implementations: of the virtual call's method, the override's definition; of the base
    // class, the derived class.
    const QJsonArray methods =
        s.call("textDocument/implementation", at("src/main.cpp", 2, 63)).toArray();
    REQUIRE(methods.size() == 1);
    CHECK(methods[0]["uri"].toString().endsWith("src/circle.cpp"));
    CHECK(startOf(methods[0]) == "10:13");
    const QJsonArray classes =
        s.call("textDocument/implementation", at("src/main.cpp", 2, 31)).toArray();
    REQUIRE(classes.size() == 1);
    CHECK(startOf(classes[0]) == "25:6");

    // Hover: kind and qualified name, signature, comment, where it is defined.
    const QJsonValue area = s.call("textDocument/hover", at("src/main.cpp", 2, 63));
    CHECK(area["contents"]["kind"].toString() == "markdown");
    CHECK(area["contents"]["value"].toString().toStdString() ==
          "### method `geo::Shape::area`\n\n```cpp\nvirtual Area area() const = 0\n```\n\n"
          "Declared at `include/shapes.h:22`\n");
    CHECK(startOf(area["range"]) == "2:62");
    const QString circleHover =
        s.call("textDocument/hover", at("src/main.cpp", 5, 11))["contents"]["value"].toString();
    CHECK(circleHover.contains("A circle around the origin"));
    CHECK(circleHover.contains("class Circle : public Shape"));
    CHECK(circleHover.contains("Defined at `include/shapes.h:26`"));
    CHECK(s.call("textDocument/hover", at("src/main.cpp", 9, 2)).isNull());

    // An item without the data prepare gave it: a clear error.
    CHECK(s.errorOf("callHierarchy/incomingCalls", QJsonObject{{"item", QJsonObject{}}}) ==
          protocol::kInvalidParams);
}
