// What starts a re-index from a client: symdex/index (explicit), textDocument/didSave and
// workspace/didChangeWatchedFiles (notifications). Each only queues a run (IndexService); the
// incremental indexer then re-parses exactly the TUs that read a changed file. didOpen moves the
// document's TU to the front of the queue.
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "daemon/index_service.h"

namespace symdex::daemon {

namespace {

void refuseIfReadOnly(const RequestContext& ctx) {
    if (ctx.server.readOnly)
        throw protocol::RpcError{protocol::kRequestFailed,
                                 "symdexd serves this store read-only (--read-only): it does not "
                                 "index; the store changes when symdex index or symdex merge "
                                 "writes it"};
}

} // namespace

QJsonValue handleIndex(RequestContext& ctx, const QJsonValue& params) {
    refuseIfReadOnly(ctx);
    const QJsonObject p = params.isUndefined() ? QJsonObject{} : paramsObject(params);
    const bool force = optionalBool(p, "force", "", false);
    // The one way to let a database that lists no existing file empty the store.
    const bool pruneEmpty = optionalBool(p, "pruneEmpty", "", false);
    std::vector<std::string> paths;
    if (p.contains("paths")) {
        if (!p.value("paths").isArray())
            throw protocol::RpcError{protocol::kInvalidParams,
                                     "'paths' must be an array of file URIs or paths"};
        const QJsonArray list = p.value("paths").toArray();
        for (qsizetype i = 0; i < list.size(); ++i) {
            const QString field = QString("paths[%1]").arg(i);
            if (!list[i].isString())
                throw protocol::RpcError{protocol::kInvalidParams,
                                         "'" + field + "' must be a string"};
            paths.push_back(documentPath(ctx.server, list[i].toString(), field));
        }
    }
    ctx.server.indexer.request(paths, force, pruneEmpty);
    QJsonArray queued;
    for (const std::string& path : paths)
        queued.append(QString::fromStdString(path));
    return QJsonObject{
        {"queued", true}, {"paths", queued}, {"force", force}, {"pruneEmpty", pruneEmpty}};
}

QJsonValue handleDidSave(RequestContext& ctx, const QJsonValue& params) {
    if (ctx.server.readOnly)
        return QJsonValue::Null; // a notification: nothing to answer, nothing to index
    ctx.server.indexer.request({textDocumentPath(ctx.server, paramsObject(params))}, false);
    return QJsonValue::Null;
}

QJsonValue handleDidOpen(RequestContext& ctx, const QJsonValue& params) {
    if (ctx.server.readOnly)
        return QJsonValue::Null;
    // The editor shows this file: its TU, if queued, is parsed next (IndexService::prioritize).
    ctx.server.indexer.prioritize(textDocumentPath(ctx.server, paramsObject(params)));
    return QJsonValue::Null;
}

QJsonValue handleDidChangeWatchedFiles(RequestContext& ctx, const QJsonValue& params) {
    if (ctx.server.readOnly)
        return QJsonValue::Null;
    const QJsonObject p = paramsObject(params);
    if (!p.value("changes").isArray())
        throw protocol::RpcError{protocol::kInvalidParams,
                                 "'changes' must be an array of FileEvent"};
    std::vector<std::string> paths;
    for (const QJsonValue& change : p.value("changes").toArray()) {
        const QString uri = change.toObject().value("uri").toString();
        // Events for files outside the root (a client watching more) are not ours to index.
        try {
            paths.push_back(documentPath(ctx.server, uri, "changes[].uri"));
        } catch (const protocol::RpcError&) {
        }
    }
    if (!paths.empty())
        ctx.server.indexer.request(paths, false);
    return QJsonValue::Null;
}

} // namespace symdex::daemon
