// textDocument/documentHighlight: every occurrence in this document of the symbol under the
// cursor, as clangd marks them: Write where the reference writes it, Read where it reads it, Text
// elsewhere (declarations, calls, type uses). Result: DocumentHighlight[] in source order (null
// when nothing is under the cursor).
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/store.h"

#include <map>

namespace symdex::daemon {

namespace {

enum HighlightKind { kText = 1, kRead = 2, kWrite = 3 };

int highlightKind(uint16_t roles) {
    if (roles & kRoleWrite)
        return kWrite;
    if (roles & kRoleRead)
        return kRead;
    return kText;
}

} // namespace

QJsonValue handleDocumentHighlight(RequestContext& ctx, const QJsonValue& params) {
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    const StoreSnapshot snapshot = documentSnapshot(ctx, params);
    const CursorQuery query = cursorQuery(ctx, params, mapper, snapshot);
    if (!query.target)
        return QJsonValue::Null;
    ctx.checkCancelled();
    const uint64_t usr = query.target->usrHash;
    const std::optional<std::string> name = symbolName(snapshot, usr);
    struct Highlight {
        uint32_t length;
        int kind;
    };
    std::map<Position, Highlight> highlights; // one per position, the strongest kind
    for (const Reference& ref :
         snapshot.fileReferences(query.path).value_or(std::vector<Reference>{})) {
        if (ref.usrHash != usr || !isWrittenUse(ref.roles))
            continue;
        const uint32_t length =
            name ? uint32_t(name->size())
                 : identifierLength(mapper.lines().line(query.path, ref.location.line),
                                    ref.location.column - 1);
        Highlight& h = highlights.try_emplace(ref.location, Highlight{length, kText}).first->second;
        h.kind = std::max(h.kind, highlightKind(ref.roles));
    }
    for (const Symbol& symbol : snapshot.fileSymbols(query.path).value_or(std::vector<Symbol>{}))
        if (symbol.usrHash() == usr)
            highlights.try_emplace(symbol.location, Highlight{uint32_t(symbol.name.size()), kText});
    QJsonArray out;
    for (const auto& [position, h] : highlights)
        out.append(QJsonObject{{"range", mapper.rangeOf(query.path, position, h.length)},
                               {"kind", h.kind}});
    return out;
}

} // namespace symdex::daemon
