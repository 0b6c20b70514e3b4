// Reading request parameters: every accessor names the field it wanted in its RpcError
// (InvalidParams), so a client learns exactly what was wrong.
#pragma once

#include "daemon/handlers/handler.h"
#include "store/records.h"

#include <QJsonObject>
#include <QJsonValue>

#include <chrono>
#include <optional>
#include <string>

namespace symdex::daemon {

/// `params` as an object; throws InvalidParams if it is anything else.
QJsonObject paramsObject(const QJsonValue& params);
/// The object member `field` of `o` (`path` names it in errors: "textDocument").
QJsonObject requireObject(const QJsonObject& o, const char* field, const QString& path);
QString requireString(const QJsonObject& o, const char* field, const QString& path);
/// A non-negative integer no larger than `max`.
uint32_t requireUInt(const QJsonObject& o, const char* field, const QString& path,
                     qint64 max = UINT32_MAX);
bool optionalBool(const QJsonObject& o, const char* field, const QString& path, bool fallback);

/// The canonical path of a document URI or path, which must lie under the indexed root.
std::string documentPath(const ServerContext& server, const QString& uriOrPath,
                         const QString& field);
/// params.textDocument.uri, resolved as documentPath().
std::string textDocumentPath(const ServerContext& server, const QJsonObject& params);

/// How long a request on a document waits for its TU when the running index has it queued.
inline constexpr std::chrono::seconds kDocumentWait{5};

/// The snapshot to answer a request on params.textDocument from. Open files first: if the index
/// has the document's TU queued (or may find it out of date in a run starting), the TU goes to
/// the front and the request waits for it, at most kDocumentWait; so a request on a file just
/// opened on a fresh store finds it indexed. Then answers from what the store has.
StoreSnapshot documentSnapshot(RequestContext& ctx, const QJsonValue& params);

/// A document and the symbol under the cursor of an LSP TextDocumentPositionParams.
struct CursorQuery {
    std::string path;
    std::optional<CursorTarget> target; ///< nullopt: nothing indexed under the cursor
};
/// Reads the file's symbols and references from `snapshot`: the handler asks its next question
/// of the same snapshot, so the answers agree however the store changes meanwhile.
/// With `leftOfParenthesis`, the cursor right after a `(` is taken as on it: the name before the
/// parenthesis (a call's callee), as clangd's left-biased selection; nothing elsewhere.
CursorQuery cursorQuery(RequestContext& ctx, const QJsonValue& params, PositionMapper& mapper,
                        const StoreSnapshot& snapshot, bool leftOfParenthesis = false);

/// The name of a symbol (from any of its occurrences), for the length of a reference to it.
std::optional<std::string> symbolName(const StoreSnapshot& snapshot, uint64_t usrHash);

/// LSP's SymbolKind number for a store kind.
int lspSymbolKind(SymbolKind kind);

} // namespace symdex::daemon
