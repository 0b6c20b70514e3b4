#include "bench/lsp_connection.h"

#include <QJsonDocument>

#include <cerrno>
#include <cmath>
#include <poll.h>
#include <stdexcept>
#include <unistd.h>

namespace symdex::bench {

std::string frameLspMessage(const QJsonObject& message) {
    const QByteArray body = QJsonDocument(message).toJson(QJsonDocument::Compact);
    return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body.toStdString();
}

std::optional<QJsonObject> takeLspMessage(std::string& buffer) {
    const size_t headerEnd = buffer.find("\r\n\r\n");
    if (headerEnd == std::string::npos)
        return std::nullopt;
    size_t length = std::string::npos;
    for (size_t line = 0; line < headerEnd;) {
        size_t end = buffer.find("\r\n", line);
        if (end == std::string::npos || end > headerEnd)
            end = headerEnd;
        const std::string header = buffer.substr(line, end - line);
        constexpr std::string_view kLength = "content-length:";
        std::string lower = header;
        for (char& c : lower)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        if (lower.rfind(kLength, 0) == 0)
            length = std::stoul(header.substr(kLength.size()));
        line = end + 2;
    }
    if (length == std::string::npos)
        throw std::runtime_error("an LSP message without Content-Length");
    const size_t bodyStart = headerEnd + 4;
    if (buffer.size() < bodyStart + length)
        return std::nullopt;
    QJsonParseError error;
    const QJsonDocument doc =
        QJsonDocument::fromJson(QByteArray(buffer.data() + bodyStart, qsizetype(length)), &error);
    buffer.erase(0, bodyStart + length);
    if (!doc.isObject())
        throw std::runtime_error("an LSP message that is not a JSON object: " +
                                 error.errorString().toStdString());
    return doc.object();
}

bool LspConnection::write(const QJsonObject& message) {
    return child_.writeAll(frameLspMessage(message));
}

bool LspConnection::send(const QString& method, const QJsonObject& params, int id) {
    QJsonObject message{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}};
    if (id >= 0)
        message["id"] = id;
    return write(message);
}

bool LspConnection::reply(const QJsonValue& id, const QJsonValue& result) {
    return write(QJsonObject{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::optional<QJsonObject> LspConnection::receive(double deadline) {
    for (;;) {
        if (std::optional<QJsonObject> message = takeLspMessage(buffer_))
            return message;
        const double left = deadline - monotonicSeconds();
        if (left <= 0)
            return std::nullopt;
        pollfd fd{child_.stdoutFd(), POLLIN, 0};
        const int ready = ::poll(&fd, 1, int(std::ceil(std::min(left, 1.0) * 1000)));
        if (ready < 0 && errno != EINTR)
            return std::nullopt;
        if (ready <= 0)
            continue;
        char chunk[65536];
        const ssize_t n = ::read(child_.stdoutFd(), chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return std::nullopt; // the server closed its stdout
        buffer_.append(chunk, size_t(n));
    }
}

} // namespace symdex::bench
