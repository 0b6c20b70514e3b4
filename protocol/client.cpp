#include "protocol/client.h"

#include <QJsonDocument>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

namespace symdex::protocol {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds remaining(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return std::max(left, std::chrono::milliseconds(0));
}

} // namespace

std::unique_ptr<RpcClient> RpcClient::connect(const std::string& socketPath, std::string* error) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socketPath.size() >= sizeof addr.sun_path) {
        *error = "socket path '" + socketPath + "' is too long";
        return nullptr;
    }
    std::memcpy(addr.sun_path, socketPath.c_str(), socketPath.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *error = std::string("socket: ") + std::strerror(errno);
        return nullptr;
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        *error = "cannot connect to '" + socketPath + "': " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    return std::unique_ptr<RpcClient>(new RpcClient(fd));
}

RpcClient::~RpcClient() {
    ::close(fd_);
}

void RpcClient::sendRaw(const QByteArray& bytes) {
    const char* p = bytes.constData();
    size_t left = size_t(bytes.size());
    while (left > 0) {
        const ssize_t n = ::send(fd_, p, left, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw RpcFailure(0, std::string("write to symdexd failed: ") + std::strerror(errno));
        p += n;
        left -= size_t(n);
    }
}

int64_t RpcClient::send(const QString& method, const QJsonValue& params) {
    const int64_t id = nextId_++;
    sendRaw(frame(makeRequest(qint64(id), method, params)));
    return id;
}

int64_t RpcClient::sendPassing(const QString& method, const QJsonValue& params,
                               const std::vector<int>& fds) {
    const int64_t id = nextId_++;
    const QByteArray bytes = frame(makeRequest(qint64(id), method, params));
    // The descriptors go with the first byte alone; the rest follows as any request.
    iovec iov{const_cast<char*>(bytes.constData()), 1};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    ssize_t n;
    do
        n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != 1)
        throw RpcFailure(0, std::string("write to symdexd failed: ") + std::strerror(errno));
    sendRaw(bytes.mid(1));
    return id;
}

void RpcClient::notify(const QString& method, const QJsonValue& params) {
    sendRaw(frame(makeNotification(method, params)));
}

bool RpcClient::readSome(std::chrono::milliseconds timeout) {
    pollfd pfd{fd_, POLLIN, 0};
    int ready;
    do
        ready = ::poll(&pfd, 1, int(timeout.count()));
    while (ready < 0 && errno == EINTR);
    if (ready <= 0)
        return false;
    char buf[65536];
    ssize_t n;
    do
        n = ::recv(fd_, buf, sizeof buf, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        throw RpcFailure(0, "symdexd closed the connection");
    reader_.append(QByteArray(buf, qsizetype(n)));
    return true;
}

std::optional<QJsonObject> RpcClient::receive(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    for (;;) {
        QByteArray body;
        std::string error;
        switch (reader_.next(&body, &error)) {
        case FrameReader::Status::Message:
            return QJsonDocument::fromJson(body).object();
        case FrameReader::Status::Error:
            throw RpcFailure(0, "bad frame from symdexd: " + error);
        case FrameReader::Status::NeedMore:
            break;
        }
        if (!readSome(remaining(deadline)))
            return std::nullopt;
        // A message that has begun arriving is never cut off while it keeps coming: the timeout
        // is for the daemon's silence, not for the length of its answer.
        if (reader_.buffered() > 0)
            deadline = std::max(deadline, Clock::now() + timeout);
    }
}

std::optional<QJsonObject> RpcClient::receiveResponse(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        std::optional<QJsonObject> message = receive(remaining(deadline));
        if (!message || !message->contains("method"))
            return message;
        notifications_.push_back(std::move(*message));
    }
}

QJsonObject RpcClient::waitForResponse(int64_t id, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        std::optional<QJsonObject> message = receiveResponse(remaining(deadline));
        if (!message)
            throw RpcFailure(0, "no answer from symdexd within " + std::to_string(timeout.count()) +
                                    " ms");
        if (message->value("id").toInteger(-1) == id)
            return *message;
        notifications_.push_back(std::move(*message)); // another request's answer
    }
}

QJsonValue RpcClient::call(const QString& method, const QJsonValue& params,
                           std::chrono::milliseconds timeout) {
    const QJsonObject response = waitForResponse(send(method, params), timeout);
    if (response.contains("error")) {
        const QJsonObject error = response.value("error").toObject();
        throw RpcFailure(error.value("code").toInt(),
                         error.value("message").toString().toStdString());
    }
    return response.value("result");
}

QJsonObject RpcClient::initialize(const QJsonObject& capabilities) {
    const QJsonObject result = call("initialize", QJsonObject{{"processId", qint64(::getpid())},
                                                              {"rootUri", QJsonValue::Null},
                                                              {"capabilities", capabilities}})
                                   .toObject();
    notify("initialized");
    return result;
}

std::optional<QJsonObject> RpcClient::waitForNotification(const QString& method,
                                                          std::chrono::milliseconds timeout) {
    for (auto it = notifications_.begin(); it != notifications_.end(); ++it)
        if (it->value("method").toString() == method) {
            QJsonObject found = *it;
            notifications_.erase(it);
            return found;
        }
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        std::optional<QJsonObject> message = receive(remaining(deadline));
        if (!message)
            return std::nullopt;
        if (message->value("method").toString() == method)
            return message;
        notifications_.push_back(std::move(*message));
    }
    return std::nullopt;
}

} // namespace symdex::protocol
