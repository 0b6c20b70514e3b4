// scale_bench: how symdex and clangd-19 fare as a tree grows to millions of names (issue 17). A
// benchmark program: it prints figures and ratios, asserts nothing.
//
//   scale_bench --names 30000 [--seed 1] [--dir DIR] [--threads 2] [--queries 100]
//               [--symdex PATH] [--symdexd PATH] [--clangd clangd-19] [--skip-clangd]
//               [--timeout 3600]
//
// Generates the tree of bench/scale_tree.h into DIR/tree (kept, and reused by a later run with
// the same names and seed), then measures (each cold index alone, symdex first; then both
// restarts, symdex first; then the queries of both servers, side by side):
//   cold index       symdex: `symdex index` into an empty store, wall clock of the process;
//                    clangd-19: --background-index from an empty .cache, from spawn to the end of
//                    its indexing progress with a shard for every TU (as bench/clangd_peer.cpp)
//   index on disk    symdex: the store's data.mdb; clangd-19: the files of .cache/clangd/index
//   first answer     a restart on that index, as an editor starts it (`symdex lsp`, which starts
//                    symdexd; clangd-19 with an empty file opened, as it loads its index only
//                    then): workspace/symbol for a rare exact name, asked again until the answer
//                    holds that name, timed from the process's start (with --symdexd, which
//                    this program then starts before `symdex lsp`, from symdexd's)
//   memory           RssAnon and RssFile (/proc/PID/status) of the serving process (symdexd, not
//                    the bridge; clangd-19) at the first answer, and after the queries
//   latency          once both servers have settled (their CPU quiet), workspace/symbol over
//                    stdio, one request at a time, for queries of six kinds (scale_tree.h), each
//                    query asked of one server and at once of the other (which first alternates
//                    query by query), so that both meet the machine's changing speed alike;
//                    p50 and p99 to the answer's last byte, the p50 with the answer parsed by
//                    this client (QJsonDocument) too, and the median number of results, each
//                    server at its default limit (100)
//   definition       then textDocument/definition at 100 calls in 10 TUs spread over the tree
//                    (each file opened and asked once untimed first): p50, p99, and how many
//                    answered
#include "bench/child_process.h"
#include "bench/clangd_peer.h"
#include "bench/lsp_connection.h"
#include "bench/scale_tree.h"
#include "bench/statistics.h"
#include "protocol/instance_lock.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>
#include <QUrl>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <thread>
#include <unordered_set>

using namespace symdex;
using namespace symdex::bench;
namespace fs = std::filesystem;

namespace {

constexpr double kRequestTimeout = 120;
/// The CPU share of one core under which a server counts as settled.
constexpr double kIdleCpuShare = 0.05;

QString uriOf(const fs::path& path) {
    return QUrl::fromLocalFile(QString::fromStdString(path.string())).toString();
}

/// What one server's run measured.
struct ServerFigures {
    double indexSeconds = 0;
    double indexBytes = 0;
    double firstAnswerSeconds = 0;
    double settleSeconds = 0; ///< from the first answer until the CPU went quiet
    /// Resident memory of the serving process in MiB, at the first answer and after the queries.
    double rssAnonFirst = 0, rssFileFirst = 0, rssAnonAfter = 0, rssFileAfter = 0;
    std::map<QueryKind, std::vector<double>> latency; ///< seconds, to the answer's last byte
    std::map<QueryKind, std::vector<double>> parsed;  ///< seconds, to the answer parsed
    std::map<QueryKind, std::vector<double>> results; ///< answers per query
    size_t exactFound = 0;             ///< rare exact queries whose answer holds the name
    std::vector<double> definition;    ///< textDocument/definition at calls, seconds
    size_t definitionAnswered = 0;     ///< calls whose definition answer is not empty
    std::vector<std::string> commands; ///< as run, for the report
};

/// What every measurement is given: the tree, the work directory, and the options.
/// A call in a TU: the position of a callee's name, LSP's 0-based line and column (the generated
/// sources are ASCII: bytes are UTF-16 units).
struct CallSite {
    fs::path file;
    int line = 0, column = 0;
};

struct Setup {
    ScaleTree tree;
    /// Where textDocument/definition is asked, chosen before any server starts (callSites()).
    std::vector<CallSite> sites;
    fs::path dir;
    std::string threads;
    double timeout = 3600;
};

/// An LSP server on a child's stdio, initialized: one request at a time; the server's own
/// requests (workDoneProgress/create) answered null, its notifications read by waitFor.
class LspServer {
public:
    LspServer(const std::string& name, const std::vector<std::string>& argv, const fs::path& log,
              const fs::path& root, std::vector<std::string> environment = {})
        : name_(name) {
        ChildProcess::Options options;
        options.pipeStdin = options.pipeStdout = true;
        options.stderrPath = log;
        options.workingDirectory = root;
        options.environment = std::move(environment);
        startSeconds_ = monotonicSeconds();
        child_.emplace(ChildProcess::start(argv, options));
        lsp_.emplace(*child_);
        request(
            "initialize",
            {{"processId", QJsonValue::Null},
             {"rootUri", uriOf(root)},
             {"capabilities", QJsonObject{{"window", QJsonObject{{"workDoneProgress", true}}}}}},
            600);
        lsp_->send("initialized", {});
    }

    ~LspServer() {
        lsp_->send("shutdown", {}, nextId_++);
        lsp_->send("exit", {});
        child_->closeStdin();
        const double deadline = monotonicSeconds() + 30;
        while (lsp_->receive(deadline)) {
        }
        child_->kill();
        child_->wait();
    }

    const std::string& name() const { return name_; }
    pid_t pid() const { return child_->pid(); }
    double startSeconds() const { return startSeconds_; }
    void notify(const QString& method, const QJsonObject& params) { lsp_->send(method, params); }

    /// The result of one request; in `seconds` the time until its answer had arrived whole, in
    /// `parsedSeconds` until this client had parsed it too. Throws when the server does not
    /// answer in `timeout` seconds, or answers an error.
    QJsonValue request(const QString& method, const QJsonObject& params,
                       double timeout = kRequestTimeout, double* seconds = nullptr,
                       double* parsedSeconds = nullptr) {
        const int id = nextId_++;
        const double start = monotonicSeconds();
        if (!lsp_->send(method, params, id))
            throw std::runtime_error(name_ + " is gone");
        while (std::optional<QJsonObject> m = lsp_->receive(start + timeout)) {
            if (m->contains("method")) {
                handle(*m);
                continue;
            }
            if ((*m)["id"].toInt() != id)
                continue;
            if (seconds)
                *seconds = lsp_->arrivedSeconds() - start;
            if (parsedSeconds)
                *parsedSeconds = monotonicSeconds() - start;
            if (m->contains("error"))
                throw std::runtime_error(
                    name_ + ": " + method.toStdString() + ": " +
                    (*m)["error"].toObject()["message"].toString().toStdString());
            return (*m)["result"];
        }
        throw std::runtime_error(name_ + " did not answer " + method.toStdString());
    }

    /// Reads the server's messages until `done` holds or `timeout` seconds pass (false then);
    /// `done` is asked at least once a second, message or not.
    bool waitFor(const std::function<bool(const QJsonObject*)>& done, double timeout) {
        const double deadline = monotonicSeconds() + timeout;
        while (monotonicSeconds() < deadline) {
            std::optional<QJsonObject> m =
                lsp_->receive(std::min(deadline, monotonicSeconds() + 1.0));
            if (m && m->contains("method"))
                handle(*m);
            if (done(m ? &*m : nullptr))
                return true;
        }
        return false;
    }

private:
    void handle(const QJsonObject& message) {
        if (message.contains("id"))
            lsp_->reply(message["id"], QJsonValue::Null);
    }

    std::string name_;
    double startSeconds_ = 0;
    std::optional<ChildProcess> child_;
    std::optional<LspConnection> lsp_;
    int nextId_ = 1;
};

/// Whether a workspace/symbol answer holds a symbol named `name`.
bool holdsName(const QJsonValue& result, const std::string& name) {
    const QString wanted = QString::fromStdString(name);
    for (const QJsonValue& v : result.toArray())
        if (v.toObject()["name"].toString() == wanted)
            return true;
    return false;
}

/// Asks `query` until the answer holds it; the seconds from `startSeconds` until then.
double firstCorrectAnswer(LspServer& server, const std::string& query, double startSeconds,
                          double timeout) {
    const double deadline = startSeconds + timeout;
    for (;;) {
        const QJsonValue result =
            server.request("workspace/symbol", {{"query", QString::fromStdString(query)}});
        const double now = monotonicSeconds();
        if (holdsName(result, query))
            return now - startSeconds;
        if (now > deadline)
            throw std::runtime_error("no answer holding '" + query + "' within " +
                                     std::to_string(timeout) + " s");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

/// RssAnon and RssFile of `pid` in MiB, from /proc/PID/status.
std::pair<double, double> residentMiB(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    double anon = 0, file = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("RssAnon:"))
            anon = std::stod(line.substr(8)) / 1024;
        else if (line.starts_with("RssFile:"))
            file = std::stod(line.substr(8)) / 1024;
    }
    return {anon, file};
}

/// Waits until `pid` used under kIdleCpuShare of a core in each of four half-second intervals
/// (a server may load its index or check the tree after its first answer); the seconds until
/// that quiet began.
double waitUntilSettled(pid_t pid, double timeout) {
    const double start = monotonicSeconds();
    double user = 0, sys = 0;
    processCpuSeconds(pid, &user, &sys);
    double last = user + sys, quietSince = start;
    int quiet = 0;
    while (quiet < 4 && monotonicSeconds() - start < timeout) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        const double now = monotonicSeconds();
        if (!processCpuSeconds(pid, &user, &sys))
            break;
        if (user + sys - last < kIdleCpuShare * 0.5) {
            ++quiet;
        } else {
            quiet = 0;
            quietSince = now;
        }
        last = user + sys;
    }
    return quietSince - start;
}

/// A server being measured: its connection, the process that serves, and its figures.
struct Serving {
    LspServer* server = nullptr;
    pid_t pid = 0;
    ServerFigures* figures = nullptr;
};

/// The queries one at a time, each answer waited for before the next is sent: each query asked
/// of every server in turn, the first of them alternating query by query.
void measureQueries(const std::vector<Serving>& servers, const std::vector<ScaleQuery>& queries) {
    std::vector<std::map<QueryKind, std::pair<double, std::string>>> slowest(servers.size());
    for (size_t i = 0; i < queries.size(); ++i) {
        const ScaleQuery& q = queries[i];
        for (size_t turn = 0; turn < servers.size(); ++turn) {
            const size_t k = (i + turn) % servers.size();
            ServerFigures& figures = *servers[k].figures;
            double seconds = 0, parsed = 0;
            const QJsonValue result = servers[k].server->request(
                "workspace/symbol", {{"query", QString::fromStdString(q.text)}}, kRequestTimeout,
                &seconds, &parsed);
            slowest[k][q.kind] = std::max(slowest[k][q.kind], std::pair(seconds, q.text));
            figures.latency[q.kind].push_back(seconds);
            figures.parsed[q.kind].push_back(parsed);
            figures.results[q.kind].push_back(double(result.toArray().size()));
            if (q.kind == QueryKind::RareExact)
                figures.exactFound += holdsName(result, q.text);
        }
    }
    for (size_t k = 0; k < servers.size(); ++k) {
        std::fprintf(stderr, "scale_bench: %s: slowest workspace/symbol of each kind:",
                     servers[k].server->name().c_str());
        for (const auto& [kind, query] : slowest[k])
            std::fprintf(stderr, " %s '%s' %.2f ms;", queryKindName(kind), query.second.c_str(),
                         1000 * query.first);
        std::fprintf(stderr, "\n");
    }
}

/// Up to `perFile` calls in each of `files` TUs spread over the tree: names of the tree followed
/// by '(' on a line that ends a statement.
std::vector<CallSite> callSites(const ScaleTree& tree, size_t files, size_t perFile) {
    // Views, sorted, in one allocation: a set of 2M strings is 2M allocations, which glibc
    // sorted out again while the servers were timed (see main()).
    std::vector<std::string_view> names(tree.names.begin(), tree.names.end());
    std::sort(names.begin(), names.end());
    std::vector<CallSite> sites;
    const size_t step = std::max<size_t>(1, tree.sources.size() / files);
    for (size_t f = 0; f < tree.sources.size() && f / step < files; f += step) {
        const fs::path file = tree.root / tree.sources[f];
        std::ifstream in(file);
        std::string text;
        size_t found = 0;
        for (int line = 0; std::getline(in, text) && found < perFile; ++line) {
            if (text.find(';') == std::string::npos)
                continue;
            for (size_t i = 0; i < text.size() && found < perFile;) {
                if (!std::isalpha(static_cast<unsigned char>(text[i])) && text[i] != '_') {
                    ++i;
                    continue;
                }
                size_t end = i;
                while (end < text.size() &&
                       (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
                    ++end;
                if (end < text.size() && text[end] == '(' &&
                    std::binary_search(names.begin(), names.end(),
                                       std::string_view(text).substr(i, end - i))) {
                    sites.push_back({file, line, int(i)});
                    ++found;
                }
                i = end;
            }
        }
    }
    return sites;
}

/// textDocument/definition at each call, one at a time, each file opened first and asked once
/// untimed (clangd parses a file when it opens, and answers its first request after).
void measureDefinitions(LspServer& server, const std::vector<CallSite>& sites,
                        ServerFigures& figures) {
    fs::path open;
    auto request = [&](const CallSite& site, double* seconds) {
        const QJsonObject params{
            {"textDocument", QJsonObject{{"uri", uriOf(site.file)}}},
            {"position", QJsonObject{{"line", site.line}, {"character", site.column}}}};
        return server.request("textDocument/definition", params, kRequestTimeout, seconds);
    };
    for (const CallSite& site : sites) {
        if (site.file != open) {
            if (!open.empty())
                server.notify("textDocument/didClose",
                              {{"textDocument", QJsonObject{{"uri", uriOf(open)}}}});
            std::ifstream in(site.file);
            const std::string text((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
            server.notify("textDocument/didOpen",
                          {{"textDocument", QJsonObject{{"uri", uriOf(site.file)},
                                                        {"languageId", "cpp"},
                                                        {"version", 1},
                                                        {"text", QString::fromStdString(text)}}}});
            open = site.file;
            request(site, nullptr);
        }
        double seconds = 0;
        const QJsonValue result = request(site, &seconds);
        figures.definition.push_back(seconds);
        figures.definitionAnswered +=
            result.isArray() ? !result.toArray().isEmpty() : result.isObject();
    }
    if (!open.empty())
        server.notify("textDocument/didClose",
                      {{"textDocument", QJsonObject{{"uri", uriOf(open)}}}});
    // The slowest requests, where they were and when: a p99 of 100 requests is its second worst.
    std::vector<size_t> order(figures.definition.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return figures.definition[a] > figures.definition[b]; });
    std::fprintf(stderr, "scale_bench: %s: slowest definitions:", server.name().c_str());
    for (size_t i = 0; i < std::min<size_t>(5, order.size()); ++i) {
        const CallSite& site = sites[order[i]];
        std::fprintf(stderr, " %.2f ms (#%zu, %s:%d:%d)", 1000 * figures.definition[order[i]],
                     order[i] + 1, site.file.filename().c_str(), site.line + 1, site.column + 1);
    }
    std::fprintf(stderr, "\n");
}

/// A restart up to the queries, for either server: the first answer (timed from
/// `startSeconds`), memory then, and the wait until it settled. The serving process, which
/// `servingPid` finds.
Serving startServing(LspServer& server, double startSeconds,
                     const std::function<pid_t()>& servingPid,
                     const std::vector<ScaleQuery>& queries, double timeout,
                     ServerFigures& figures) {
    const auto exact = std::find_if(queries.begin(), queries.end(), [](const ScaleQuery& q) {
        return q.kind == QueryKind::RareExact;
    });
    if (exact == queries.end())
        throw std::runtime_error("the tree gave no rare exact name to wait for");
    figures.firstAnswerSeconds = firstCorrectAnswer(server, exact->text, startSeconds, timeout);
    const pid_t pid = servingPid();
    std::tie(figures.rssAnonFirst, figures.rssFileFirst) = residentMiB(pid);
    figures.settleSeconds = waitUntilSettled(pid, timeout);
    return {&server, pid, &figures};
}

std::string joined(const std::vector<std::string>& argv) {
    std::string out;
    for (const std::string& a : argv)
        out += (out.empty() ? "" : " ") + a;
    return out;
}

/// Total size of the regular files under `dir` (0 when there is none).
double bytesUnder(const fs::path& dir) {
    double total = 0;
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
        if (entry.is_regular_file())
            total += double(entry.file_size());
    return total;
}

/// Stops a symdexd (which `symdex lsp` started detached, not as our child): SIGTERM, then SIGKILL
/// if it is still there after 30 s. A child of ours is left to be reaped.
void stopDaemon(pid_t pid) {
    auto gone = [pid] {
        std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
        std::string skip, state;
        // pid (comm) state: a zombie has ended; its comm holds no space (symdexd).
        return !(in >> skip >> skip >> state) || state == "Z";
    };
    ::kill(pid, SIGTERM);
    for (double deadline = monotonicSeconds() + 30; !gone() && monotonicSeconds() < deadline;)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!gone())
        ::kill(pid, SIGKILL);
}

/// Starts `argv`, a symdexd on `store`, and waits until it holds the store's lock, so that the
/// `symdex lsp` started next finds it rather than starting another.
ChildProcess startOwnDaemon(const std::vector<std::string>& argv, const fs::path& store,
                            const fs::path& log) {
    ChildProcess::Options options;
    options.stderrPath = log;
    ChildProcess daemon = ChildProcess::start(argv, options);
    for (int i = 0; i < 400 && !protocol::findDaemon(store); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!protocol::findDaemon(store))
        throw std::runtime_error(argv.front() + " did not start (log: " + log.string() + ")");
    return daemon;
}

/// `symdex index` into an empty store: its wall time and the store's size.
void indexWithSymdex(const Setup& s, const std::string& symdex, const fs::path& store,
                     ServerFigures& figures) {
    if (auto running = protocol::findDaemon(store))
        throw std::runtime_error("symdexd " + std::to_string(running->pid) + " serves " +
                                 store.string() + " already; stop it first");
    fs::remove_all(store);
    const std::vector<std::string> index = {
        symdex,    "index",        "-p",        s.tree.root.string(),
        "--store", store.string(), "--threads", s.threads};
    figures.commands.push_back(joined(index));
    std::fprintf(stderr, "scale_bench: symdex: cold index\n");
    ChildProcess::Options options;
    options.stderrPath = s.dir / "logs" / "symdex-index.log";
    std::string summary;
    const ChildExit exit = runToCompletion(index, options, &summary);
    std::ofstream(options.stderrPath, std::ios::app) << summary;
    if (!exit.succeeded())
        throw std::runtime_error("symdex index: " + exit.describe() +
                                 " (log: " + options.stderrPath.string() + ")");
    figures.indexSeconds = exit.wallSeconds;
    figures.indexBytes = double(fs::file_size(store / "data.mdb"));
}

/// The restart: `symdex lsp` starts symdexd on the store, as an editor's first session does, and
/// symdexd is the process that serves (and holds the index), so its memory is the one measured.
/// With --symdexd that daemon is started here first, and `symdex lsp` bridges to it. The daemon
/// is stopped when this ends.
class SymdexRestart {
public:
    SymdexRestart(const Setup& s, const QCommandLineParser& parser, const fs::path& store,
                  ServerFigures& figures)
        : store_(store) {
        const std::vector<std::string> common = {
            "--root",  s.tree.root.string(), "-p",        s.tree.root.string(),
            "--store", store.string(),       "--threads", s.threads};
        std::vector<std::string> lsp = {parser.value("symdex").toStdString(), "lsp"};
        std::vector<std::string> daemonArgv = {parser.value("symdexd").toStdString()};
        lsp.insert(lsp.end(), common.begin(), common.end());
        daemonArgv.insert(daemonArgv.end(), common.begin(), common.end());
        const bool ownDaemon = parser.isSet("symdexd");
        if (ownDaemon)
            figures.commands.push_back(joined(daemonArgv) + "  (restart: serves)");
        figures.commands.push_back(joined(lsp) +
                                   (ownDaemon ? "  (restart: bridges to it)"
                                              : "  (restart: starts symdexd, which serves)"));
        std::fprintf(stderr, "scale_bench: symdex: restart\n");
        start_ = monotonicSeconds();
        try {
            if (ownDaemon)
                daemon_ = startOwnDaemon(daemonArgv, store, s.dir / "logs" / "symdexd.log");
            server_.emplace("symdex lsp", lsp, s.dir / "logs" / "symdex-lsp.log", s.tree.root);
        } catch (...) {
            stop();
            throw;
        }
    }
    SymdexRestart(const SymdexRestart&) = delete;
    SymdexRestart& operator=(const SymdexRestart&) = delete;
    ~SymdexRestart() { stop(); }

    LspServer& server() { return *server_; }
    double startSeconds() const { return start_; }
    /// The symdexd serving the store.
    pid_t servingPid() const {
        const std::optional<protocol::DaemonInfo> info = protocol::findDaemon(store_);
        if (!info)
            throw std::runtime_error("no symdexd serves " + store_.string());
        return info->pid;
    }

private:
    void stop() {
        server_.reset();
        if (auto info = protocol::findDaemon(store_))
            stopDaemon(info->pid);
        if (daemon_)
            daemon_->wait(); // ours (--symdexd): reaped
        daemon_.reset();
    }

    fs::path store_;
    double start_ = 0;
    std::optional<ChildProcess> daemon_;
    std::optional<LspServer> server_;
};

/// clangd-19 on its own copy of the compile database (its index lands beside it; the tree's lists
/// each TU once already), with only that project's .clangd: no standard library index, no user
/// config.
class ClangdProject {
public:
    ClangdProject(const Setup& s, const std::string& clangd) : clangd_(clangd) {
        project_ = s.dir / "clangd-project";
        fs::create_directories(project_ / "no-user-config");
        fs::copy_file(s.tree.database, project_ / "compile_commands.json",
                      fs::copy_options::overwrite_existing);
        std::ofstream(project_ / ".clangd") << "Index:\n  StandardLibrary: No\n";
        std::ofstream(project_ / "trigger.cpp").flush();
        for (const std::string& source : s.tree.sources)
            tus_.push_back((s.tree.root / source).string());
        argv_ = {clangd_,
                 "--background-index",
                 "-j=" + s.threads,
                 "--background-index-priority=normal",
                 "--compile-commands-dir=" + project_.string(),
                 "--log=error"};
        log_ = s.dir / "logs" / "clangd.log";
    }

    fs::path shards() const { return project_ / ".cache" / "clangd" / "index"; }
    const std::vector<std::string>& argv() const { return argv_; }

    /// Started and initialized, with the trigger file open: clangd loads the compile database
    /// and its index only once a file asks for them.
    std::unique_ptr<LspServer> start() const {
        auto server = std::make_unique<LspServer>(
            clangd_, argv_, log_, project_,
            std::vector<std::string>{"XDG_CONFIG_HOME=" + (project_ / "no-user-config").string()});
        server->notify("textDocument/didOpen",
                       {{"textDocument", QJsonObject{{"uri", uriOf(project_ / "trigger.cpp")},
                                                     {"languageId", "cpp"},
                                                     {"version", 1},
                                                     {"text", ""}}}});
        return server;
    }

    /// Waits for the end of the background index's progress with a shard for every TU.
    bool waitForIndex(LspServer& server, double timeout) const {
        bool ended = false;
        return server.waitFor(
            [&](const QJsonObject* m) {
                if (m && (*m)["method"] == "$/progress" &&
                    (*m)["params"].toObject()["token"] == "backgroundIndexProgress")
                    ended = (*m)["params"].toObject()["value"].toObject()["kind"] == "end";
                return ended && tusMissingFromClangdShards(tus_, shards()).empty();
            },
            timeout);
    }

private:
    std::string clangd_;
    fs::path project_, log_;
    std::vector<std::string> tus_;
    std::vector<std::string> argv_;
};

/// clangd-19's cold index from an empty .cache: its wall time and the shards' size.
void indexWithClangd(const Setup& s, const ClangdProject& project, ServerFigures& figures) {
    figures.commands.push_back(joined(project.argv()) +
                               "  (cold index from an empty .cache, then the restart)");
    fs::remove_all(project.shards().parent_path().parent_path());
    std::fprintf(stderr, "scale_bench: clangd: cold index\n");
    {
        std::unique_ptr<LspServer> server = project.start();
        if (!project.waitForIndex(*server, s.timeout))
            throw std::runtime_error("clangd's background index did not finish");
        figures.indexSeconds = monotonicSeconds() - server->startSeconds();
    }
    figures.indexBytes = bytesUnder(project.shards());
}

// The report.

constexpr int kFigureWidth = 48;

void row(const std::string& figure, double symdex, const ServerFigures* clangd, double clangdValue,
         const char* format = "%14.2f") {
    std::printf("%-*s", kFigureWidth, figure.c_str());
    std::printf(format, symdex);
    if (clangd) {
        std::printf(format, clangdValue);
        if (clangdValue > 0)
            std::printf("%14.2f", symdex / clangdValue);
        else
            std::printf("%14s", "-");
    }
    std::printf("\n");
}

std::string resultsText(const std::vector<double>& counts) {
    const Spread spread = spreadOf(counts);
    char text[64];
    std::snprintf(text, sizeof text, "%g [%g-%g]", spread.median, spread.min, spread.max);
    return text;
}

void printReport(const Setup& s, const std::vector<ScaleQuery>& queries, const ServerFigures& ours,
                 const ServerFigures* theirs) {
    constexpr double kMiB = 1024.0 * 1024.0;
    std::printf("\n%-*s%14s%14s%14s\n", kFigureWidth, "figure", "symdex", theirs ? "clangd-19" : "",
                theirs ? "symdex/clangd" : "");
    auto both = [&](const char* figure, double ServerFigures::*field, double scale = 1) {
        row(figure, ours.*field * scale, theirs, theirs ? theirs->*field * scale : 0);
    };
    both("cold index, wall (s)", &ServerFigures::indexSeconds);
    both("index on disk (MiB)", &ServerFigures::indexBytes, 1 / kMiB);
    both("first correct answer after restart (s)", &ServerFigures::firstAnswerSeconds);
    both("settling after it (s)", &ServerFigures::settleSeconds);
    both("RssAnon at first answer (MiB)", &ServerFigures::rssAnonFirst);
    both("RssFile at first answer (MiB)", &ServerFigures::rssFileFirst);
    both("RssAnon after the queries (MiB)", &ServerFigures::rssAnonAfter);
    both("RssFile after the queries (MiB)", &ServerFigures::rssFileAfter);
    const auto percentile = [](const std::map<QueryKind, std::vector<double>>& of, QueryKind kind,
                               double q) {
        const auto it = of.find(kind);
        return it == of.end() ? 0 : 1000 * nearestRankPercentile(it->second, q);
    };
    for (QueryKind kind : kQueryKinds) {
        for (double q : {50.0, 99.0}) {
            const std::string figure =
                "workspace/symbol p" + std::to_string(int(q)) + " (ms), " + queryKindName(kind);
            row(figure, percentile(ours.latency, kind, q), theirs,
                theirs ? percentile(theirs->latency, kind, q) : 0, "%14.3f");
        }
    }
    // What the client's parse of the answers adds: it grows with an answer's size.
    for (QueryKind kind : kQueryKinds)
        row(std::string("  p50 with the answer parsed, ") + queryKindName(kind),
            percentile(ours.parsed, kind, 50), theirs,
            theirs ? percentile(theirs->parsed, kind, 50) : 0, "%14.3f");
    for (double q : {50.0, 99.0}) {
        const auto latency = [&](const ServerFigures& f) {
            return f.definition.empty() ? 0 : 1000 * nearestRankPercentile(f.definition, q);
        };
        row("textDocument/definition p" + std::to_string(int(q)) + " (ms), at calls", latency(ours),
            theirs, theirs ? latency(*theirs) : 0, "%14.3f");
    }
    std::printf("%-*s%11zu/%zu", kFigureWidth, "definitions answered", ours.definitionAnswered,
                ours.definition.size());
    if (theirs)
        std::printf("%11zu/%zu", theirs->definitionAnswered, theirs->definition.size());
    std::printf("\n");
    for (QueryKind kind : kQueryKinds) {
        const std::string figure = std::string("results, median [min-max], ") + queryKindName(kind);
        auto text = [&](const ServerFigures& f) {
            const auto it = f.results.find(kind);
            return it == f.results.end() ? std::string("-") : resultsText(it->second);
        };
        std::printf("%-*s%14s%14s\n", kFigureWidth, figure.c_str(), text(ours).c_str(),
                    theirs ? text(*theirs).c_str() : "");
    }
    const size_t exact = size_t(std::count_if(
        queries.begin(), queries.end(), [](auto& q) { return q.kind == QueryKind::RareExact; }));
    std::printf("%-*s%11zu/%zu", kFigureWidth, "rare exact names found", ours.exactFound, exact);
    if (theirs)
        std::printf("%11zu/%zu", theirs->exactFound, exact);
    std::printf("\n\ncommands (threads %s, logs in %s):\n", s.threads.c_str(),
                (s.dir / "logs").c_str());
    for (const ServerFigures* f : {&ours, theirs})
        if (f)
            for (const std::string& command : f->commands)
                std::printf("  %s\n", command.c_str());
}

void printQueries(const std::vector<ScaleQuery>& queries) {
    std::printf("queries:\n");
    for (QueryKind kind : kQueryKinds) {
        std::string list;
        for (const ScaleQuery& q : queries)
            if (q.kind == kind)
                list += (list.empty() ? "" : " ") + q.text;
        std::printf("  %-20s %s\n", queryKindName(kind), list.c_str());
    }
}

int run(const QCommandLineParser& parser) {
    const double started = monotonicSeconds();
    ScaleSpec spec;
    spec.names = parser.value("names").toULongLong();
    spec.seed = parser.value("seed").toULongLong();
    Setup s;
    s.dir = fs::absolute(parser.isSet("dir") ? parser.value("dir").toStdString()
                                             : "/tmp/symdex-scale-" + std::to_string(spec.names) +
                                                   "-seed-" + std::to_string(spec.seed));
    s.threads = std::to_string(parser.value("threads").toUInt());
    s.timeout = parser.value("timeout").toDouble();
    fs::create_directories(s.dir / "logs");

    const double generating = monotonicSeconds();
    std::optional<ScaleTree> tree = existingScaleTree(spec, s.dir / "tree");
    const bool reused = tree.has_value();
    if (!reused) {
        std::fprintf(stderr, "scale_bench: generating %s\n", (s.dir / "tree").c_str());
        tree = generateScaleTree(spec, s.dir / "tree");
    }
    s.tree = std::move(*tree);
    const double treeSeconds = monotonicSeconds() - generating;
    const std::vector<ScaleQuery> queries =
        scaleQueries(s.tree.names, parser.value("queries").toULong(), spec.seed);
    constexpr size_t kDefinitionFiles = 10, kCallsPerFile = 10;
    s.sites = callSites(s.tree, kDefinitionFiles, kCallsPerFile);
    // Before any server starts: callSites() once built a set of the 2M names when the
    // definitions began, and glibc sorted its freed chunks at the next allocations, inside the
    // first timed requests (perf: _int_malloc in this process while they took 12-29 ms each).
    std::printf("scale_bench --names %zu --seed %llu: %s (%s in %.1f s): %zu TUs, %zu headers, "
                "%zu names, %zu name occurrences (%.1f a name)\n",
                spec.names, (unsigned long long)spec.seed, s.tree.root.c_str(),
                reused ? "reused" : "generated", treeSeconds, s.tree.sources.size(), s.tree.headers,
                s.tree.names.size(), s.tree.nameOccurrences,
                double(s.tree.nameOccurrences) / double(s.tree.names.size()));
    printQueries(queries);
    std::fflush(stdout);

    // Each cold index alone, then both restarts (symdex's first: clangd-19 starts once symdexd
    // has settled), then the queries of both side by side.
    const double indexing = monotonicSeconds();
    ServerFigures ours;
    const fs::path store = s.dir / "symdex-store";
    indexWithSymdex(s, parser.value("symdex").toStdString(), store, ours);
    std::optional<ServerFigures> theirs;
    std::optional<ClangdProject> project;
    if (!parser.isSet("skip-clangd")) {
        theirs.emplace();
        project.emplace(s, parser.value("clangd").toStdString());
        indexWithClangd(s, *project, *theirs);
    }
    const double serving = monotonicSeconds();
    {
        SymdexRestart symdex(s, parser, store, ours);
        std::vector<Serving> servers = {startServing(
            symdex.server(), symdex.startSeconds(), [&] { return symdex.servingPid(); }, queries,
            s.timeout, ours)};
        std::unique_ptr<LspServer> clangd;
        if (project) {
            std::fprintf(stderr, "scale_bench: clangd: restart\n");
            clangd = project->start();
            servers.push_back(startServing(
                *clangd, clangd->startSeconds(), [&] { return clangd->pid(); }, queries, s.timeout,
                *theirs));
        }
        std::fprintf(stderr, "scale_bench: queries\n");
        measureQueries(servers, queries);
        for (const Serving& serving : servers)
            std::tie(serving.figures->rssAnonAfter, serving.figures->rssFileAfter) =
                residentMiB(serving.pid);
        for (const Serving& serving : servers)
            measureDefinitions(*serving.server, s.sites, *serving.figures);
    }
    printReport(s, queries, ours, theirs ? &*theirs : nullptr);
    std::printf("\ntook %.0f s: tree %.0f s, cold indexes %.0f s, restarts and requests %.0f s\n",
                monotonicSeconds() - started, treeSeconds, serving - indexing,
                monotonicSeconds() - serving);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription("symdex against clangd-19 on a generated tree of N names: "
                                     "cold index, index size, restart, memory, workspace/symbol.");
    parser.addHelpOption();
    parser.addOptions({
        {"names", "Distinct names in the generated tree (30000, 300000, 2000000).", "n", "30000"},
        {"seed", "Seed of the tree and of the queries.", "n", "1"},
        {"dir",
         "Work directory: the tree (reused), the indexes, the logs "
         "(default /tmp/symdex-scale-N-seed-S).",
         "dir"},
        {"threads", "Indexing threads of symdex and clangd.", "n", "2"},
        {"queries",
         "Queries of each kind (100: a p99 of 20 is their slowest, one scheduler hiccup).", "n",
         "100"},
        {"symdex", "The symdex binary.", "path", SYMDEX_PATH},
        {"symdexd", "The symdexd binary (`symdex lsp` starts the one beside symdex).", "path",
         SYMDEXD_PATH},
        {"clangd", "The clangd binary.", "path", "clangd-19"},
        {"skip-clangd", "Measure symdex alone."},
        {"timeout", "Give up on an index or a first answer after this many seconds.", "s", "3600"},
    });
    parser.process(app);
    try {
        return run(parser);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scale_bench: %s\n", e.what());
        return 1;
    }
}
