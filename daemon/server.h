// The socket side of the daemon, on the Qt thread: a listening socket accepting connections, the
// query workers that answer them, and what the daemon tells every client (index runs). The Qt
// thread only reads, parses, dispatches and writes; handlers run on the workers.
#pragma once

#include "daemon/connection.h"
#include "daemon/handlers/handler.h"
#include "daemon/listen_socket.h"
#include "daemon/mailbox.h"
#include "daemon/worker_pool.h"

#include <QObject>
#include <QSocketNotifier>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace symdex::daemon {

struct ServerOptions {
    /// Threads answering queries; 0: max(2, hardware threads).
    unsigned queryThreads = 0;
    ConnectionLimits limits;
    /// Connections the kernel queues before accept (64 clients connect at once in the tests).
    int listenBacklog = 256;
};

class Server : public QObject {
    Q_OBJECT
public:
    Server(ServerContext& context, Mailbox& mailbox, ServerOptions options);
    ~Server() override;

    /// Listens on `path`, mode 0600: replaces a stale socket, refuses a live one or a file that
    /// is not a socket (ListenSocket). False and *error on failure.
    bool listen(const std::string& path, std::string* error);
    /// Stops accepting (removing the socket file) and closes every connection.
    void close();

    /// Serves an editor's stdin and stdout, which `asking` received (kAdoptStdio), as a
    /// connection of their own, closed with `asking`. Returns its id.
    uint64_t adoptStdio(Connection& asking, int readFd, int writeFd);

    /// Hands a request (request != nullptr) or notification to a worker. The worker writes the
    /// reply to the client itself when nothing waits before it in the connection's stream, else
    /// it comes back through the mailbox; either way the connection hears of it there
    /// (Connection::complete()), unless it is gone by then.
    void run(Connection& connection, const MethodSpec& spec, protocol::Message&& message,
             PositionEncoding encoding, std::shared_ptr<PendingRequest> request);

    /// Answers a request of a MethodSpec::inlineFirst method here, on the connection's thread:
    /// its framed reply, or nullopt when the handler would have to wait (then run() it).
    std::optional<QByteArray> answerInline(const MethodSpec& spec, const protocol::Message& message,
                                           PositionEncoding encoding);

    /// Sends a notification to every initialized connection.
    void broadcast(const QJsonObject& notification);
    void indexRunStarted(uint64_t run);
    void indexProgress(uint32_t done, uint32_t total);
    void indexRunFinished(const QString& message);
    bool indexing() const { return indexing_; }
    uint64_t currentRun() const { return currentRun_; }

    unsigned queryThreads() const { return workers_->threads(); }
    /// Figures for symdex/status. Thread-safe.
    QJsonObject figures() const;
    /// Whether a query is queued or being answered. Any thread.
    bool answering() const { return workers_->pending() > 0; }

private:
    void accept();
    /// Serves `stream` as a new connection; returns its id.
    uint64_t serve(ClientStream* stream);
    /// Out of descriptors (or kernel memory) for a new connection: it stays queued and the socket
    /// stays readable, so trying again at once would spin. Stops watching the socket for a
    /// moment instead; the queued connections are accepted once descriptors are free.
    void pauseAccepting(int error);

    ServerContext& context_;
    Mailbox& mailbox_;
    const ServerOptions options_;
    std::optional<ListenSocket> listener_;
    std::unique_ptr<QSocketNotifier> acceptNotifier_;       // on listener_, destroyed before it
    std::unordered_map<uint64_t, Connection*> connections_; // owned (children)
    uint64_t nextConnectionId_ = 1;
    bool acceptPaused_ = false; ///< since the last successful accept (logged once)
    bool indexing_ = false;
    uint64_t currentRun_ = 0;
    std::atomic<size_t> connectionCount_{0}; // read by workers (status)
    std::atomic<uint64_t> requestsAnswered_{0};
    std::atomic<uint64_t> answeredInline_{0}; ///< of requestsAnswered_, by answerInline()
    std::unique_ptr<WorkerPool> workers_; // joined first in ~Server, while the rest still exists
};

} // namespace symdex::daemon
