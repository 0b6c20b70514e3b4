// A blocking JSON-RPC client of symdexd over its Unix socket, for the CLI, the tests and the
// load benchmark. Plain POSIX sockets: it needs no Qt event loop and may run on any thread
// (one client per thread).
#pragma once

#include "protocol/jsonrpc.h"

#include <QJsonObject>
#include <QJsonValue>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace symdex::protocol {

/// A JSON-RPC error answer, or a lost connection (code 0).
class RpcFailure : public std::runtime_error {
public:
    RpcFailure(int code, const std::string& message) : std::runtime_error(message), code(code) {}
    int code;
};

class RpcClient {
public:
    /// Connects to `socketPath`; nullptr and *error when nobody listens there.
    static std::unique_ptr<RpcClient> connect(const std::string& socketPath, std::string* error);
    ~RpcClient();
    RpcClient(const RpcClient&) = delete;
    RpcClient& operator=(const RpcClient&) = delete;

    /// Sends a request and waits for its answer; throws RpcFailure on an error answer, a closed
    /// connection or a timeout. Notifications arriving meanwhile are kept in notifications().
    /// Every timeout here bounds silence: an answer still arriving is read to its end.
    QJsonValue call(const QString& method, const QJsonValue& params = QJsonObject{},
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));
    /// The LSP handshake: initialize (with `capabilities`) then initialized.
    QJsonObject initialize(const QJsonObject& capabilities = {});

    /// Sends a request without waiting; returns its id.
    int64_t send(const QString& method, const QJsonValue& params);
    void notify(const QString& method, const QJsonValue& params = QJsonObject{});
    /// Sends a request with descriptors passed beside its first byte (SCM_RIGHTS); returns its
    /// id. The receiver has them once it has read that byte.
    int64_t sendPassing(const QString& method, const QJsonValue& params,
                        const std::vector<int>& fds);
    /// Writes raw bytes (tests of bad framing).
    void sendRaw(const QByteArray& bytes);

    /// The next message from the daemon (response, notification or request), or nullopt on
    /// timeout. Throws RpcFailure when the connection closes.
    std::optional<QJsonObject> receive(std::chrono::milliseconds timeout);
    /// The next response, any id, or nullopt on timeout; what the daemon sends of its own accord
    /// meanwhile (notifications, its requests) is kept in notifications().
    std::optional<QJsonObject> receiveResponse(std::chrono::milliseconds timeout);
    /// Waits for the response to `id`, keeping other messages in notifications().
    QJsonObject waitForResponse(int64_t id, std::chrono::milliseconds timeout);
    /// Waits for a notification with `method` (already received ones first).
    std::optional<QJsonObject> waitForNotification(const QString& method,
                                                   std::chrono::milliseconds timeout);

    /// Messages received while waiting for something else, oldest first.
    std::deque<QJsonObject>& notifications() { return notifications_; }
    int fd() const { return fd_; }

private:
    explicit RpcClient(int fd) : fd_(fd) {}
    bool readSome(std::chrono::milliseconds timeout);

    int fd_;
    int64_t nextId_ = 1;
    /// Answers are the daemon's own, so they get the generous client bound, not the request one.
    FrameReader reader_{kMaxAnswerBytes, "answer"};
    std::deque<QJsonObject> notifications_;
};

} // namespace symdex::protocol
