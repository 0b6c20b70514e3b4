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

/// Where a hierarchy starts from the symbol under the cursor (`usr`, `hit`), if it has one.
using Start = std::optional<std::pair<uint64_t, SymbolHit>>;

/// Calls: a function's.
Start callsOf(const StoreSnapshot&, uint64_t usr, SymbolHit hit) {
    if (!isFunctionLike(hit.symbol.kind))
        return std::nullopt;
    return std::pair(usr, std::move(hit));
}

/// The class named `name` ("leveldb::Options"), if the store has one.
Start classNamed(const StoreSnapshot& snapshot, const std::string& name) {
    for (uint64_t candidate : snapshot.resolveName(name))
        if (std::optional<SymbolHit> cls = snapshot.bestOccurrence(candidate);
            cls && isClassLike(cls->symbol.kind))
            return std::pair(candidate, std::move(*cls));
    return std::nullopt;
}

/// Types, as clangd finds the record at a position: a class's own; a method's class's; a
/// variable's type's, when that is a class (not a pointer or reference to one). A field has none.
Start typesOf(const StoreSnapshot& snapshot, uint64_t usr, SymbolHit hit) {
    const SymbolKind kind = hit.symbol.kind;
    if (isClassLike(kind))
        return std::pair(usr, std::move(hit));
    if (isFunctionLike(kind) && kind != SymbolKind::Function) {
        const std::string& qualified = hit.symbol.qualifiedName;
        const size_t scope = qualified.rfind("::");
        return scope == std::string::npos ? std::nullopt
                                          : classNamed(snapshot, qualified.substr(0, scope));
    }
    if (kind != SymbolKind::Variable && kind != SymbolKind::StaticMember)
        return std::nullopt;
    // The signature is "[static ][const ]TYPE NAME" (records.h).
    std::string_view type = hit.symbol.signature;
    const std::string& name = hit.symbol.name;
    if (!type.ends_with(" " + name))
        return std::nullopt;
    type.remove_suffix(name.size() + 1);
    for (std::string_view prefix : {"static ", "const ", "volatile "})
        if (type.starts_with(prefix))
            type.remove_prefix(prefix.size());
    if (type.empty() || type.find_first_of("*&[(<") != std::string_view::npos)
        return std::nullopt; // a pointer, reference, array, function or template type
    return classNamed(snapshot, std::string(type));
}

/// prepare*Hierarchy: where the hierarchy starts from the symbol under the cursor (`startOf`), as
/// one item; `[]` when it has none; null when nothing is under the cursor.
QJsonValue prepare(RequestContext& ctx, const QJsonValue& params,
                   Start (*startOf)(const StoreSnapshot&, uint64_t, SymbolHit), bool leftRetry) {
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = documentSnapshot(ctx, params);
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    auto startAt = [&](const CursorQuery& at) -> Start {
        if (!at.target)
            return std::nullopt;
        std::optional<SymbolHit> best = snapshot.bestOccurrence(at.target->usrHash);
        return best ? startOf(snapshot, at.target->usrHash, std::move(*best)) : std::nullopt;
    };
    Start start = startAt(query);
    // Right after a call's `(`, where the name under the cursor has no type hierarchy (an
    // argument), the call's: clangd's record lookup tries the selection to the cursor's left
    // when the right one has no record (its call hierarchy does not).
    if (!start && leftRetry)
        start = startAt(cursorQuery(ctx, params, mapper, snapshot, /*leftOfParenthesis=*/true));
    if (!start)
        return query.target ? QJsonValue(QJsonArray{}) : QJsonValue::Null;
    return QJsonArray{item(mapper, start->second, start->first)};
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
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
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
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    QJsonArray out;
    for (const Related& r : snapshot.related(usr, relation))
        if (r.symbol)
            out.append(item(mapper, *r.symbol, r.usrHash));
    return out;
}

} // namespace

QJsonValue handlePrepareCallHierarchy(RequestContext& ctx, const QJsonValue& params) {
    return prepare(ctx, params, callsOf, /*leftRetry=*/false);
}

QJsonValue handleIncomingCalls(RequestContext& ctx, const QJsonValue& params) {
    return calls(ctx, params, Relation::Callers);
}

QJsonValue handleOutgoingCalls(RequestContext& ctx, const QJsonValue& params) {
    return calls(ctx, params, Relation::Callees);
}

QJsonValue handlePrepareTypeHierarchy(RequestContext& ctx, const QJsonValue& params) {
    return prepare(ctx, params, typesOf, /*leftRetry=*/true);
}

QJsonValue handleSupertypes(RequestContext& ctx, const QJsonValue& params) {
    return types(ctx, params, Relation::Bases);
}

QJsonValue handleSubtypes(RequestContext& ctx, const QJsonValue& params) {
    return types(ctx, params, Relation::Derived);
}

/// textDocument/implementation: for a virtual method, the methods that override it; for a class,
/// the classes derived from it; one level, each at its definition, else its first declaration
/// (as clangd). Location[]; null when nothing is under the cursor.
QJsonValue handleImplementation(RequestContext& ctx, const QJsonValue& params) {
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = documentSnapshot(ctx, params);
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return QJsonValue::Null;
    std::vector<SymbolHit> found;
    for (Relation relation : {Relation::OverriddenBy, Relation::Derived})
        for (Related& r : snapshot.related(query.target->usrHash, relation))
            if (r.symbol)
                found.push_back(std::move(*r.symbol));
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
