// One client connection, on the Qt thread: reads frames, answers the lifecycle methods itself,
// hands every other request to the query workers, and writes replies as they come back. Writes
// never block: Qt buffers them, and a client that lets more than the limit pile up unread is
// disconnected rather than allowed to hold memory. Reading stops while the client has too many
// requests in flight, so one flooding client cannot fill the workers' queue.
#pragma once

#include "daemon/positions.h"
#include "daemon/protocol.h"

#include <QJsonObject>
#include <QLocalSocket>
#include <QObject>

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace symdex::daemon {

class Server;
struct MethodSpec;

struct ConnectionLimits {
    /// Requests of one client being answered at once; more wait, unread, in the socket. The
    /// workers' queue is first come, first served: this bounds how many tasks of one flooding
    /// client a request of another can find ahead of it.
    size_t maxInFlight = 8;
    /// Reply bytes a client may leave unread before it is disconnected.
    size_t maxPendingWriteBytes = size_t(64) << 20;
};

class Connection : public QObject {
    Q_OBJECT
public:
    Connection(uint64_t id, QLocalSocket* socket, Server& server, ConnectionLimits limits);
    ~Connection() override;

    uint64_t id() const { return id_; }
    bool initialized() const { return initialized_; }

    /// Writes a message (already framed), or disconnects a client that reads too slowly.
    void sendFramed(const QByteArray& bytes);
    void send(const QJsonObject& message) { sendFramed(frame(message)); }
    /// A worker finished request `key` (empty for a notification): write `reply` unless the
    /// request was cancelled meanwhile.
    void complete(const QString& key, const QByteArray& reply);

    // Work-done progress of indexing runs ($/progress), for clients that support it.
    void indexRunStarted(uint64_t run);
    void indexProgress(uint32_t done, uint32_t total);
    void indexRunFinished(const QString& message);

signals:
    void closed(uint64_t id);

private:
    void pump();
    void handleBody(const QByteArray& body);
    void dispatch(Message&& message);
    bool handleLifecycle(Message& message);
    void handleResponse(const Message& message);
    void cancel(const Message& cancelRequest);
    void failFraming(const std::string& error);

    enum class Progress { None, Creating, Active };

    const uint64_t id_;
    QLocalSocket* socket_; // owned (child)
    Server& server_;
    const ConnectionLimits limits_;
    FrameReader reader_;
    bool closing_ = false;
    bool initialized_ = false;
    bool shutdown_ = false;
    bool clientSupportsProgress_ = false;
    PositionEncoding encoding_ = PositionEncoding::Utf16;
    /// Requests handed to workers and not answered, by idKey(); the flag tells the worker the
    /// client cancelled.
    std::unordered_map<QString, std::shared_ptr<std::atomic<bool>>> pending_;
    size_t inFlight_ = 0; ///< requests and notifications with the workers
    Progress progress_ = Progress::None;
    QString progressToken_;
    bool runActive_ = false;
};

} // namespace symdex::daemon
