#include "bench/clangd_peer.h"

#include "bench/child_process.h"
#include "bench/lsp_connection.h"

#include <QJsonArray>
#include <QUrl>

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace symdex::bench {

namespace {

constexpr const char* kTriggerFile = "symdex-bench-trigger.cpp";
constexpr int kInitializeId = 1;
constexpr int kShutdownId = 2;

QString fileUri(const std::filesystem::path& path) {
    return QUrl::fromLocalFile(QString::fromStdString(path.string())).toString();
}

} // namespace

std::vector<std::string> tusMissingFromClangdShards(const std::vector<std::string>& tus,
                                                    const std::filesystem::path& indexDirectory) {
    std::map<std::string, size_t> shards; // basename -> shard files
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(indexDirectory, ec)) {
        const std::string name = entry.path().filename().string();
        // basename.HASH.idx: the basename may itself hold dots, the hash never does.
        const size_t idx = name.rfind(".idx");
        const size_t hash = idx == std::string::npos ? idx : name.rfind('.', idx - 1);
        if (idx != std::string::npos && idx + 4 == name.size() && hash != std::string::npos)
            ++shards[name.substr(0, hash)];
    }
    std::vector<std::string> missing;
    for (const std::string& tu : tus) {
        size_t& left = shards[std::filesystem::path(tu).filename().string()];
        if (left == 0)
            missing.push_back(tu);
        else
            --left;
    }
    return missing;
}

ClangdPeer::ClangdPeer(const PeerSetup& setup, std::string name)
    : name_(std::move(name)), executable_(name_ == "clangd-16" ? "clangd-16" : "clangd-19"),
      project_(setup.workDirectory / "project"), log_(setup.workDirectory / "clangd.log"),
      timeoutSeconds_(setup.timeoutSeconds) {
    if (findExecutable(executable_).empty())
        throw std::runtime_error("the " + name_ + " peer needs " + executable_ +
                                 " (apt-get install " + executable_ + ", or bench/peers.sh)");
    for (const CompileCommand& c : setup.database->commands)
        tus_.push_back(c.file);
    writeDeduplicatedDatabase(*setup.database, project_);
    std::ofstream(project_ / kTriggerFile).flush();
    // The opened file would make clangd index the C++ standard library too, beside the
    // background index and competing with it for the cores: not the work being compared.
    std::ofstream(project_ / ".clangd") << "Index:\n  StandardLibrary: No\n";
    std::filesystem::create_directories(project_ / "no-user-config");
}

std::string ClangdPeer::waitForIndex(LspConnection& lsp, double* endSeconds) {
    const std::filesystem::path shards = project_ / ".cache" / "clangd" / "index";
    const double deadline = monotonicSeconds() + timeoutSeconds_;
    bool ended = false;
    for (;;) {
        // After the end, clangd may have nothing more to say while its last shards are written:
        // look at them again every second rather than only when a message comes.
        const double until = ended ? std::min(deadline, monotonicSeconds() + 1.0) : deadline;
        std::optional<QJsonObject> message = lsp.receive(until);
        if (!message) {
            const double now = monotonicSeconds();
            if (now < until)
                return "clangd closed the connection";
            if (now >= deadline)
                return "timed out";
            if (tusMissingFromClangdShards(tus_, shards).empty())
                return {};
            continue;
        }
        const QString method = (*message)["method"].toString();
        if (method == "window/workDoneProgress/create") {
            lsp.reply((*message)["id"], QJsonValue::Null);
        } else if (method == "$/progress") {
            const QJsonObject params = (*message)["params"].toObject();
            if (params["token"].toString() != "backgroundIndexProgress")
                continue;
            const QString kind = params["value"].toObject()["kind"].toString();
            ended = kind == "end";
            if (ended)
                *endSeconds = monotonicSeconds();
        } else if ((*message)["id"].toInt() == kInitializeId && message->contains("error")) {
            return "initialize failed";
        }
        // The queue can run empty between clangd's loading task and the TUs it enqueues: only
        // an end with every shard written is the end.
        if (ended && tusMissingFromClangdShards(tus_, shards).empty())
            return {};
    }
}

RunRecord ClangdPeer::run(unsigned threads, int round) {
    RunRecord run = peerRecord(name(), threads, round, tus_.size());
    std::filesystem::remove_all(project_ / ".cache");
    ChildProcess::Options options;
    options.pipeStdin = options.pipeStdout = true;
    options.stderrPath = log_;
    // Only the project's .clangd, never the user's config.yaml.
    options.environment = {"XDG_CONFIG_HOME=" + (project_ / "no-user-config").string()};
    try {
        ChildProcess child =
            ChildProcess::start({executable_, "--background-index", "-j=" + std::to_string(threads),
                                 "--compile-commands-dir=" + project_.string(),
                                 "--background-index-priority=normal", "--log=info"},
                                options);
        const double start = monotonicSeconds();
        LspConnection lsp(child);
        const QJsonObject capabilities{{"window", QJsonObject{{"workDoneProgress", true}}}};
        lsp.send("initialize",
                 {{"processId", QJsonValue::Null},
                  {"rootUri", fileUri(project_)},
                  {"capabilities", capabilities}},
                 kInitializeId);
        lsp.send("initialized", {});
        lsp.send("textDocument/didOpen",
                 {{"textDocument", QJsonObject{{"uri", fileUri(project_ / kTriggerFile)},
                                               {"languageId", "cpp"},
                                               {"version", 1},
                                               {"text", ""}}}});
        double end = start;
        run.failure = waitForIndex(lsp, &end);
        run.wallSeconds = end - start;
        // CPU up to the same moment: clangd's shutdown is not part of the index.
        const bool haveCpu = processCpuSeconds(child.pid(), &run.userSeconds, &run.sysSeconds);
        // Shut down politely (the shards are written); kill if it does not go.
        lsp.send("shutdown", {}, kShutdownId);
        lsp.send("exit", {});
        child.closeStdin();
        const double deadline = monotonicSeconds() + 30;
        while (lsp.receive(deadline)) {
        }
        child.kill();
        const ChildExit exit = child.wait();
        if (!haveCpu) {
            run.userSeconds = exit.userSeconds();
            run.sysSeconds = exit.sysSeconds();
        }
        run.peakRssMiB = exit.maxRssMiB();
        if (!run.failure.empty())
            run.failure = "clangd: " + run.failure + " (log: " + log_.string() + ")";
    } catch (const std::exception& e) {
        run.failure = e.what();
    }
    run.tusIndexed =
        tus_.size() -
        tusMissingFromClangdShards(tus_, project_ / ".cache" / "clangd" / "index").size();
    run.ok = run.failure.empty();
    std::filesystem::remove_all(project_ / ".cache");
    return run;
}

} // namespace symdex::bench
