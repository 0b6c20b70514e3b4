// textDocument/documentSymbol: the file's outline as hierarchical DocumentSymbol[] (namespaces
// hold classes hold methods), built by store/outline.h. `range` is the declaration's extent,
// `selectionRange` its name.
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/outline.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

QJsonArray documentSymbols(const std::vector<OutlineNode>& nodes, const std::string& path,
                           PositionMapper& mapper) {
    QJsonArray out;
    for (const OutlineNode& node : nodes) {
        const Symbol& s = node.symbol;
        const QJsonObject selection = mapper.rangeOf(path, s.location, uint32_t(s.name.size()));
        // LSP requires selectionRange inside range; a macro's or an implicit declaration's
        // extent may not hold its name, then the name's range serves as both.
        const bool extentHoldsName =
            s.extent.begin <= s.location &&
            Position{s.location.line, s.location.column + uint32_t(s.name.size())} <= s.extent.end;
        QJsonObject o{
            {"name", QString::fromStdString(s.name)},
            {"detail", QString::fromStdString(kindDisplayName(s.kind, s.flags) +
                                              (s.isDefinition() ? "" : " (declaration)"))},
            {"kind", lspSymbolKind(s.kind)},
            {"range",
             extentHoldsName ? mapper.rangeOf(path, s.extent.begin, s.extent.end) : selection},
            {"selectionRange", selection},
        };
        if (!node.children.empty())
            o["children"] = documentSymbols(node.children, path, mapper);
        out.append(o);
    }
    return out;
}

} // namespace

QJsonValue handleDocumentSymbol(RequestContext& ctx, const QJsonValue& params) {
    const std::string path = textDocumentPath(ctx.server, paramsObject(params));
    std::optional<std::vector<Symbol>> symbols = documentSnapshot(ctx, params).fileSymbols(path);
    if (!symbols)
        return QJsonArray{};
    PositionMapper mapper(ctx.encoding, &ctx.server.store);
    return documentSymbols(buildOutline(std::move(*symbols)), path, mapper);
}

} // namespace symdex::daemon
