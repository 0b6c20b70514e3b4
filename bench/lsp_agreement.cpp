// lsp_agreement: do symdex's LSP answers agree with clangd-19's, and how fast are both, as an
// editor reaches them? A benchmark program: it prints figures and every disagreement, asserts
// nothing, and exits 0 whatever the shares.
//
//   lsp_agreement -p bench/corpora/leveldb/build --root bench/corpora/leveldb/src
//                 [--positions 500] [--seed 1] [--threads 2] [--list 1000000]
//
// symdexd indexes the tree into a fresh store and clangd-19 builds its background index of the
// same compile database. A seeded sample of identifier positions in main files (the written
// references and declarations the store holds there) is then asked of both, through the same
// client over stdio: `symdex lsp` (the editors' entry point, bridging to that symdexd) and
// clangd-19. Each document is opened in both (didOpen with its text, then one untimed
// documentSymbol) before its positions are asked. For each method the program prints the share of
// positions where both answer the same, over the positions where either answered anything
// (positions where both answer nothing agree trivially and are counted apart):
//   definition      the set of locations
//   references      the set of locations (includeDeclaration false)
//   incomingCalls   the set of callers (item uri and name position), after prepareCallHierarchy
//   callSites       the set of call sites of those callers (each of their fromRanges), by
//                   caller name and position (callSites() says why not by file)
//   supertypes, subtypes   the set of items, after prepareTypeHierarchy
//   implementation  the set of locations
// Call and type hierarchies are compared where both servers prepare an item; the positions where
// one alone does are counted apart. Each share is printed twice: over all answers, and over their
// locations in the tree (under --root), as libclang's indexing API reports declarations but no
// references in system headers.
// And the latency of definition, hover, incomingCalls and subtypes for each server (p50, p99),
// each request alone on an idle server.
#include "bench/child_process.h"
#include "bench/clangd_peer.h"
#include "bench/lsp_connection.h"
#include "bench/peer.h"
#include "indexer/compile_db.h"
#include "protocol/client.h"
#include "store/symbol_store.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>
#include <QUrl>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

using namespace symdex;
namespace fs = std::filesystem;

namespace {

bool isUnder(const std::string& path, const std::string& root) {
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           path[root.size()] == '/';
}

QString uriOf(const std::string& path) {
    return QUrl::fromLocalFile(QString::fromStdString(path)).toString();
}

/// An LSP server on a child's stdio: requests answered in order, with the server's own requests
/// (workDoneProgress/create, ...) answered null and its notifications dropped.
class StdioServer {
public:
    StdioServer(const std::string& name, const std::vector<std::string>& argv, const fs::path& log,
                const fs::path& rootDir, std::vector<std::string> environment = {})
        : name_(name) {
        bench::ChildProcess::Options options;
        options.pipeStdin = options.pipeStdout = true;
        options.stderrPath = log;
        options.environment = std::move(environment);
        options.workingDirectory = rootDir;
        child_.emplace(bench::ChildProcess::start(argv, options));
        lsp_.emplace(*child_);
        request("initialize",
                {{"processId", QJsonValue::Null},
                 {"rootUri", uriOf(rootDir.string())},
                 {"capabilities",
                  QJsonObject{{"window", QJsonObject{{"workDoneProgress", true}}},
                              {"textDocument",
                               QJsonObject{{"hover", QJsonObject{{"contentFormat",
                                                                  QJsonArray{"markdown"}}}}}}}}},
                600);
        lsp_->send("initialized", {});
    }

    ~StdioServer() {
        if (lsp_) {
            lsp_->send("shutdown", {}, nextId_++);
            lsp_->send("exit", {});
        }
        if (child_) {
            child_->closeStdin();
            child_->kill();
            child_->wait();
        }
    }

    void notify(const QString& method, const QJsonObject& params) { lsp_->send(method, params); }

    /// The result of one request; the time it took in `seconds`. Throws when the server does not
    /// answer within `timeout` seconds or answers an error.
    QJsonValue request(const QString& method, const QJsonObject& params, double timeout = 120,
                       double* seconds = nullptr) {
        const int id = nextId_++;
        const double start = bench::monotonicSeconds();
        if (!lsp_->send(method, params, id))
            throw std::runtime_error(name_ + " is gone");
        while (std::optional<QJsonObject> m = lsp_->receive(start + timeout)) {
            if (m->contains("method")) {
                if (m->contains("id"))
                    lsp_->reply((*m)["id"], QJsonValue::Null);
                onNotification(*m);
                continue;
            }
            if ((*m)["id"].toInt() != id)
                continue;
            if (seconds)
                *seconds = bench::monotonicSeconds() - start;
            if (m->contains("error"))
                throw std::runtime_error(
                    name_ + ": " + method.toStdString() + ": " +
                    (*m)["error"].toObject()["message"].toString().toStdString());
            return (*m)["result"];
        }
        throw std::runtime_error(name_ + " did not answer " + method.toStdString());
    }

    /// Reads messages until `done` holds for one of them or `timeout` seconds pass.
    bool waitFor(const std::function<bool(const QJsonObject&)>& done, double timeout) {
        const double deadline = bench::monotonicSeconds() + timeout;
        while (std::optional<QJsonObject> m = lsp_->receive(deadline)) {
            if (m->contains("method") && m->contains("id"))
                lsp_->reply((*m)["id"], QJsonValue::Null);
            if (done(*m))
                return true;
        }
        return false;
    }

private:
    void onNotification(const QJsonObject&) {}

    std::string name_;
    std::optional<bench::ChildProcess> child_;
    std::optional<bench::LspConnection> lsp_;
    int nextId_ = 1;
};

/// "path:line:col" (1-based, canonical path) of an LSP location or item position.
std::string key(const QString& uri, const QJsonObject& position) {
    static std::map<std::string, std::string> canonical;
    const std::string path = QUrl(uri).toLocalFile().toStdString();
    auto [it, added] = canonical.try_emplace(path);
    if (added) {
        std::error_code ec;
        it->second = fs::weakly_canonical(path, ec).string();
    }
    return it->second + ":" + std::to_string(position["line"].toInt() + 1) + ":" +
           std::to_string(position["character"].toInt() + 1);
}

/// The locations of a Location | Location[] | LocationLink[] answer.
std::set<std::string> locations(const QJsonValue& result) {
    std::set<std::string> out;
    const QJsonArray list = result.isArray() ? result.toArray() : QJsonArray{result};
    for (const QJsonValue& v : list) {
        const QJsonObject o = v.toObject();
        if (o.contains("targetUri"))
            out.insert(
                key(o["targetUri"].toString(), o["targetSelectionRange"]["start"].toObject()));
        else if (o.contains("uri"))
            out.insert(key(o["uri"].toString(), o["range"]["start"].toObject()));
    }
    return out;
}

/// The call sites of an incomingCalls answer: each of its `fromRanges`, as "caller name @
/// line:column". Not by file: the ranges are in the caller's file, but for a caller a macro
/// declares (every gtest TEST's TestBody) clangd names the macro's file as the caller's, with
/// the ranges of the calls in the test's file.
std::set<std::string> callSites(const QJsonValue& result) {
    std::set<std::string> out;
    for (const QJsonValue& v : result.toArray()) {
        const std::string name = v["from"]["name"].toString().toStdString();
        for (const QJsonValue& range : v["fromRanges"].toArray())
            out.insert(name + " @ " + std::to_string(range["start"]["line"].toInt() + 1) + ":" +
                       std::to_string(range["start"]["character"].toInt() + 1));
    }
    return out;
}

/// Items (call or type hierarchy) by uri and name position.
std::set<std::string> items(const QJsonValue& result, const char* member = nullptr) {
    std::set<std::string> out;
    for (const QJsonValue& v : result.toArray()) {
        const QJsonObject item = member ? v[member].toObject() : v.toObject();
        out.insert(key(item["uri"].toString(), item["selectionRange"]["start"].toObject()));
    }
    return out;
}

struct Position {
    std::string path;
    uint32_t line = 0, column = 0; ///< 1-based, bytes (the corpora are ASCII)
    std::string where(const std::string& root) const {
        return path.substr(root.size() + 1) + ":" + std::to_string(line) + ":" +
               std::to_string(column);
    }
};

/// The answers of one server at one position, by method.
using Answers = std::map<std::string, std::set<std::string>>;

const char* const kMethods[] = {"definition", "references", "incomingCalls", "callSites",
                                "supertypes", "subtypes",   "implementation"};
const char* const kTimed[] = {"definition", "hover", "incomingCalls", "subtypes"};

/// Asks `server` every method at `p`, recording the latencies of the timed ones.
Answers ask(StdioServer& server, const Position& p,
            std::map<std::string, std::vector<double>>& latency) {
    const QJsonObject at{
        {"textDocument", QJsonObject{{"uri", uriOf(p.path)}}},
        {"position", QJsonObject{{"line", int(p.line - 1)}, {"character", int(p.column - 1)}}}};
    Answers out;
    double seconds = 0;
    out["definition"] = locations(server.request("textDocument/definition", at, 120, &seconds));
    latency["definition"].push_back(seconds);
    QJsonObject refs = at;
    refs["context"] = QJsonObject{{"includeDeclaration", false}};
    out["references"] = locations(server.request("textDocument/references", refs));
    server.request("textDocument/hover", at, 120, &seconds);
    latency["hover"].push_back(seconds);
    out["implementation"] = locations(server.request("textDocument/implementation", at));
    const QJsonValue calls = server.request("textDocument/prepareCallHierarchy", at);
    if (calls.isArray() && !calls.toArray().isEmpty()) {
        out["prepared"].insert("calls");
        const QJsonValue incoming =
            server.request("callHierarchy/incomingCalls", QJsonObject{{"item", calls.toArray()[0]}},
                           120, &seconds);
        latency["incomingCalls"].push_back(seconds);
        out["incomingCalls"] = items(incoming, "from");
        out["callSites"] = callSites(incoming);
    }
    const QJsonValue types = server.request("textDocument/prepareTypeHierarchy", at);
    if (types.isArray() && !types.toArray().isEmpty()) {
        out["prepared"].insert("types");
        const QJsonObject item{{"item", types.toArray()[0]}};
        out["supertypes"] = items(server.request("typeHierarchy/supertypes", item));
        out["subtypes"] = items(server.request("typeHierarchy/subtypes", item, 120, &seconds));
        latency["subtypes"].push_back(seconds);
    }
    return out;
}

/// The answers located under `root` (the project's own files).
std::set<std::string> inTree(const std::set<std::string>& set, const std::string& root) {
    std::set<std::string> out;
    for (const std::string& s : set)
        if (isUnder(s, root))
            out.insert(s);
    return out;
}

/// The hierarchy a method's answer comes from ("calls", "types"), or null for the others.
const char* hierarchyOf(std::string_view method) {
    if (method == "incomingCalls" || method == "callSites")
        return "calls";
    if (method == "supertypes" || method == "subtypes")
        return "types";
    return nullptr;
}

size_t onlyA(const std::set<std::string>& a, const std::set<std::string>& b) {
    return size_t(std::count_if(a.begin(), a.end(), [&](const auto& s) { return !b.contains(s); }));
}

/// The answers only one side gave, at most 6 of them (with how many more).
std::string onlyIn(const std::set<std::string>& set, const std::set<std::string>& other,
                   const std::string& root) {
    std::string out;
    size_t shown = 0, more = 0;
    for (const std::string& s : set) {
        if (other.contains(s))
            continue;
        if (shown++ == 6) {
            ++more;
            continue;
        }
        out += (out.empty() ? "" : " ") + (isUnder(s, root) ? s.substr(root.size() + 1) : s);
    }
    if (more)
        out += " (+" + std::to_string(more) + " more)";
    return out.empty() ? "-" : out;
}

/// The sampled positions: written references and declarations in main files under the root.
std::vector<Position> samplePositions(const fs::path& storeDir, const std::string& root,
                                      size_t count, unsigned seed) {
    StoreOptions options;
    options.directory = storeDir;
    options.readOnly = true;
    std::unique_ptr<SymbolStore> store = SymbolStore::open(options);
    const StoreSnapshot snapshot = store->snapshot();
    std::vector<std::string> mains;
    snapshot.forEachTu([&](const std::string& path, const TuRecord&) {
        if (isUnder(path, root))
            mains.push_back(path);
    });
    std::vector<Position> all;
    for (const std::string& path : mains) {
        for (const Reference& r : snapshot.fileReferences(path).value_or(std::vector<Reference>{}))
            if (isWrittenUse(r.roles) && !(r.roles & kRoleImplicit))
                all.push_back({path, r.location.line, r.location.column});
        for (const Symbol& s : snapshot.fileSymbols(path).value_or(std::vector<Symbol>{}))
            all.push_back({path, s.location.line, s.location.column});
    }
    std::sort(all.begin(), all.end(), [](const Position& a, const Position& b) {
        return std::tie(a.path, a.line, a.column) < std::tie(b.path, b.line, b.column);
    });
    all.erase(std::unique(all.begin(), all.end(),
                          [](const Position& a, const Position& b) {
                              return a.path == b.path && a.line == b.line && a.column == b.column;
                          }),
              all.end());
    std::mt19937 rng(seed);
    std::shuffle(all.begin(), all.end(), rng);
    if (all.size() > count)
        all.resize(count);
    std::sort(all.begin(), all.end(), [](const Position& a, const Position& b) {
        return std::tie(a.path, a.line, a.column) < std::tie(b.path, b.line, b.column);
    });
    return all;
}

std::unique_ptr<protocol::RpcClient> connectWithRetry(const std::string& socket) {
    std::string error;
    for (int i = 0; i < 600; ++i) {
        if (auto client = protocol::RpcClient::connect(socket, &error))
            return client;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("cannot connect to symdexd at " + socket + ": " + error);
}

/// The nearest-rank percentile `q` of `values` (0 for none).
double percentile(std::vector<double> values, double q) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const size_t rank = size_t(std::ceil(q / 100 * double(values.size())));
    return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

std::string readText(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

int run(const QCommandLineParser& parser) {
    std::string error;
    const std::string buildDir = parser.value("p").toStdString();
    std::optional<CompileDatabase> db = loadCompileDatabase(buildDir, &error);
    if (!db)
        throw std::runtime_error(error);
    const std::string root = fs::weakly_canonical(parser.value("root").toStdString()).string();
    const std::string threads = parser.value("threads").toStdString();
    char dirTemplate[] = "/tmp/symdex-agree-XXXXXX";
    const fs::path work = ::mkdtemp(dirTemplate);
    const fs::path store = work / "store";

    // symdexd indexes the tree cold; `symdex lsp` then bridges to it, as for an editor.
    const std::string socket = (work / "symdexd.sock").string();
    bench::ChildProcess::Options daemonOptions;
    daemonOptions.stderrPath = work / "symdexd.log";
    bench::ChildProcess symdexd = bench::ChildProcess::start(
        {parser.value("symdexd").toStdString(), "--root", root, "-p", buildDir, "--store",
         store.string(), "--socket", socket, "--threads", threads},
        daemonOptions);
    {
        auto client = connectWithRetry(socket);
        client->initialize();
        client->waitForNotification("symdex/reindexed", std::chrono::hours(1));
    }
    const std::vector<Position> positions = samplePositions(
        store, root, parser.value("positions").toULong(), parser.value("seed").toUInt());

    // clangd-19 on a deduplicated copy of the database (as `symdex bench` drives it).
    const fs::path project = work / "clangd-project";
    bench::writeDeduplicatedDatabase(*db, project);
    std::ofstream(project / ".clangd") << "Index:\n  StandardLibrary: No\n";
    fs::create_directories(project / "no-user-config");
    std::vector<std::string> tus;
    for (const CompileCommand& c : db->commands)
        tus.push_back(c.file);
    StdioServer clangd(
        "clangd-19",
        {"clangd-19", "--background-index", "-j=" + threads, "--limit-results=0",
         "--limit-references=0", "--compile-commands-dir=" + project.string(), "--log=error"},
        work / "clangd.log", project, {"XDG_CONFIG_HOME=" + (project / "no-user-config").string()});
    // The background index starts with the first opened document.
    const std::string firstText = readText(positions.front().path);
    clangd.notify("textDocument/didOpen",
                  {{"textDocument", QJsonObject{{"uri", uriOf(positions.front().path)},
                                                {"languageId", "cpp"},
                                                {"version", 1},
                                                {"text", QString::fromStdString(firstText)}}}});
    const fs::path shards = project / ".cache" / "clangd" / "index";
    bool ended = false;
    clangd.waitFor(
        [&](const QJsonObject& m) {
            if (m["method"] == "$/progress" &&
                m["params"].toObject()["token"] == "backgroundIndexProgress")
                ended = m["params"].toObject()["value"].toObject()["kind"] == "end";
            return ended && bench::tusMissingFromClangdShards(tus, shards).empty();
        },
        3600);
    if (!ended)
        throw std::runtime_error("clangd-19's background index did not finish");
    clangd.notify("textDocument/didClose",
                  {{"textDocument", QJsonObject{{"uri", uriOf(positions.front().path)}}}});

    StdioServer symdex(
        "symdex lsp",
        {parser.value("symdex").toStdString(), "lsp", "--root", root, "--store", store.string()},
        work / "symdex-lsp.log", root);

    std::map<std::string, size_t> agreed, answered, bothEmpty, agreedInTree, answeredInTree,
        preparedBySymdexOnly, preparedByClangdOnly;
    std::map<std::string, std::vector<std::string>> disagreements;
    std::map<std::string, std::vector<double>> latencySymdex, latencyClangd;
    std::string open;
    for (const Position& p : positions) {
        if (p.path != open) {
            // Both servers see what an editor sends: didClose of the last document, didOpen of
            // this one, and a first request (untimed: clangd waits for its AST there, symdex reads
            // the file's lines).
            for (StdioServer* server : {&clangd, &symdex}) {
                if (!open.empty())
                    server->notify("textDocument/didClose",
                                   {{"textDocument", QJsonObject{{"uri", uriOf(open)}}}});
                server->notify("textDocument/didOpen",
                               {{"textDocument",
                                 QJsonObject{{"uri", uriOf(p.path)},
                                             {"languageId", "cpp"},
                                             {"version", 1},
                                             {"text", QString::fromStdString(readText(p.path))}}}});
                server->request("textDocument/documentSymbol",
                                {{"textDocument", QJsonObject{{"uri", uriOf(p.path)}}}}, 300);
            }
            open = p.path;
        }
        const Answers ours = ask(symdex, p, latencySymdex);
        const Answers theirs = ask(clangd, p, latencyClangd);
        for (const char* method : kMethods) {
            const auto o = ours.find(method), t = theirs.find(method);
            const std::set<std::string> a = o == ours.end() ? std::set<std::string>{} : o->second;
            const std::set<std::string> b = t == theirs.end() ? std::set<std::string>{} : t->second;
            if (a.empty() && b.empty()) {
                ++bothEmpty[method];
                continue;
            }
            // A hierarchy only one server prepares at the position (clangd prepares none on a
            // class template's members, std::string::append among them): counted apart, as
            // there are no callers or types of the other's to compare with.
            if (const char* kind = hierarchyOf(method)) {
                const bool ourItem =
                    ours.contains("prepared") && ours.at("prepared").contains(kind);
                const bool theirItem =
                    theirs.contains("prepared") && theirs.at("prepared").contains(kind);
                if (ourItem != theirItem) {
                    ++(ourItem ? preparedBySymdexOnly : preparedByClangdOnly)[method];
                    continue;
                }
            }
            ++answered[method];
            // Call sites carry no file (callSites()): all count as in the tree.
            const bool sites = std::string_view(method) == "callSites";
            const std::set<std::string> aTree = sites ? a : inTree(a, root),
                                        bTree = sites ? b : inTree(b, root);
            if (!aTree.empty() || !bTree.empty()) {
                ++answeredInTree[method];
                agreedInTree[method] += aTree == bTree;
            }
            if (a == b)
                ++agreed[method];
            else
                disagreements[method].push_back(
                    p.where(root) + "  both " + std::to_string(a.size() - onlyA(a, b)) +
                    "  only symdex " + onlyIn(a, b, root) + "  only clangd " + onlyIn(b, a, root));
        }
    }
    symdexd.kill();
    symdexd.wait();

    std::printf("positions: %zu identifier positions in main files under %s (seed %s)\n",
                positions.size(), root.c_str(), qPrintable(parser.value("seed")));
    std::printf("%-16s %8s %8s %8s %10s | in the tree: %8s %8s %8s\n", "method", "answered",
                "agree", "share", "both-empty", "answered", "agree", "share");
    auto share = [](size_t part, size_t whole) {
        return whole ? 100.0 * double(part) / double(whole) : 100.0;
    };
    for (const char* method : kMethods)
        std::printf("%-16s %8zu %8zu %7.2f%% %10zu | %21zu %8zu %7.2f%%\n", method,
                    answered[method], agreed[method], share(agreed[method], answered[method]),
                    bothEmpty[method], answeredInTree[method], agreedInTree[method],
                    share(agreedInTree[method], answeredInTree[method]));
    std::printf("(in the tree: the answers' locations under the root only; libclang reports no "
                "references in system headers)\n");
    std::printf("hierarchy prepared by one server only, left out of the shares above:\n");
    for (const char* method : kMethods)
        if (hierarchyOf(method))
            std::printf("%-16s symdex only %zu, clangd only %zu\n", method,
                        preparedBySymdexOnly[method], preparedByClangdOnly[method]);
    std::printf("latency (ms), one request at a time on an idle server, over stdio:\n");
    std::printf("%-16s %8s %10s %10s %10s %10s\n", "method", "n", "symdex p50", "symdex p99",
                "clangd p50", "clangd p99");
    for (const char* method : kTimed) {
        auto& s = latencySymdex[method];
        auto& c = latencyClangd[method];
        std::printf("%-16s %8zu %10.3f %10.3f %10.3f %10.3f\n", method, s.size(),
                    1000 * percentile(s, 50), 1000 * percentile(s, 99), 1000 * percentile(c, 50),
                    1000 * percentile(c, 99));
    }
    const size_t list = parser.value("list").toULong();
    for (const char* method : kMethods) {
        const auto& lines = disagreements[method];
        std::printf("disagreements, %s: %zu\n", method, lines.size());
        for (size_t i = 0; i < lines.size() && i < list; ++i)
            std::printf("    %s\n", lines[i].c_str());
    }
    fs::remove_all(work);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Compares symdex's LSP answers and latency with clangd-19's at sampled positions.");
    parser.addHelpOption();
    parser.addOptions({
        {"p", "Build directory holding compile_commands.json.", "dir"},
        {"root", "Source root: the main files sampled lie under it.", "dir"},
        {"symdexd", "The symdexd binary.", "path", SYMDEXD_PATH},
        {"symdex", "The symdex binary (for `symdex lsp`).", "path", SYMDEX_PATH},
        {"positions", "How many positions to sample.", "n", "500"},
        {"seed", "Seed of the sample.", "n", "1"},
        {"threads", "Indexing threads of symdexd and clangd.", "n", "2"},
        {"list", "Disagreements listed per method.", "n", "1000000"},
    });
    parser.process(app);
    if (!parser.isSet("p") || !parser.isSet("root")) {
        std::fprintf(stderr, "lsp_agreement: -p and --root are required\n");
        return 2;
    }
    try {
        return run(parser);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lsp_agreement: %s\n", e.what());
        return 1;
    }
}
