// symdex/find, symdex/resolve, symdex/occurrences, symdex/references, symdex/fileSymbols,
// symdex/related: the
// store's query API over the socket, with lossless store records (protocol/store_json.h). The
// `symdex` CLI uses them when a daemon runs, and prints exactly what it prints from the store.
// Paths are store paths as given (any file the store holds), not LSP documents.
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "protocol/store_json.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

uint64_t requireUsrHash(const QJsonObject& p) {
    const QString text = requireString(p, "usrHash", "");
    std::optional<uint64_t> usr = protocol::usrHashFromJson(text);
    if (!usr)
        throw protocol::RpcError{protocol::kInvalidParams,
                                 "'usrHash' must be 16 hex digits, not '" + text + "'"};
    return *usr;
}

} // namespace

QJsonValue handleFind(RequestContext& ctx, const QJsonValue& params) {
    const QJsonObject p = paramsObject(params);
    const QString pattern = requireString(p, "pattern", "");
    const uint32_t limit = p.contains("limit") ? requireUInt(p, "limit", "", 1000000) : 50;
    QJsonArray out;
    for (const NameMatch& m : ctx.server.store.findSymbols(pattern.toStdString(), limit))
        out.append(protocol::nameMatchToJson(m));
    return out;
}

QJsonValue handleResolve(RequestContext& ctx, const QJsonValue& params) {
    const QString name = requireString(paramsObject(params), "name", "");
    QJsonArray out;
    for (uint64_t usr : ctx.server.store.resolveName(name.toStdString()))
        out.append(protocol::usrHashToJson(usr));
    return out;
}

QJsonValue handleOccurrences(RequestContext& ctx, const QJsonValue& params) {
    QJsonArray out;
    for (const SymbolHit& hit : ctx.server.store.occurrences(requireUsrHash(paramsObject(params))))
        out.append(protocol::symbolHitToJson(hit));
    return out;
}

QJsonValue handleSymbolReferences(RequestContext& ctx, const QJsonValue& params) {
    QJsonArray out;
    for (const ReferenceHit& hit :
         ctx.server.store.references(requireUsrHash(paramsObject(params))))
        out.append(protocol::referenceHitToJson(hit));
    return out;
}

QJsonValue handleRelated(RequestContext& ctx, const QJsonValue& params) {
    const QJsonObject p = paramsObject(params);
    const uint64_t usr = requireUsrHash(p);
    const QString name = requireString(p, "relation", "");
    const std::optional<Relation> relation = parseRelation(name.toStdString());
    if (!relation)
        throw protocol::RpcError{protocol::kInvalidParams,
                                 "'relation' must be callers, callees, bases, derived, overrides "
                                 "or overridden-by, not '" +
                                     name + "'"};
    QJsonArray out;
    for (const Related& r : ctx.server.store.related(usr, *relation))
        out.append(protocol::relatedToJson(r));
    return out;
}

QJsonValue handleFileSymbols(RequestContext& ctx, const QJsonValue& params) {
    const QString path = requireString(paramsObject(params), "path", "");
    if (!path.startsWith('/'))
        throw protocol::RpcError{protocol::kInvalidParams,
                                 "'path' must be absolute, not '" + path + "'"};
    std::optional<std::vector<Symbol>> symbols = ctx.server.store.fileSymbols(path.toStdString());
    if (!symbols)
        return QJsonValue::Null;
    QJsonArray out;
    for (const Symbol& s : *symbols)
        out.append(protocol::symbolToJson(s));
    return out;
}

} // namespace symdex::daemon
