#include "bench/lsp_connection.h"

#include <QJsonDocument>

#include <cerrno>
#include <cmath>
#include <poll.h>
#include <stdexcept>
#include <unistd.h>

namespace symdex::bench {

std::optional<QJsonObject> takeLspMessage(protocol::FrameReader& reader) {
    QByteArray body;
    std::string error;
    switch (reader.next(&body, &error)) {
    case protocol::FrameReader::Status::NeedMore:
        return std::nullopt;
    case protocol::FrameReader::Status::Error:
        throw std::runtime_error("a broken LSP frame: " + error);
    case protocol::FrameReader::Status::Message:
        break;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (!doc.isObject())
        throw std::runtime_error("an LSP message that is not a JSON object: " +
                                 parseError.errorString().toStdString());
    return doc.object();
}

bool LspConnection::write(const QJsonObject& message) {
    return child_.writeAll(protocol::frame(message).toStdString());
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
        if (std::optional<QJsonObject> message = takeLspMessage(reader_))
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
        arrived_ = monotonicSeconds();
        reader_.append(QByteArray(chunk, qsizetype(n)));
    }
}

} // namespace symdex::bench
