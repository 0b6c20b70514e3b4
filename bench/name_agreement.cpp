// name_agreement: do symdex's names agree with clangd's across a whole tree? A benchmark program
// (it prints figures; it asserts nothing, and exits 0 whatever the share).
//
//   name_agreement -p bench/corpora/leveldb/build --root bench/corpora/leveldb/src
//                  [--sample 0] [--seed 1] [--threads 2] [--list 50]
//
// symdexd indexes the tree into a fresh store; every distinct name of a symbol declared under
// --root (or a seeded sample of --sample of them) is then a workspace/symbol query, to symdexd
// and to clangd-19's background index of the same compile database. Each symdex answer with
// exactly that name, located under --root, is paired with clangd's answer for the same symbol:
// the one whose location is a declaration of the same USR in the store. The check prints the
// share of symbols whose name and containerName agree, the differences by kind (linkage specs,
// anonymous and inline namespaces, lambdas, template specializations, operators, conversion
// functions, enum constants, macros, other), and the symbols clangd's answer lacks.
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
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

using namespace symdex;
namespace fs = std::filesystem;

namespace {

/// One answer of a workspace/symbol query, its location 1-based as the store keeps it.
struct Answer {
    std::string name, container, path;
    uint32_t line = 0, column = 0;
    int kind = 0; ///< LSP SymbolKind
};

struct StoredSymbol {
    SymbolKind kind = SymbolKind::Unknown;
    uint8_t flags = 0;
};

/// What the store knows: the USRs declared at each location (a macro can declare several at
/// one), the locations of each USR's declarations, and each USR's kind.
struct StoreIndex {
    std::unordered_map<std::string, std::vector<uint64_t>> usrsAt; ///< "path:line:col"
    std::unordered_map<uint64_t, std::vector<std::string>> locations;
    std::unordered_map<uint64_t, StoredSymbol> symbols;
    std::set<std::string> namesUnderRoot;
};

std::string locationKey(const std::string& path, uint32_t line, uint32_t column) {
    return path + ":" + std::to_string(line) + ":" + std::to_string(column);
}

bool isUnder(const std::string& path, const std::string& root) {
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           path[root.size()] == '/';
}

StoreIndex readStore(const fs::path& directory, const std::string& root) {
    StoreOptions options;
    options.directory = directory;
    options.readOnly = true;
    std::unique_ptr<SymbolStore> store = SymbolStore::open(options);
    std::vector<std::string> paths;
    store->forEachFile([&](uint32_t, const FileRecord& f) { paths.push_back(f.path); });
    StoreIndex index;
    for (const std::string& path : paths) {
        const std::vector<Symbol> symbols =
            store->fileSymbols(path).value_or(std::vector<Symbol>{});
        for (const Symbol& s : symbols) {
            const std::string key = locationKey(path, s.location.line, s.location.column);
            index.usrsAt[key].push_back(s.usrHash());
            index.locations[s.usrHash()].push_back(key);
            index.symbols[s.usrHash()] = {s.kind, s.flags};
            if (isUnder(path, root))
                index.namesUnderRoot.insert(s.name);
        }
    }
    return index;
}

/// A workspace/symbol answer array as Answers; clangd's paths made canonical like the store's.
std::vector<Answer> answers(const QJsonArray& result) {
    static std::unordered_map<std::string, std::string> canonical;
    std::vector<Answer> out;
    for (const QJsonValue& v : result) {
        const QJsonObject o = v.toObject();
        const QJsonObject location = o["location"].toObject();
        const QJsonObject start = location["range"].toObject()["start"].toObject();
        const std::string path = QUrl(location["uri"].toString()).toLocalFile().toStdString();
        auto [it, added] = canonical.try_emplace(path);
        if (added) {
            std::error_code ec;
            it->second = fs::weakly_canonical(path, ec).string();
        }
        // ASCII sources: UTF-16 units are bytes.
        out.push_back({o["name"].toString().toStdString(),
                       o["containerName"].toString().toStdString(), it->second,
                       uint32_t(start["line"].toInt() + 1),
                       uint32_t(start["character"].toInt() + 1), o["kind"].toInt()});
    }
    return out;
}

/// clangd-19's background index over LSP, for workspace/symbol queries.
class Clangd {
public:
    Clangd(const CompileDatabase& db, const fs::path& work, unsigned threads)
        : project_(work / "clangd-project") {
        for (const CompileCommand& c : db.commands)
            tus_.push_back(c.file);
        bench::writeDeduplicatedDatabase(db, project_);
        std::ofstream(project_ / "trigger.cpp").flush();
        std::ofstream(project_ / ".clangd") << "Index:\n  StandardLibrary: No\n";
        fs::create_directories(project_ / "no-user-config");
        bench::ChildProcess::Options options;
        options.pipeStdin = options.pipeStdout = true;
        options.stderrPath = work / "clangd.log";
        options.environment = {"XDG_CONFIG_HOME=" + (project_ / "no-user-config").string()};
        child_.emplace(bench::ChildProcess::start(
            {"clangd-19", "--background-index", "-j=" + std::to_string(threads),
             "--limit-results=0", "--compile-commands-dir=" + project_.string(), "--log=error"},
            options));
        lsp_.emplace(*child_);
    }

    /// Waits until the background index ended with a shard for every TU; false on a timeout.
    bool waitForIndex(double timeoutSeconds) {
        const QString root =
            QUrl::fromLocalFile(QString::fromStdString(project_.string())).toString();
        lsp_->send(
            "initialize",
            {{"processId", QJsonValue::Null},
             {"rootUri", root},
             {"capabilities", QJsonObject{{"window", QJsonObject{{"workDoneProgress", true}}}}}},
            nextId_++);
        lsp_->send("initialized", {});
        lsp_->send("textDocument/didOpen",
                   {{"textDocument", QJsonObject{{"uri", root + "/trigger.cpp"},
                                                 {"languageId", "cpp"},
                                                 {"version", 1},
                                                 {"text", ""}}}});
        const fs::path shards = project_ / ".cache" / "clangd" / "index";
        const double deadline = bench::monotonicSeconds() + timeoutSeconds;
        bool ended = false;
        while (bench::monotonicSeconds() < deadline) {
            std::optional<QJsonObject> m = lsp_->receive(bench::monotonicSeconds() + 1.0);
            if (m && (*m)["method"] == "window/workDoneProgress/create")
                lsp_->reply((*m)["id"], QJsonValue::Null);
            if (m && (*m)["method"] == "$/progress" &&
                (*m)["params"].toObject()["token"] == "backgroundIndexProgress")
                ended = (*m)["params"].toObject()["value"].toObject()["kind"] == "end";
            if (ended && bench::tusMissingFromClangdShards(tus_, shards).empty())
                return true;
        }
        return false;
    }

    QJsonArray workspaceSymbol(const std::string& query) {
        const int id = nextId_++;
        lsp_->send("workspace/symbol", {{"query", QString::fromStdString(query)}}, id);
        const double deadline = bench::monotonicSeconds() + 60;
        while (std::optional<QJsonObject> m = lsp_->receive(deadline)) {
            if (m->contains("method") && m->contains("id"))
                lsp_->reply((*m)["id"], QJsonValue::Null);
            else if ((*m)["id"].toInt() == id)
                return (*m)["result"].toArray();
        }
        throw std::runtime_error("clangd-19 did not answer workspace/symbol '" + query + "'");
    }

    ~Clangd() {
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

private:
    fs::path project_;
    std::vector<std::string> tus_;
    std::optional<bench::ChildProcess> child_;
    std::optional<bench::LspConnection> lsp_;
    int nextId_ = 1;
};

const char* const kKinds[] = {"linkage specs",
                              "anonymous namespaces",
                              "inline namespaces",
                              "lambdas",
                              "template specializations",
                              "operators",
                              "conversion functions",
                              "enum constants",
                              "macros",
                              "other"};

bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

/// The kind of difference between symdex's `ours` and clangd's `theirs` for one symbol.
std::string differenceKind(const StoredSymbol& symbol, const Answer& ours, const Answer* theirs) {
    const std::string theirContainer = theirs ? theirs->container : "";
    if (symbol.kind == SymbolKind::Macro)
        return "macros";
    if (symbol.kind == SymbolKind::EnumConstant)
        return "enum constants";
    if (symbol.kind == SymbolKind::ConversionFunction)
        return "conversion functions";
    if (ours.name.starts_with("operator"))
        return "operators";
    if ((symbol.flags & kSpecialization) || contains(ours.container, "<") ||
        contains(theirContainer, "<") || (theirs && contains(theirs->name, "<")))
        return "template specializations";
    if (contains(ours.name, "lambda") || contains(ours.container, "lambda") ||
        contains(theirContainer, "lambda"))
        return "lambdas";
    if (contains(ours.container, "(anonymous namespace)") ||
        contains(theirContainer, "(anonymous namespace)"))
        return "anonymous namespaces";
    if (contains(ours.container, "(anonymous)"))
        return "linkage specs";
    if (theirs && ours.container.size() > theirContainer.size())
        return "inline namespaces"; // a scope symdex writes that clangd leaves out
    return "other";
}

std::string spelled(const std::string& container, const std::string& name) {
    return container.empty() ? name : container + "::" + name;
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

int run(const QCommandLineParser& parser) {
    std::string error;
    const std::string buildDir = parser.value("p").toStdString();
    std::optional<CompileDatabase> db = loadCompileDatabase(buildDir, &error);
    if (!db)
        throw std::runtime_error(error);
    const std::string root = fs::weakly_canonical(parser.value("root").toStdString()).string();
    const unsigned threads = parser.value("threads").toUInt();
    char dirTemplate[] = "/tmp/symdex-names-XXXXXX";
    const fs::path work = ::mkdtemp(dirTemplate);
    const std::string socket = (work / "symdexd.sock").string();

    // symdex: its daemon indexes the tree cold, then answers.
    bench::ChildProcess::Options daemonOptions;
    daemonOptions.stderrPath = work / "symdexd.log";
    bench::ChildProcess symdexd = bench::ChildProcess::start(
        {parser.value("symdexd").toStdString(), "--root", root, "-p", buildDir, "--store",
         (work / "store").string(), "--socket", socket, "--threads", std::to_string(threads)},
        daemonOptions);
    auto client = connectWithRetry(socket);
    client->initialize();
    client->waitForNotification("symdex/reindexed", std::chrono::hours(1));
    const StoreIndex store = readStore(work / "store", root);

    std::vector<std::string> queries(store.namesUnderRoot.begin(), store.namesUnderRoot.end());
    const size_t sample = parser.value("sample").toULong();
    if (sample > 0 && sample < queries.size()) {
        std::mt19937 rng(parser.value("seed").toUInt());
        std::shuffle(queries.begin(), queries.end(), rng);
        queries.resize(sample);
        std::sort(queries.begin(), queries.end());
    }

    Clangd clangd(*db, work, threads);
    if (!clangd.waitForIndex(3600))
        throw std::runtime_error("clangd-19's background index did not finish (log: " +
                                 (work / "clangd.log").string() + ")");

    size_t compared = 0, agreed = 0, missing = 0;
    std::map<std::string, std::vector<std::string>> differences, missingByKind;
    for (const std::string& query : queries) {
        const std::vector<Answer> ours = answers(
            client
                ->call("workspace/symbol",
                       QJsonObject{{"query", QString::fromStdString(query)}, {"limit", 10000}})
                .toArray());
        std::unordered_multimap<std::string, Answer> theirs; // by location
        for (const Answer& a : answers(clangd.workspaceSymbol(query)))
            theirs.emplace(locationKey(a.path, a.line, a.column), a);
        for (const Answer& a : ours) {
            auto usrs = store.usrsAt.find(locationKey(a.path, a.line, a.column));
            if (a.name != query || !isUnder(a.path, root) || usrs == store.usrsAt.end())
                continue;
            const std::string where = a.path.substr(root.size() + 1) + ":" +
                                      std::to_string(a.line) + ":" + std::to_string(a.column);
            // clangd's answer for the same symbol: one at a location of a USR declared here, the
            // best by agreement, then by LSP kind (a class and its implicit constructors can
            // share a macro's location; the two servers map some kinds differently, so any
            // kind is paired when no answer of the same kind is there).
            const Answer* match = nullptr;
            int matchScore = -1;
            uint64_t usr = usrs->second.front();
            for (uint64_t candidate : usrs->second) {
                for (const std::string& location : store.locations.at(candidate)) {
                    auto [begin, end] = theirs.equal_range(location);
                    for (auto it = begin; it != end; ++it) {
                        const Answer& c = it->second;
                        // A fuzzy match of another name at a macro's location is another symbol.
                        if (c.kind != a.kind && c.name != a.name)
                            continue;
                        const int score = (c.name == a.name && c.container == a.container) * 2 +
                                          (c.kind == a.kind);
                        if (score > matchScore) {
                            match = &c;
                            matchScore = score;
                            usr = candidate;
                        }
                    }
                }
            }
            const StoredSymbol& symbol = store.symbols.at(usr);
            if (!match) {
                ++missing;
                missingByKind[differenceKind(symbol, a, nullptr)].push_back(
                    where + "  " + spelled(a.container, a.name));
                continue;
            }
            ++compared;
            const Answer& c = *match;
            if (c.name == a.name && c.container == a.container) {
                ++agreed;
                continue;
            }
            differences[differenceKind(symbol, a, &c)].push_back(
                where + "  symdex " + spelled(a.container, a.name) + "  clangd " +
                spelled(c.container, c.name));
        }
    }
    client.reset();
    symdexd.kill();
    symdexd.wait();

    const size_t list = parser.value("list").toULong();
    std::printf("names: %zu names queried, %zu symbols under %s answered by both\n", queries.size(),
                compared, root.c_str());
    std::printf("agree: %zu of %zu (%.2f%%)\n", agreed, compared,
                compared ? 100.0 * double(agreed) / double(compared) : 100.0);
    std::printf("differences by kind:\n");
    for (const char* kind : kKinds) {
        const auto& lines = differences[kind];
        std::printf("  %-26s %zu\n", kind, lines.size());
        for (size_t i = 0; i < lines.size() && i < list; ++i)
            std::printf("      %s\n", lines[i].c_str());
    }
    std::printf("symdex answers clangd's answer lacks: %zu\n", missing);
    for (const auto& [kind, lines] : missingByKind) {
        std::printf("  %-26s %zu\n", kind.c_str(), lines.size());
        for (size_t i = 0; i < lines.size() && i < list; ++i)
            std::printf("      %s\n", lines[i].c_str());
    }
    fs::remove_all(work);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription("Compares symdex's workspace/symbol names with clangd-19's.");
    parser.addHelpOption();
    parser.addOptions({
        {"p", "Build directory holding compile_commands.json.", "dir"},
        {"root", "Source root: the symbols compared are declared under it.", "dir"},
        {"symdexd", "The symdexd binary.", "path", SYMDEXD_PATH},
        {"sample", "Query a seeded sample of this many names (0: every name).", "n", "0"},
        {"seed", "Seed of the sample.", "n", "1"},
        {"threads", "Indexing threads of symdexd and clangd.", "n", "2"},
        {"list", "Differences listed per kind.", "n", "1000000"},
    });
    parser.process(app);
    if (!parser.isSet("p") || !parser.isSet("root")) {
        std::fprintf(stderr, "name_agreement: -p and --root are required\n");
        return 2;
    }
    try {
        return run(parser);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "name_agreement: %s\n", e.what());
        return 1;
    }
}
