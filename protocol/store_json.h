// Store records as JSON, losslessly, for the symdex/* methods that mirror the store's query API
// (symdex/find, symdex/resolve, ...). The CLI decodes them back into the same C++ values it gets
// from the store directly, so both paths print byte-identical output.
#pragma once

#include "store/symbol_store.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace symdex::protocol {

/// A USR hash as 16 hex digits: JSON numbers cannot hold 64 bits.
QString usrHashToJson(uint64_t usrHash);
std::optional<uint64_t> usrHashFromJson(const QString& text);

QJsonObject symbolToJson(const Symbol& symbol);
std::optional<Symbol> symbolFromJson(const QJsonObject& o);
QJsonObject referenceToJson(const Reference& ref);
std::optional<Reference> referenceFromJson(const QJsonObject& o);

QJsonObject symbolHitToJson(const SymbolHit& hit);
std::optional<SymbolHit> symbolHitFromJson(const QJsonObject& o);
QJsonObject referenceHitToJson(const ReferenceHit& hit);
std::optional<ReferenceHit> referenceHitFromJson(const QJsonObject& o);
QJsonObject nameMatchToJson(const NameMatch& match);
std::optional<NameMatch> nameMatchFromJson(const QJsonObject& o);

QJsonObject relatedToJson(const Related& related);
std::optional<Related> relatedFromJson(const QJsonObject& o);

QJsonObject storeStatsToJson(const StoreStats& stats);

} // namespace symdex::protocol
