// textDocument/hover: what the store knows of the symbol under the cursor, as markdown — its kind
// and qualified name, its signature in a code block, its comment, and where it is defined.
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/store.h"

#include <filesystem>

namespace symdex::daemon {

QJsonValue handleHover(RequestContext& ctx, const QJsonValue& params) {
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = documentSnapshot(ctx, params);
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return QJsonValue::Null;
    const std::optional<SymbolHit> best = snapshot.bestOccurrence(query.target->usrHash);
    if (!best)
        return QJsonValue::Null;
    const Symbol& s = best->symbol;
    std::string text = "### " + kindDisplayName(s.kind, s.flags) + " `" + s.qualifiedName + "`\n";
    if (!s.signature.empty())
        text += "\n```cpp\n" + s.signature + "\n```\n";
    // The comment of the definition, else of the first declaration that has one (a function's
    // is usually at its declaration in the header).
    std::string comment = s.comment;
    if (comment.empty())
        for (const SymbolHit& hit : snapshot.occurrences(query.target->usrHash))
            if (!hit.symbol.comment.empty()) {
                comment = hit.symbol.comment;
                break;
            }
    if (!comment.empty())
        text += "\n" + comment + "\n";
    std::string where = best->path;
    const std::filesystem::path relative =
        std::filesystem::path(best->path).lexically_relative(ctx.server.root);
    if (!relative.empty() && !relative.native().starts_with(".."))
        where = relative.string();
    text += "\n" + std::string(s.isDefinition() ? "Defined" : "Declared") + " at `" + where + ":" +
            std::to_string(s.location.line) + "`\n";
    return QJsonObject{
        {"contents", QJsonObject{{"kind", "markdown"}, {"value", QString::fromStdString(text)}}},
        {"range", mapper.rangeOf(query.path, query.target->start, query.target->length)},
    };
}

} // namespace symdex::daemon
