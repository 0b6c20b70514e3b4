#include "protocol/store_json.h"

#include <cstdio>

namespace symdex::protocol {

namespace {

QJsonObject positionJson(Position p) {
    return QJsonObject{{"line", qint64(p.line)}, {"column", qint64(p.column)}};
}

std::optional<Position> positionFrom(const QJsonValue& v) {
    const QJsonObject o = v.toObject();
    const qint64 line = o.value("line").toInteger(-1), column = o.value("column").toInteger(-1);
    if (line < 0 || column < 0 || line > UINT32_MAX || column > UINT32_MAX)
        return std::nullopt;
    return Position{uint32_t(line), uint32_t(column)};
}

} // namespace

QString usrHashToJson(uint64_t usrHash) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(usrHash));
    return QString::fromLatin1(buf);
}

std::optional<uint64_t> usrHashFromJson(const QString& text) {
    bool ok = false;
    const qulonglong value = text.toULongLong(&ok, 16);
    if (!ok || text.size() != 16)
        return std::nullopt;
    return uint64_t(value);
}

QJsonObject symbolToJson(const Symbol& s) {
    QJsonObject o{{"usr", QString::fromStdString(s.usr)},
                  {"name", QString::fromStdString(s.name)},
                  {"qualifiedName", QString::fromStdString(s.qualifiedName)},
                  {"kind", int(s.kind)},
                  {"flags", int(s.flags)},
                  {"location", positionJson(s.location)},
                  {"extentBegin", positionJson(s.extent.begin)},
                  {"extentEnd", positionJson(s.extent.end)}};
    if (!s.signature.empty())
        o.insert("signature", QString::fromStdString(s.signature));
    if (!s.comment.empty())
        o.insert("comment", QString::fromStdString(s.comment));
    return o;
}

std::optional<Symbol> symbolFromJson(const QJsonObject& o) {
    Symbol s;
    s.usr = o.value("usr").toString().toStdString();
    s.name = o.value("name").toString().toStdString();
    s.qualifiedName = o.value("qualifiedName").toString().toStdString();
    s.signature = o.value("signature").toString().toStdString();
    s.comment = o.value("comment").toString().toStdString();
    const int kind = o.value("kind").toInt(-1), flags = o.value("flags").toInt(-1);
    auto location = positionFrom(o.value("location"));
    auto begin = positionFrom(o.value("extentBegin"));
    auto end = positionFrom(o.value("extentEnd"));
    if (kind < 0 || kind > int(SymbolKind::Macro) || flags < 0 || flags > 255 || !location ||
        !begin || !end)
        return std::nullopt;
    s.kind = SymbolKind(kind);
    s.flags = uint8_t(flags);
    s.location = *location;
    s.extent = {*begin, *end};
    return s;
}

QJsonObject referenceToJson(const Reference& r) {
    QJsonObject o{{"usrHash", usrHashToJson(r.usrHash)},
                  {"location", positionJson(r.location)},
                  {"roles", int(r.roles)}};
    if (r.container)
        o.insert("container", usrHashToJson(r.container));
    return o;
}

std::optional<Reference> referenceFromJson(const QJsonObject& o) {
    auto usr = usrHashFromJson(o.value("usrHash").toString());
    auto location = positionFrom(o.value("location"));
    const int roles = o.value("roles").toInt(-1);
    std::optional<uint64_t> container = uint64_t(0);
    if (o.contains("container"))
        container = usrHashFromJson(o.value("container").toString());
    if (!usr || !location || roles < 0 || roles > 0xffff || !container)
        return std::nullopt;
    return Reference{*usr, *location, uint16_t(roles), *container};
}

QJsonObject symbolHitToJson(const SymbolHit& hit) {
    return QJsonObject{{"symbol", symbolToJson(hit.symbol)},
                       {"path", QString::fromStdString(hit.path)}};
}

std::optional<SymbolHit> symbolHitFromJson(const QJsonObject& o) {
    auto symbol = symbolFromJson(o.value("symbol").toObject());
    if (!symbol || !o.value("path").isString())
        return std::nullopt;
    return SymbolHit{std::move(*symbol), o.value("path").toString().toStdString()};
}

QJsonObject referenceHitToJson(const ReferenceHit& hit) {
    return QJsonObject{{"reference", referenceToJson(hit.reference)},
                       {"path", QString::fromStdString(hit.path)}};
}

std::optional<ReferenceHit> referenceHitFromJson(const QJsonObject& o) {
    auto ref = referenceFromJson(o.value("reference").toObject());
    if (!ref || !o.value("path").isString())
        return std::nullopt;
    return ReferenceHit{*ref, o.value("path").toString().toStdString()};
}

QJsonObject relatedToJson(const Related& r) {
    QJsonObject o{{"usrHash", usrHashToJson(r.usrHash)}};
    if (r.symbol)
        o.insert("symbol", symbolHitToJson(*r.symbol));
    QJsonArray sites;
    for (const ReferenceHit& site : r.sites)
        sites.append(referenceHitToJson(site));
    o.insert("sites", sites);
    return o;
}

std::optional<Related> relatedFromJson(const QJsonObject& o) {
    Related r;
    std::optional<uint64_t> usr = usrHashFromJson(o.value("usrHash").toString());
    if (!usr || !o.value("sites").isArray())
        return std::nullopt;
    r.usrHash = *usr;
    if (o.contains("symbol")) {
        r.symbol = symbolHitFromJson(o.value("symbol").toObject());
        if (!r.symbol)
            return std::nullopt;
    }
    for (const QJsonValue& v : o.value("sites").toArray()) {
        std::optional<ReferenceHit> site = referenceHitFromJson(v.toObject());
        if (!site)
            return std::nullopt;
        r.sites.push_back(std::move(*site));
    }
    return r;
}

QJsonObject nameMatchToJson(const NameMatch& m) {
    return QJsonObject{{"rank", int(m.rank)},
                       {"best", symbolHitToJson(m.best)},
                       {"occurrences", qint64(m.occurrences)}};
}

std::optional<NameMatch> nameMatchFromJson(const QJsonObject& o) {
    auto best = symbolHitFromJson(o.value("best").toObject());
    const int rank = o.value("rank").toInt(-1);
    const qint64 occurrences = o.value("occurrences").toInteger(-1);
    if (!best || rank < 0 || rank > int(MatchRank::Substring) || occurrences < 0)
        return std::nullopt;
    return NameMatch{MatchRank(rank), std::move(*best), uint32_t(occurrences)};
}

QJsonObject storeStatsToJson(const StoreStats& st) {
    return QJsonObject{{"formatVersion", qint64(st.formatVersion)},
                       {"files", qint64(st.files)},
                       {"tus", qint64(st.tus)},
                       {"tusWithErrors", qint64(st.tusWithErrors)},
                       {"tusFailed", qint64(st.tusFailed)},
                       {"symbols", qint64(st.symbols)},
                       {"references", qint64(st.references)},
                       {"distinctNames", qint64(st.distinctNames)},
                       {"mapBytes", qint64(st.mapSize)},
                       {"diskBytes", qint64(st.diskBytes)}};
}

} // namespace symdex::protocol
