// workspace/symbol: ranked name search through the store's name index. Ranks, case-insensitive:
// exact name, prefix, word starts ("glps" finds GetLengthPrefixedSlice), then substring; within
// a rank, definitions and shorter names first (StoreSnapshot::findSymbols, docs/names.md). Result:
// SymbolInformation[], at most `limit` (default 100, a symdex extension).
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

constexpr uint32_t kDefaultLimit = 100;

/// "geo::Circle::area" -> "geo::Circle"; empty for a global name.
QString containerOf(const std::string& qualifiedName, const std::string& name) {
    if (qualifiedName.size() > name.size() + 2 && qualifiedName.ends_with("::" + name))
        return QString::fromStdString(
            qualifiedName.substr(0, qualifiedName.size() - name.size() - 2));
    return {};
}

} // namespace

QJsonValue handleWorkspaceSymbol(RequestContext& ctx, const QJsonValue& params) {
    const QJsonObject p = paramsObject(params);
    const QString query = requireString(p, "query", "");
    const uint32_t limit = p.contains("limit") ? requireUInt(p, "limit", "", 10000) : kDefaultLimit;
    PositionMapper mapper(ctx.encoding);
    QJsonArray out;
    for (const NameMatch& m : ctx.server.store.findSymbols(query.toStdString(), limit)) {
        const Symbol& s = m.best.symbol;
        QJsonObject info{
            {"name", QString::fromStdString(s.name)},
            {"kind", lspSymbolKind(s.kind)},
            {"location", mapper.location(m.best.path, s.location, uint32_t(s.name.size()))},
        };
        const QString container = containerOf(s.qualifiedName, s.name);
        if (!container.isEmpty())
            info["containerName"] = container;
        out.append(info);
    }
    return out;
}

} // namespace symdex::daemon
