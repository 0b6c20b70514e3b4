#include "protocol/jsonrpc.h"

#include "protocol/json_writer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cstring>

namespace symdex::protocol {

namespace {

// A scanner over JSON text that QJsonDocument has already accepted: it only finds where values
// start and end, so it trusts the syntax but never reads out of bounds.

qsizetype skipSpace(QByteArrayView s, qsizetype i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        ++i;
    return i;
}

/// `i` at the opening quote; returns the index after the closing one.
qsizetype skipString(QByteArrayView s, qsizetype i) {
    for (++i; i < s.size(); ++i) {
        if (s[i] == '\\')
            ++i;
        else if (s[i] == '"')
            return i + 1;
    }
    return s.size();
}

/// `i` at the first character of a value; returns the index after its last one.
qsizetype skipValue(QByteArrayView s, qsizetype i) {
    if (i >= s.size())
        return i;
    if (s[i] == '"')
        return skipString(s, i);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < s.size()) {
            const char c = s[i];
            if (c == '"') {
                i = skipString(s, i);
                continue;
            }
            ++i;
            if (c == '{' || c == '[')
                ++depth;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i;
        }
        return i;
    }
    while (i < s.size() && !std::strchr(",}] \t\r\n", s[i]))
        ++i;
    return i;
}

/// A key's text with its quotes, decoded (escapes such as \u0069 included).
QString decodeKey(QByteArrayView quoted) {
    if (!quoted.contains('\\'))
        return QString::fromUtf8(quoted.sliced(1, quoted.size() - 2));
    const QJsonDocument doc = QJsonDocument::fromJson("[" + quoted.toByteArray() + "]");
    return doc.array().at(0).toString();
}

QByteArray frameResponse(const RequestId& id, QJsonObject response) {
    if (id.number.isEmpty()) {
        response["id"] = id.value.isUndefined() ? QJsonValue(QJsonValue::Null) : id.value;
        return frame(response);
    }
    // The id goes in as text, first; the rest is an object that is never empty ("jsonrpc").
    const QByteArray rest = QJsonDocument(response).toJson(QJsonDocument::Compact);
    return frame("{\"id\":" + id.number + "," + rest.mid(1));
}

} // namespace

std::optional<QByteArrayView> jsonMemberText(QByteArrayView object, QStringView key) {
    qsizetype i = skipSpace(object, 0);
    if (i >= object.size() || object[i] != '{')
        return std::nullopt;
    std::optional<QByteArrayView> found;
    i = skipSpace(object, i + 1);
    while (i < object.size() && object[i] == '"') {
        const qsizetype keyStart = i;
        i = skipString(object, i);
        const QByteArrayView quotedKey = object.sliced(keyStart, i - keyStart);
        i = skipSpace(object, i);
        if (i >= object.size() || object[i] != ':')
            return std::nullopt;
        i = skipSpace(object, i + 1);
        const qsizetype valueStart = i;
        i = skipValue(object, i);
        if (decodeKey(quotedKey) == key)
            found = object.sliced(valueStart, i - valueStart);
        i = skipSpace(object, i);
        if (i >= object.size() || object[i] != ',')
            break;
        i = skipSpace(object, i + 1);
    }
    return found;
}

RequestId requestId(const QJsonValue& value, std::optional<QByteArrayView> text) {
    RequestId id{value, {}};
    // The text must be the number QJsonDocument read: if the scanner and Qt ever disagree (a
    // duplicate key), the double is echoed rather than some other member's text.
    if (value.isDouble() && text && !text->isEmpty()) {
        bool ok = false;
        const double parsed = text->toByteArray().toDouble(&ok);
        if (ok && parsed == value.toDouble())
            id.number = text->toByteArray();
    }
    return id;
}

std::optional<Message> parseMessage(const QByteArray& body, RpcError* error, RequestId* id) {
    *id = RequestId{QJsonValue::Null, {}};
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = {kParseError, QString("invalid JSON at offset %1: %2")
                                   .arg(parseError.offset)
                                   .arg(parseError.errorString())};
        return std::nullopt;
    }
    if (!doc.isObject()) {
        *error = {kInvalidRequest,
                  doc.isArray() ? "batches are not supported" : "a message must be a JSON object"};
        return std::nullopt;
    }
    Message m;
    m.raw = doc.object();
    m.body = body;
    const QJsonValue rawId = m.raw.value("id");
    if (!rawId.isUndefined() && !rawId.isString() && !rawId.isDouble() && !rawId.isNull()) {
        *error = {kInvalidRequest, "'id' must be a number or a string"};
        return std::nullopt;
    }
    m.id = requestId(rawId, rawId.isDouble() ? jsonMemberText(body, u"id") : std::nullopt);
    if (!rawId.isUndefined())
        *id = m.id;
    if (m.raw.value("jsonrpc").toString() != "2.0") {
        *error = {kInvalidRequest, "'jsonrpc' must be \"2.0\""};
        return std::nullopt;
    }
    const QJsonValue method = m.raw.value("method");
    if (method.isUndefined()) {
        if (!m.hasId() || (!m.raw.contains("result") && !m.raw.contains("error"))) {
            *error = {kInvalidRequest, "a message needs 'method', or 'id' and 'result'/'error'"};
            return std::nullopt;
        }
        return m;
    }
    if (!method.isString() || method.toString().isEmpty()) {
        *error = {kInvalidRequest, "'method' must be a non-empty string"};
        return std::nullopt;
    }
    m.method = method.toString();
    m.params = m.raw.value("params");
    if (!m.params.isUndefined() && !m.params.isObject() && !m.params.isArray()) {
        *error = {kInvalidParams, "'params' must be an object or an array"};
        return std::nullopt;
    }
    return m;
}

QByteArray frameResult(const RequestId& id, const QJsonValue& result) {
    return frameResponse(id, QJsonObject{{"jsonrpc", "2.0"}, {"result", result}});
}

QByteArray frameResultText(const RequestId& id, QByteArrayView resultJson) {
    JsonWriter w;
    w.beginObject();
    w.key("id");
    if (!id.number.isEmpty())
        w.raw(std::string_view(id.number.constData(), size_t(id.number.size())));
    else if (id.value.isString()) {
        // As QJsonDocument writes it: a lone surrogate the client escaped stays \uXXXX, where
        // the text's UTF-8 would have made it '?' and the client could not match the answer.
        const QByteArray array = QJsonDocument(QJsonArray{id.value}).toJson(QJsonDocument::Compact);
        w.raw(std::string_view(array.constData() + 1, size_t(array.size()) - 2));
    } else
        w.raw("null");
    w.key("jsonrpc").value("2.0");
    w.key("result").raw(std::string_view(resultJson.data(), size_t(resultJson.size())));
    w.endObject();
    return frame(w.take());
}

QByteArray frameError(const RequestId& id, int code, const QString& message) {
    return frameResponse(id,
                         QJsonObject{{"jsonrpc", "2.0"},
                                     {"error", QJsonObject{{"code", code}, {"message", message}}}});
}

QJsonObject makeResult(const QJsonValue& id, const QJsonValue& result) {
    return QJsonObject{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}};
}

QJsonObject makeError(const QJsonValue& id, int code, const QString& message) {
    return QJsonObject{{"jsonrpc", "2.0"},
                       {"id", id},
                       {"error", QJsonObject{{"code", code}, {"message", message}}}};
}

QJsonObject makeNotification(const QString& method, const QJsonValue& params) {
    return QJsonObject{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}};
}

QJsonObject makeRequest(const QJsonValue& id, const QString& method, const QJsonValue& params) {
    return QJsonObject{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

QString idKey(const RequestId& id) {
    if (id.value.isString())
        return "s:" + id.value.toString();
    if (!id.number.isEmpty())
        return "n:" + QString::fromLatin1(id.number);
    if (id.value.isDouble())
        return "n:" + QString::number(id.value.toDouble(), 'g', 17);
    return "null";
}

} // namespace symdex::protocol
