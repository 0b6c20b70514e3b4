// Call and type hierarchies and go-to-implementation, from StoreSnapshot::related:
//   textDocument/prepareCallHierarchy, callHierarchy/incomingCalls, callHierarchy/outgoingCalls,
//   textDocument/prepareTypeHierarchy, typeHierarchy/supertypes, typeHierarchy/subtypes,
//   textDocument/implementation.
// An item is the symbol's definition (else its first declaration); its `data` carries the USR
// hash, so that the follow-up requests need no position lookup.
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "protocol/store_json.h"
#include "store/store.h"

#include <set>

namespace symdex::daemon {

namespace {

/// A CallHierarchyItem or TypeHierarchyItem (the same shape).
QJsonObject item(PositionMapper& mapper, const SymbolHit& hit, uint64_t usrHash) {
    const Symbol& s = hit.symbol;
    const QJsonObject selection = mapper.rangeOf(hit.path, s.location, uint32_t(s.name.size()));
    const bool extentHoldsName =
        s.extent.begin <= s.location &&
        Position{s.location.line, s.location.column + uint32_t(s.name.size())} <= s.extent.end;
    return QJsonObject{
        {"name", QString::fromStdString(s.name)},
        {"kind", lspSymbolKind(s.kind)},
        {"detail", QString::fromStdString(s.qualifiedName)},
        {"uri", pathToUri(hit.path)},
        {"range",
         extentHoldsName ? mapper.rangeOf(hit.path, s.extent.begin, s.extent.end) : selection},
        {"selectionRange", selection},
        {"data", QJsonObject{{"usrHash", protocol::usrHashToJson(usrHash)}}},
    };
}

/// prepare*Hierarchy: the symbol under the cursor as one item, if it is of a kind the hierarchy
/// holds (`accepts`: functions for calls, classes for types, as clangd); null when nothing is
/// under the cursor.
QJsonValue prepare(RequestContext& ctx, const QJsonValue& params, bool (*accepts)(SymbolKind)) {
    PositionMapper mapper(ctx.encoding);
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return QJsonValue::Null;
    const std::optional<SymbolHit> best = snapshot.bestOccurrence(query.target->usrHash);
    if (!best || !accepts(best->symbol.kind))
        return QJsonArray{};
    return QJsonArray{item(mapper, *best, query.target->usrHash)};
}

/// params.item.data.usrHash, as prepare*Hierarchy set it.
uint64_t itemUsr(const QJsonValue& params) {
    const QJsonObject data =
        requireObject(requireObject(paramsObject(params), "item", ""), "data", "item");
    const QString text = requireString(data, "usrHash", "item.data");
    std::optional<uint64_t> usr = protocol::usrHashFromJson(text);
    if (!usr)
        throw protocol::RpcError{protocol::kInvalidParams,
                                 "'item.data.usrHash' must be 16 hex digits, not '" + text + "'"};
    return *usr;
}

/// incomingCalls (`from`, the calls in the caller) and outgoingCalls (`to`, the calls of it in
/// the function asked about).
QJsonValue calls(RequestContext& ctx, const QJsonValue& params, Relation relation) {
    const uint64_t usr = itemUsr(params);
    PositionMapper mapper(ctx.encoding);
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    // The name each site spells: the function asked about (incoming) or the callee (outgoing).
    const std::optional<std::string> asked = symbolName(snapshot, usr);
    QJsonArray out;
    for (const Related& r : snapshot.related(usr, relation)) {
        ctx.checkCancelled();
        if (!r.symbol)
            continue;
        const std::optional<std::string>& spelled =
            relation == Relation::Callers ? asked : std::optional(r.symbol->symbol.name);
        QJsonArray ranges;
        for (const ReferenceHit& site : r.sites)
            ranges.append(mapper.rangeOf(site.path, site.reference.location,
                                         uint32_t(spelled ? spelled->size() : 0)));
        out.append(QJsonObject{
            {relation == Relation::Callers ? "from" : "to", item(mapper, *r.symbol, r.usrHash)},
            {"fromRanges", ranges}});
    }
    return out;
}

QJsonValue types(RequestContext& ctx, const QJsonValue& params, Relation relation) {
    const uint64_t usr = itemUsr(params);
    PositionMapper mapper(ctx.encoding);
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    QJsonArray out;
    for (const Related& r : snapshot.related(usr, relation))
        if (r.symbol)
            out.append(item(mapper, *r.symbol, r.usrHash));
    return out;
}

} // namespace

QJsonValue handlePrepareCallHierarchy(RequestContext& ctx, const QJsonValue& params) {
    return prepare(ctx, params, isFunctionLike);
}

QJsonValue handleIncomingCalls(RequestContext& ctx, const QJsonValue& params) {
    return calls(ctx, params, Relation::Callers);
}

QJsonValue handleOutgoingCalls(RequestContext& ctx, const QJsonValue& params) {
    return calls(ctx, params, Relation::Callees);
}

QJsonValue handlePrepareTypeHierarchy(RequestContext& ctx, const QJsonValue& params) {
    return prepare(ctx, params, isClassLike);
}

QJsonValue handleSupertypes(RequestContext& ctx, const QJsonValue& params) {
    return types(ctx, params, Relation::Bases);
}

QJsonValue handleSubtypes(RequestContext& ctx, const QJsonValue& params) {
    return types(ctx, params, Relation::Derived);
}

/// textDocument/implementation: for a virtual method, every method overriding it at any depth;
/// for a class, every class derived from it at any depth. Each where clangd puts it: a method at
/// its declaration in the class (a definition may follow from there), a class at its
/// definition. Location[]; null when nothing is under the cursor.
QJsonValue handleImplementation(RequestContext& ctx, const QJsonValue& params) {
    PositionMapper mapper(ctx.encoding);
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return QJsonValue::Null;
    std::set<uint64_t> seen{query.target->usrHash};
    std::vector<uint64_t> frontier{query.target->usrHash};
    std::vector<SymbolHit> found;
    while (!frontier.empty()) {
        ctx.checkCancelled();
        const uint64_t usr = frontier.back();
        frontier.pop_back();
        for (Relation relation : {Relation::OverriddenBy, Relation::Derived})
            for (Related& r : snapshot.related(usr, relation))
                if (seen.insert(r.usrHash).second) {
                    frontier.push_back(r.usrHash);
                    if (!r.symbol)
                        continue;
                    if (isFunctionLike(r.symbol->symbol.kind))
                        for (SymbolHit& hit : snapshot.occurrences(r.usrHash))
                            if (!hit.symbol.isDefinition()) {
                                r.symbol = std::move(hit); // the first declaration
                                break;
                            }
                    found.push_back(std::move(*r.symbol));
                }
    }
    std::sort(found.begin(), found.end(), [](const SymbolHit& a, const SymbolHit& b) {
        return std::tie(a.path, a.symbol.location) < std::tie(b.path, b.symbol.location);
    });
    QJsonArray out;
    for (const SymbolHit& hit : found)
        out.append(
            mapper.location(hit.path, hit.symbol.location, uint32_t(hit.symbol.name.size())));
    return out;
}

} // namespace symdex::daemon
