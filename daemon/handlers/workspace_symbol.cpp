// workspace/symbol: ranked name search through the store's name index. Ranks, case-insensitive:
// exact name, prefix, word starts ("glps" finds GetLengthPrefixedSlice), then substring; within
// a rank, definitions and shorter names first (StoreSnapshot::findSymbols, docs/names.md). Result:
// SymbolInformation[], at most `limit` (default 100, a symdex extension).
#include "daemon/handlers/handler.h"
#include "daemon/handlers/params.h"
#include "store/name_index.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

constexpr uint32_t kDefaultLimit = 100;

/// "geo::Circle::area" -> "geo::Circle"; empty for a global name.
std::string_view containerOf(std::string_view qualifiedName, std::string_view name) {
    if (qualifiedName.size() > name.size() + 2 && qualifiedName.ends_with(name) &&
        qualifiedName.substr(qualifiedName.size() - name.size() - 2, 2) == "::")
        return qualifiedName.substr(0, qualifiedName.size() - name.size() - 2);
    return {};
}

} // namespace

bool workspaceSymbolIsSelective(const QJsonValue& params) {
    // Three letters or digits in the name searched for (a qualified query's last component)
    // select few names in the index, and the answer takes a few hundred microseconds (300k
    // names: substring p50 0.37-0.46 ms here, 0.51-0.71 through a worker; at 2M names a common
    // word's p99 is ~3 ms): here, on the connection's thread. A letter or two, or none, asks
    // for what may be the longest searches (at 2M names a prefix's p99 is ~10 ms): a worker.
    const QString query = params.toObject().value("query").toString();
    const qsizetype scope = query.lastIndexOf(QLatin1String("::"));
    size_t letters = 0;
    for (qsizetype i = scope < 0 ? 0 : scope + 2; i < query.size(); ++i)
        letters += query[i].unicode() < 128 && query[i].isLetterOrNumber();
    return letters >= kMinSubstring;
}

QByteArray handleWorkspaceSymbol(RequestContext& ctx, const QJsonValue& params) {
    const QJsonObject p = paramsObject(params);
    const QString query = requireString(p, "query", "");
    const uint32_t limit = p.contains("limit") ? requireUInt(p, "limit", "", 10000) : kDefaultLimit;
    // One snapshot for the search and for the records of the answers' files.
    const StoreSnapshot snapshot = ctx.server.store.snapshot();
    PositionMapper mapper(ctx.encoding, snapshot);
    const std::vector<NameMatch> matches =
        snapshot.findSymbols(query.toStdString(), limit, NameDetail::Brief);
    protocol::JsonWriter out;
    out.reserve(64 + 320 * matches.size()); // an answer's object: ~200-300 bytes
    out.beginArray();
    for (const NameMatch& m : matches) {
        const Symbol& s = m.best.symbol;
        // Members in QJsonObject's (sorted) order, as the other answers write them; a few
        // appends each (JsonWriter::append).
        if (const std::string_view container = containerOf(s.qualifiedName, s.name);
            !container.empty()) {
            out.raw(R"({"containerName":)");
            out.appendString(container).append(R"(,"kind":)");
        } else {
            out.raw(R"({"kind":)");
        }
        out.appendNumber(int64_t(lspSymbolKind(s.kind))).append(R"(,"location":)");
        mapper.appendLocation(out, m.best.path, s.location, uint32_t(s.name.size()));
        out.append(R"(,"name":)").appendString(s.name).append("}");
    }
    out.endArray();
    return out.take();
}

} // namespace symdex::daemon
