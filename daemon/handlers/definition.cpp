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

/// A namespace is opened in many files: the opening the document's TU reads first (by its files'
/// order, TuRecord::fileIds, the main file last), as clangd answers; null when the document is
/// no TU's main file.
const SymbolHit* firstInTu(const StoreSnapshot& snapshot, const std::string& path,
                           const std::vector<SymbolHit>& hits) {
    const std::optional<TuRecord> tu = snapshot.tu(path);
    if (!tu)
        return nullptr;
    const SymbolHit* first = nullptr;
    size_t firstRank = SIZE_MAX;
    for (const SymbolHit& hit : hits) { // sorted by path and position: a file's first opening
        const uint32_t id = snapshot.fileId(hit.path);
        const auto at = std::find(tu->fileIds.begin(), tu->fileIds.end(), id);
        // The main file comes first in fileIds but reads its includes before its own
        // declarations (they are at its top): it ranks after every header.
        size_t rank = id && at != tu->fileIds.end() ? size_t(at - tu->fileIds.begin()) : SIZE_MAX;
        if (rank == 0)
            rank = SIZE_MAX - 1;
        if (rank < firstRank) {
            first = &hit;
            firstRank = rank;
        }
    }
    return first;
}

/// The occurrences of the symbol under the cursor that `wanted` selects; all of them when it
/// selects none (a symbol declared only, or defined only). With `toggle`, a cursor on a
/// definition's own name asks for the declarations instead (clangd's go-to-definition toggles
/// so, and answers one: the first by path and position here).
QJsonValue locate(RequestContext& ctx, const QJsonValue& params, bool (*wanted)(const SymbolHit&),
                  bool toggle) {
    PositionMapper mapper(ctx.encoding);
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return QJsonValue::Null;
    ctx.checkCancelled();
    const std::vector<SymbolHit> hits = snapshot.occurrences(query.target->usrHash);
    const bool onDefinition = toggle && query.target->isDeclaration &&
                              std::any_of(hits.begin(), hits.end(), [&](const SymbolHit& hit) {
                                  return hit.symbol.isDefinition() && hit.path == query.path &&
                                         hit.symbol.location == query.target->start;
                              });
    if (onDefinition) {
        for (const SymbolHit& hit : hits)
            if (!hit.symbol.isDefinition())
                return QJsonArray{mapper.location(hit.path, hit.symbol.location,
                                                  uint32_t(hit.symbol.name.size()))};
    }
    if (toggle && hits.size() > 1 && hits.front().symbol.kind == SymbolKind::Namespace)
        if (const SymbolHit* first = firstInTu(snapshot, query.path, hits))
            return QJsonArray{mapper.location(first->path, first->symbol.location,
                                              uint32_t(first->symbol.name.size()))};
    const bool any = std::any_of(hits.begin(), hits.end(), wanted);
    auto selected = [&](const SymbolHit& hit) { return !any || wanted(hit); };
    // A symbol defined in several files (a class two programs define alike, an inline function
    // in two headers): the one in this document, when there is one, as clangd answers.
    const bool here = std::any_of(hits.begin(), hits.end(), [&](const SymbolHit& hit) {
        return selected(hit) && hit.path == query.path;
    });
    QJsonArray out;
    for (const SymbolHit& hit : hits)
        if (selected(hit) && (!here || hit.path == query.path))
            out.append(
                mapper.location(hit.path, hit.symbol.location, uint32_t(hit.symbol.name.size())));
    return out;
}

} // namespace

QJsonValue handleDefinition(RequestContext& ctx, const QJsonValue& params) {
    return locate(ctx, params, isDefinition, /*toggle=*/true);
}

QJsonValue handleDeclaration(RequestContext& ctx, const QJsonValue& params) {
    return locate(ctx, params, isDeclaration, /*toggle=*/false);
}

} // namespace symdex::daemon
