#include "daemon/protocol.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace symdex::daemon {

namespace {

QByteArray trimmed(QByteArray s) {
    return s.trimmed();
}

} // namespace

bool FrameReader::parseHeader(qsizetype headerEnd, std::string* error) {
    const QByteArray header = buffer_.left(headerEnd);
    std::optional<size_t> length;
    for (const QByteArray& line : header.split('\n')) {
        const QByteArray field = trimmed(line);
        if (field.isEmpty())
            continue;
        const qsizetype colon = field.indexOf(':');
        if (colon <= 0) {
            *error = "malformed header line '" + field.left(80).toStdString() + "'";
            return false;
        }
        const QByteArray name = field.left(colon).trimmed().toLower();
        const QByteArray value = field.mid(colon + 1).trimmed();
        if (name != "content-length")
            continue; // Content-Type and unknown fields carry nothing we need
        bool ok = false;
        const qulonglong n = value.toULongLong(&ok);
        if (!ok) {
            *error = "Content-Length '" + value.left(40).toStdString() + "' is not a number";
            return false;
        }
        length = size_t(n);
    }
    if (!length) {
        *error = "header without Content-Length";
        return false;
    }
    if (*length > maxBody_) {
        *error = "message of " + std::to_string(*length) + " bytes exceeds the limit of " +
                 std::to_string(maxBody_) + " bytes";
        return false;
    }
    bodyLength_ = *length;
    return true;
}

bool FrameReader::checkPartialHeader(std::string* error) const {
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
        // Fail fast on a stream that is not framed at all (raw JSON) instead of waiting for a
        // blank line that may never come; checked whether or not that line has arrived, so that
        // a stream is judged the same however the socket splits it.
        if (buffer_.startsWith('{') || buffer_.startsWith('[')) {
            *error = "message without a Content-Length header";
            return Status::Error;
        }
        const qsizetype end = buffer_.indexOf("\r\n\r\n");
        if (end < 0 || size_t(end) + 4 > kMaxHeaderBytes) {
            if (end < 0 && !checkPartialHeader(error))
                return Status::Error;
            // At kMaxHeaderBytes without a blank line, the header block (blank line included)
            // cannot fit: the same limit as a complete header's.
            if (end >= 0 || size_t(buffer_.size()) >= kMaxHeaderBytes) {
                *error = "no end of header (\\r\\n\\r\\n) within " +
                         std::to_string(kMaxHeaderBytes) + " bytes";
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

std::optional<Message> parseMessage(const QByteArray& body, RpcError* error, QJsonValue* id) {
    *id = QJsonValue::Null;
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
    const QJsonValue rawId = m.raw.value("id");
    if (!rawId.isUndefined() && !rawId.isString() && !rawId.isDouble() && !rawId.isNull()) {
        *error = {kInvalidRequest, "'id' must be a number or a string"};
        return std::nullopt;
    }
    if (!rawId.isUndefined())
        *id = rawId;
    if (m.raw.value("jsonrpc").toString() != "2.0") {
        *error = {kInvalidRequest, "'jsonrpc' must be \"2.0\""};
        return std::nullopt;
    }
    m.id = rawId;
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

QString idKey(const QJsonValue& id) {
    if (id.isString())
        return "s:" + id.toString();
    return "n:" + QString::number(id.toDouble(), 'g', 17);
}

} // namespace symdex::daemon
