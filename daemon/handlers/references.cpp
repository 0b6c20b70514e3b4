// textDocument/references: every use of the symbol under the cursor, its declarations and
// definitions too when context.includeDeclaration is true; for a method that overrides others,
// the uses and declarations of those too, and with the declarations, its direct overrides'.
// Result: Location[], sorted by path and position (null when nothing is under the cursor).
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/store.h"

#include <algorithm>
#include <tuple>

namespace symdex::daemon {

QByteArray handleReferences(RequestContext& ctx, const QJsonValue& params) {
    const QJsonObject p = paramsObject(params);
    bool includeDeclaration = false;
    if (p.contains("context"))
        includeDeclaration =
            optionalBool(requireObject(p, "context", ""), "includeDeclaration", "context", false);
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = documentSnapshot(ctx, params);
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return "null";
    ctx.checkCancelled();
    const uint64_t usr = query.target->usrHash;

    struct Row {
        std::string path;
        Position position;
        uint32_t length;
    };
    std::vector<Row> rows;
    auto addReferences = [&](uint64_t of) {
        const std::optional<std::string> name = symbolName(snapshot, of);
        for (const ReferenceHit& ref : snapshot.references(of)) {
            // A reference spans the symbol's name; unnamed (not indexed) symbols: the identifier.
            const uint32_t length =
                name ? uint32_t(name->size())
                     : identifierLength(mapper.lines().line(ref.path, ref.reference.location.line),
                                        ref.reference.location.column - 1);
            rows.push_back({ref.path, ref.reference.location, length});
        }
    };
    auto addDeclarations = [&](uint64_t of) {
        for (const SymbolHit& hit : snapshot.occurrences(of))
            rows.push_back({hit.path, hit.symbol.location, uint32_t(hit.symbol.name.size())});
    };
    addReferences(usr);
    if (includeDeclaration)
        addDeclarations(usr);
    // A method that overrides others, as clangd answers: a use of any method it overrides, up
    // the hierarchy, may call this one (a call through the base), so those uses and those
    // declarations count; with the declarations, the methods that override it directly count.
    std::vector<uint64_t> overridden{usr};
    for (size_t i = 0; i < overridden.size(); ++i) {
        ctx.checkCancelled();
        for (const Related& base : snapshot.related(overridden[i], Relation::Overrides))
            if (std::find(overridden.begin(), overridden.end(), base.usrHash) == overridden.end())
                overridden.push_back(base.usrHash);
    }
    for (size_t i = 1; i < overridden.size(); ++i) {
        addReferences(overridden[i]);
        addDeclarations(overridden[i]);
    }
    if (includeDeclaration)
        for (const Related& override : snapshot.related(usr, Relation::OverriddenBy))
            addDeclarations(override.usrHash);
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return std::tie(a.path, a.position) < std::tie(b.path, b.position);
    });
    rows.erase(std::unique(rows.begin(), rows.end(),
                           [](const Row& a, const Row& b) {
                               return a.path == b.path && a.position == b.position;
                           }),
               rows.end());
    ctx.checkCancelled();
    protocol::JsonWriter out;
    out.beginArray();
    for (const Row& row : rows)
        mapper.writeLocation(out, row.path, row.position, row.length);
    out.endArray();
    return out.take();
}

} // namespace symdex::daemon
