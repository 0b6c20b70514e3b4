#include "daemon/protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <algorithm>
#include <cstring>
#include <limits>

namespace symdex::daemon {

namespace {

/// A Content-Length value: plain decimal digits only (no sign, no spaces inside, no hex), so
/// that one byte count has one spelling and nothing wraps around.
bool parseLength(const QByteArray& value, size_t* length, std::string* error) {
    if (value.isEmpty() ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        *error = "Content-Length '" + value.left(40).toStdString() + "' is not a number";
        return false;
    }
    size_t n = 0;
    for (char c : value) {
        const size_t digit = size_t(c - '0');
        if (n > (std::numeric_limits<size_t>::max() - digit) / 10) {
            *error = "Content-Length '" + value.left(40).toStdString() + "' is out of range";
            return false;
        }
        n = n * 10 + digit;
    }
    *length = n;
    return true;
}

std::string headerTooLong() {
    return "header block exceeds the limit of " + std::to_string(kMaxHeaderBytes) +
           " bytes (blank line included)";
}

} // namespace

bool FrameReader::parseHeader(qsizetype headerEnd, std::string* error) {
    const QByteArray header = buffer_.left(headerEnd);
    std::optional<size_t> length;
    for (const QByteArray& line : header.split('\n')) {
        const QByteArray field = line.trimmed();
        if (field.isEmpty())
            continue;
        const qsizetype colon = field.indexOf(':');
        if (colon <= 0) {
            *error = "malformed header line '" + field.left(80).toStdString() + "'";
            return false;
        }
        const QByteArray name = field.left(colon).trimmed().toLower();
        if (name != "content-length")
            continue; // Content-Type and unknown fields carry nothing we need
        // Two lengths, even equal ones, mean the sender's framing cannot be trusted.
        if (length) {
            *error = "more than one Content-Length header";
            return false;
        }
        size_t n = 0;
        if (!parseLength(field.mid(colon + 1).trimmed(), &n, error))
            return false;
        length = n;
    }
    if (!length) {
        *error = "header without Content-Length";
        return false;
    }
    if (*length > maxBody_) {
        *error = std::string(bodyName_) + " of " + std::to_string(*length) +
                 " bytes exceeds the limit of " + std::to_string(maxBody_) + " bytes";
        return false;
    }
    bodyLength_ = *length;
    return true;
}

bool FrameReader::checkPartialHeader(std::string* error) const {
    // Fail fast on a stream that is not framed at all (raw JSON, a stray line) instead of waiting
    // for a blank line that may never come.
    if (buffer_.startsWith('{') || buffer_.startsWith('[')) {
        *error = "message without a Content-Length header";
        return false;
    }
    const qsizetype lastNewline = buffer_.lastIndexOf('\n');
    for (const QByteArray& line : buffer_.left(lastNewline + 1).split('\n')) {
        const QByteArray field = line.trimmed();
        if (!field.isEmpty() && field.indexOf(':') <= 0) {
            *error = "malformed header line '" + field.left(80).toStdString() + "'";
            return false;
        }
    }
    return true;
}

FrameReader::Status FrameReader::next(QByteArray* body, std::string* error) {
    if (headerLength_ < 0) {
        // Raw JSON is refused whether or not a blank line has arrived yet, so that a stream is
        // judged the same however the socket splits it (found by tests/fuzz/protocol_fuzzer).
        if (buffer_.startsWith('{') || buffer_.startsWith('[')) {
            *error = "message without a Content-Length header";
            return Status::Error;
        }
        // The blank line must end within the first kMaxHeaderBytes bytes, so only they are
        // searched: the limit holds whether the header came in one read or in many.
        const qsizetype window = std::min(buffer_.size(), qsizetype(kMaxHeaderBytes));
        const qsizetype end = QByteArrayView(buffer_).first(window).indexOf("\r\n\r\n");
        if (end < 0) {
            if (!checkPartialHeader(error))
                return Status::Error;
            if (size_t(buffer_.size()) >= kMaxHeaderBytes) {
                *error = headerTooLong();
                return Status::Error;
            }
            return Status::NeedMore;
        }
        if (!parseHeader(end, error))
            return Status::Error;
        headerLength_ = end + 4;
    }
    if (size_t(buffer_.size() - headerLength_) < bodyLength_)
        return Status::NeedMore;
    *body = buffer_.mid(headerLength_, qsizetype(bodyLength_));
    buffer_.remove(0, headerLength_ + qsizetype(bodyLength_));
    headerLength_ = -1;
    bodyLength_ = 0;
    return Status::Message;
}

QByteArray frame(const QByteArray& json) {
    return "Content-Length: " + QByteArray::number(json.size()) + "\r\n\r\n" + json;
}

QByteArray frame(const QJsonObject& message) {
    return frame(QJsonDocument(message).toJson(QJsonDocument::Compact));
}

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

} // namespace symdex::daemon
