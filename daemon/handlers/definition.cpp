// textDocument/definition and textDocument/declaration: the symbol under the cursor, then where
// it is defined (or declared). Result: Location[] (null when nothing is under the cursor).
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

bool isDefinition(const SymbolHit& h) {
    return h.symbol.isDefinition();
}

bool isDeclaration(const SymbolHit& h) {
    return !h.symbol.isDefinition();
}

/// An answer of locations, written as JSON text (QJsonObjects were a tenth of the work).
class Locations {
public:
    explicit Locations(PositionMapper& mapper) : mapper_(mapper) { out_.beginArray(); }
    void add(const std::string& path, Position at, uint32_t byteLength) {
        mapper_.writeLocation(out_, path, at, byteLength);
    }
    QByteArray take() {
        out_.endArray();
        return out_.take();
    }

private:
    PositionMapper& mapper_;
    protocol::JsonWriter out_;
};

/// A namespace opens in many files; as clangd, the one its TU opened first (clang's canonical
/// declaration), when the document is a TU's main file, which recorded it. Found without
/// reading the namespace's declarations (`std` has 155 in LevelDB's store).
std::optional<TuRecord::NamespaceStart> namespaceStart(const StoreSnapshot& snapshot,
                                                       const CursorQuery& query) {
    const std::optional<TuRecord> tu = snapshot.tu(query.path);
    if (!tu)
        return std::nullopt;
    for (const TuRecord::NamespaceStart& start : tu->namespaceStarts)
        if (start.usrHash == query.target->usrHash)
            return start;
    return std::nullopt;
}

/// The occurrences of the symbol under the cursor that `wanted` selects; all of them when it
/// selects none (a symbol declared only, or defined only). With `toggle`, a cursor on a
/// definition's own name asks for the declarations instead (clangd's go-to-definition toggles
/// so, and answers one: the first by path and position here).
QByteArray locate(RequestContext& ctx, const QJsonValue& params, bool (*wanted)(const SymbolHit&),
                  bool toggle) {
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = documentSnapshot(ctx, params);
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return "null";
    ctx.checkCancelled();
    Locations out(mapper);
    if (std::optional<TuRecord::NamespaceStart> start = namespaceStart(snapshot, query)) {
        out.add(start->path, start->location, query.target->length);
        return out.take();
    }
    const std::vector<SymbolHit> hits = snapshot.occurrences(query.target->usrHash);
    const bool onDefinition = toggle && query.target->isDeclaration &&
                              std::any_of(hits.begin(), hits.end(), [&](const SymbolHit& hit) {
                                  return hit.symbol.isDefinition() && hit.path == query.path &&
                                         hit.symbol.location == query.target->start;
                              });
    if (onDefinition) {
        // A declaration this TU can see: in this file or a header, not in another TU's main file
        // (LevelDB's db/filename.cc declares WriteStringToFileSync, which util/env.cc defines).
        // None: the definition itself, as clangd answers.
        auto declaration = std::find_if(hits.begin(), hits.end(), [&](const SymbolHit& hit) {
            return !hit.symbol.isDefinition() && (hit.path == query.path || !snapshot.tu(hit.path));
        });
        if (declaration != hits.end())
            out.add(declaration->path, declaration->symbol.location,
                    uint32_t(declaration->symbol.name.size()));
        else
            out.add(query.path, query.target->start, query.target->length);
        return out.take();
    }
    const bool any = std::any_of(hits.begin(), hits.end(), wanted);
    auto selected = [&](const SymbolHit& hit) { return !any || wanted(hit); };
    // A symbol defined in several files (a class two programs define alike, an inline function
    // in two headers): the one in this document, when there is one, as clangd answers.
    const bool here = std::any_of(hits.begin(), hits.end(), [&](const SymbolHit& hit) {
        return selected(hit) && hit.path == query.path;
    });
    for (const SymbolHit& hit : hits)
        if (selected(hit) && (!here || hit.path == query.path))
            out.add(hit.path, hit.symbol.location, uint32_t(hit.symbol.name.size()));
    return out.take();
}

} // namespace

QByteArray handleDefinition(RequestContext& ctx, const QJsonValue& params) {
    return locate(ctx, params, isDefinition, /*toggle=*/true);
}

QByteArray handleDeclaration(RequestContext& ctx, const QJsonValue& params) {
    return locate(ctx, params, isDeclaration, /*toggle=*/false);
}

} // namespace symdex::daemon
