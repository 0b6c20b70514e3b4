// JSON-RPC 2.0 as symdexd speaks it, in LSP frames (protocol/framing.h): parsing a message,
// keeping request ids exactly as the client wrote them, and building the replies. docs/protocol.md
// describes the protocol for clients.
#pragma once

#include "protocol/framing.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringView>

#include <optional>

namespace symdex::protocol {

/// Asked by `symdex lsp` with its stdin and stdout passed beside the request (SCM_RIGHTS): the
/// daemon then serves the editor on them as a connection of its own, and the bridge copies no
/// byte. The asking connection stays open, unserved, for as long as that session: when either
/// closes the daemon closes the other, and `symdex lsp` exits.
inline constexpr const char* kAdoptStdio = "symdex/adoptStdio";

/// JSON-RPC 2.0 and LSP error codes.
enum ErrorCode : int {
    kParseError = -32700,
    kInvalidRequest = -32600,
    kMethodNotFound = -32601,
    kInvalidParams = -32602,
    kInternalError = -32603,
    kServerNotInitialized = -32002,
    kRequestFailed = -32803,
    kRequestCancelled = -32800,
};

/// A failure a handler reports to the client as a JSON-RPC error.
struct RpcError {
    int code;
    QString message;
};

/// A request id as the client wrote it. The answer must carry the same id, but QJsonValue holds
/// numbers as doubles: 2^70 or 0.1 would go back spelled differently, a big integer changed. So
/// a number also keeps its JSON text, and answers write that text byte for byte.
struct RequestId {
    QJsonValue value;  ///< a string, a number or null; undefined when absent (a notification)
    QByteArray number; ///< the number's text as received; empty unless `value` is a number
    bool isUndefined() const { return value.isUndefined(); }
};

/// The id `value`, whose JSON text in the message was `text` (nullopt when not found).
RequestId requestId(const QJsonValue& value, std::optional<QByteArrayView> text);

/// One parsed message: a request (method and id), a notification (method, no id) or a response
/// to a request the server sent (id, no method).
struct Message {
    RequestId id; ///< undefined for notifications
    QString method;
    QJsonValue params; ///< undefined when absent
    QJsonObject raw;
    QByteArray body; ///< the message as received, for ids nested in params ($/cancelRequest)
    bool hasId() const { return !id.isUndefined(); }
    bool isResponse() const { return method.isEmpty() && hasId(); }
};

/// Parses a message body; on failure returns nullopt and sets *error to the JSON-RPC error to
/// send back (with the request's id when one could be read, else null).
std::optional<Message> parseMessage(const QByteArray& body, RpcError* error, RequestId* id);

/// The JSON text of member `key` of `object` (the text of a JSON object, already known to be
/// valid JSON), or nullopt. With duplicate keys the last wins, as in QJsonDocument.
std::optional<QByteArrayView> jsonMemberText(QByteArrayView object, QStringView key);

/// A response to `id`, framed, with the id written exactly as the client sent it.
QByteArray frameResult(const RequestId& id, const QJsonValue& result);
/// The same, for a result whose JSON text the handler wrote (JsonWriter).
QByteArray frameResultText(const RequestId& id, QByteArrayView resultJson);
QByteArray frameError(const RequestId& id, int code, const QString& message);

/// Messages for clients and tests, where ids are plain JSON values.
QJsonObject makeResult(const QJsonValue& id, const QJsonValue& result);
QJsonObject makeError(const QJsonValue& id, int code, const QString& message);
QJsonObject makeNotification(const QString& method, const QJsonValue& params);
QJsonObject makeRequest(const QJsonValue& id, const QString& method, const QJsonValue& params);

/// A request id as a map key: numbers and strings never collide ("1" vs 1), and numbers compare
/// by their text, so 2^70 and 2^70 + 1 are two ids although one double holds both.
QString idKey(const RequestId& id);

} // namespace symdex::protocol
