// symdex/status: what the daemon is doing (indexing state and progress, what waits, the last
// run, lock telemetry, connections). symdex/stats: what the store holds.
#include "daemon/handlers/handler.h"
#include "daemon/index_service.h"
#include "protocol/store_json.h"
#include "store/lock_telemetry.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

QJsonArray stringArray(const std::vector<std::string>& items) {
    QJsonArray out;
    for (const std::string& s : items)
        out.append(QString::fromStdString(s));
    return out;
}

QJsonObject lockTelemetryJson(const LockTelemetry& t) {
    QJsonObject out;
    for (size_t i = 0; i < kLockClassCount; ++i) {
        const LockCounters& c = t.byClass[i];
        out[QString::fromUtf8(lockClassName(LockClass(i)).data())] =
            QJsonObject{{"acquisitions", qint64(c.acquisitions)},
                        {"contended", qint64(c.contended)},
                        {"waitNs", qint64(c.waitNs)}};
    }
    return out;
}

} // namespace

/// The report of one indexing run, as symdex/status's lastRun and symdex/reindexed's params.
QJsonObject runReportJson(const IndexRunReport& r) {
    const IndexSummary& s = r.summary;
    QJsonObject o{{"run", qint64(r.run)},
                  {"tus", stringArray(s.parsedTus)},
                  {"trigger", stringArray(r.trigger)},
                  {"force", r.force},
                  {"tusTotal", qint64(s.tusTotal)},
                  {"tusUpToDate", qint64(s.tusUpToDate)},
                  {"tusRemoved", qint64(s.tusRemoved)},
                  {"tusWithErrors", qint64(s.tusWithErrors)},
                  {"filesExtracted", qint64(s.filesExtracted)},
                  {"symbols", qint64(s.symbols)},
                  {"references", qint64(s.references)},
                  {"seconds", s.wallSeconds},
                  {"cancelled", s.cancelled},
                  {"database", QString::fromStdString(r.databasePath)}};
    if (!r.error.empty())
        o["error"] = QString::fromStdString(r.error);
    if (!r.kept.empty())
        o["kept"] = QString::fromStdString(r.kept);
    // Bounded: this goes to every client after every run; the log has the count.
    constexpr size_t kSkippedShown = 100;
    QJsonArray skipped;
    for (size_t i = 0; i < r.skipped.size() && i < kSkippedShown; ++i)
        skipped.append(QString::fromStdString(r.skipped[i]));
    o["skipped"] = skipped;
    o["skippedCount"] = qint64(r.skipped.size());
    return o;
}

QJsonValue handleStatus(RequestContext& ctx, const QJsonValue&) {
    const ServerContext& server = ctx.server;
    const IndexStatus index = server.indexer.status();
    const StoreStats stats = server.store.stats();
    const bool parsing = index.state == IndexState::Indexing && !index.progress.planning;
    QJsonObject queue{
        {"pendingChanges", qint64(index.pendingChanges)},
        {"runPending", index.runPending},
        {"tusRemaining", parsing ? qint64(index.progress.tusToParse - index.progress.tusDone) : 0},
        {"stagedFiles", qint64(server.store.stagedFiles())}};
    QJsonObject o{{"state", QString::fromUtf8(indexStateName(index.state).data())},
                  {"root", QString::fromStdString(server.root)},
                  {"store", QString::fromStdString(server.storeDir)},
                  {"socket", QString::fromStdString(server.socketPath)},
                  {"files", qint64(stats.files)},
                  {"tus", qint64(stats.tus)},
                  {"symbols", qint64(stats.symbols)},
                  {"references", qint64(stats.references)},
                  {"runs", qint64(index.runsStarted)},
                  {"readOnly", server.readOnly},
                  {"queue", queue},
                  {"locks", lockTelemetryJson(LockTelemetry::snapshot())}};
    if (index.state != IndexState::Idle)
        o["progress"] = QJsonObject{{"tusDone", qint64(index.progress.tusDone)},
                                    {"tusToParse", qint64(index.progress.tusToParse)},
                                    {"planning", index.progress.planning}};
    if (index.lastRun)
        o["lastRun"] = runReportJson(*index.lastRun);
    const QJsonObject figures = server.serverFigures ? server.serverFigures() : QJsonObject{};
    for (auto it = figures.begin(); it != figures.end(); ++it)
        o[it.key()] = it.value();
    return o;
}

QJsonValue handleStats(RequestContext& ctx, const QJsonValue&) {
    QJsonObject o = protocol::storeStatsToJson(ctx.server.store.stats());
    o["store"] = QString::fromStdString(ctx.server.storeDir);
    return o;
}

} // namespace symdex::daemon
