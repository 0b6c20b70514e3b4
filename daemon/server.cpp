#include "daemon/server.h"

#include "store/lmdb.h"

#include <QJsonDocument>
#include <QTimer>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <variant>

namespace symdex::daemon {

namespace {

/// Bytes read from a client and not yet parsed, at most: beyond, its writes wait in the kernel.
constexpr qint64 kReadBufferBytes = 1 << 20;

unsigned defaultQueryThreads() {
    return std::max(2u, std::thread::hardware_concurrency());
}

/// A handler's result: a JSON value, or JSON text a text handler wrote.
using Outcome = std::variant<QJsonValue, QByteArray, protocol::RpcError>;

/// Runs a handler: its result, or every failure as a JSON-RPC error. Throws only NeedsWorker
/// (when ctx.mayWait is false).
Outcome answer(RequestContext& ctx, const MethodSpec& spec, const protocol::Message& m) {
    try {
        ctx.checkCancelled();
        if (spec.text)
            return spec.text(ctx, m.params);
        return spec.fn(ctx, m.params);
    } catch (const protocol::RpcError& e) {
        return e;
    } catch (const StoreError& e) {
        return protocol::RpcError{protocol::kRequestFailed, QString("store error: ") + e.what()};
    } catch (const std::exception& e) {
        return protocol::RpcError{protocol::kInternalError, QString("internal error: ") + e.what()};
    }
}

/// The flag of what cannot be cancelled: notifications, and requests answered inline.
const std::atomic<bool> kNeverCancelled{false};

/// The reply to request `id`.
QByteArray frame(const protocol::RequestId& id, const Outcome& outcome) {
    if (const protocol::RpcError* failure = std::get_if<protocol::RpcError>(&outcome))
        return protocol::frameError(id, failure->code, failure->message);
    if (const QByteArray* text = std::get_if<QByteArray>(&outcome))
        return protocol::frameResultText(id, *text);
    return protocol::frameResult(id, std::get<QJsonValue>(outcome));
}

} // namespace

Server::Server(ServerContext& context, Mailbox& mailbox, ServerOptions options)
    : context_(context), mailbox_(mailbox), options_(options),
      workers_(std::make_unique<WorkerPool>(
          options.queryThreads ? options.queryThreads : defaultQueryThreads(), "query")) {}

Server::~Server() {
    // Workers first: a task may still read figures() (symdex/status) or post to the mailbox.
    workers_->shutdown();
    close();
}

bool Server::listen(const std::string& path, std::string* error) {
    // The socket is made here, not by QLocalServer: its listen() renames a fresh socket over
    // whatever the path holds, and its close() removes the path even when it is no longer ours.
    listener_ = ListenSocket::open(path, options_.listenBacklog, error);
    if (!listener_)
        return false;
    acceptNotifier_ = std::make_unique<QSocketNotifier>(listener_->fd(), QSocketNotifier::Read);
    connect(acceptNotifier_.get(), &QSocketNotifier::activated, this, &Server::accept);
    return true;
}

void Server::close() {
    acceptNotifier_.reset();
    listener_.reset();
    for (auto& [id, connection] : connections_) {
        connection->disconnect(this);
        delete connection;
    }
    connections_.clear();
    connectionCount_ = 0;
}

void Server::accept() {
    while (listener_) {
        const int fd = ::accept4(listener_->fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                return pauseAccepting(errno);
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                std::fprintf(stderr, "symdexd: accept: %s\n", std::strerror(errno));
            return;
        }
        if (acceptPaused_) {
            acceptPaused_ = false;
            std::fprintf(stderr, "symdexd: accepting connections again\n");
        }
        serve(new ClientStream(fd, fd, kReadBufferBytes));
    }
}

uint64_t Server::serve(ClientStream* stream) {
    const uint64_t id = nextConnectionId_++;
    auto* connection = new Connection(id, stream, *this, options_.limits);
    connection->setParent(this);
    connections_.emplace(id, connection);
    ++connectionCount_;
    connect(connection, &Connection::closed, this, [this](uint64_t closedId) {
        auto it = connections_.find(closedId);
        if (it == connections_.end())
            return;
        const uint64_t partner = it->second->partner();
        it->second->deleteLater();
        connections_.erase(it);
        --connectionCount_;
        if (auto other = connections_.find(partner); other != connections_.end())
            other->second->close();
    });
    return id;
}

uint64_t Server::adoptStdio(Connection& asking, int readFd, int writeFd) {
    const uint64_t id = serve(new ClientStream(readFd, writeFd, kReadBufferBytes));
    connections_.at(id)->setPartner(asking.id());
    asking.setPartner(id);
    return id;
}

void Server::pauseAccepting(int error) {
    constexpr int kRetryMs = 100;
    if (!acceptPaused_)
        std::fprintf(stderr,
                     "symdexd: accept: %s; new connections wait (trying again every %d ms)\n",
                     std::strerror(error), kRetryMs);
    acceptPaused_ = true;
    acceptNotifier_->setEnabled(false);
    QTimer::singleShot(kRetryMs, this, [this] {
        if (!acceptNotifier_)
            return; // closed meanwhile
        acceptNotifier_->setEnabled(true);
        accept();
    });
}

void Server::run(Connection& connection, const MethodSpec& spec, protocol::Message&& message,
                 PositionEncoding encoding, std::shared_ptr<PendingRequest> request) {
    const uint64_t connectionId = connection.id();
    const QString key = request ? protocol::idKey(message.id) : QString();
    std::shared_ptr<WriteGate> gate = request ? connection.writeGate() : nullptr;
    workers_->post([this, &spec, message = std::move(message), encoding, connectionId, key,
                    request = std::move(request), gate = std::move(gate)]() mutable {
        RequestContext ctx{context_, encoding, request ? request->cancelled : kNeverCancelled};
        Outcome outcome = answer(ctx, spec, message);
        QByteArray bytes;
        bool written = false;
        if (request) {
            bytes = frame(message.id, outcome); // serialised here, not on the Qt thread
            // Written here when nothing waits before it: the Qt thread hears of it afterwards,
            // off the client's path (a thread wake-up less before the client has its answer).
            std::lock_guard lock(gate->mutex());
            if (!request->cancelled.load() && gate->idleLocked()) {
                gate->writeLocked(bytes);
                request->answered = true;
                written = true;
                bytes.clear();
            }
        } else if (const auto* failure = std::get_if<protocol::RpcError>(&outcome)) {
            std::fprintf(stderr, "symdexd: notification %s: %s\n", qPrintable(message.method),
                         qPrintable(failure->message));
        }
        ++requestsAnswered_;
        mailbox_.post([this, connectionId, key, bytes = std::move(bytes), written] {
            auto it = connections_.find(connectionId);
            if (it != connections_.end())
                it->second->complete(key, bytes, written);
        });
    });
}

std::optional<QByteArray> Server::answerInline(const MethodSpec& spec,
                                               const protocol::Message& message,
                                               PositionEncoding encoding) {
    RequestContext ctx{context_, encoding, kNeverCancelled};
    ctx.mayWait = false;
    try {
        const Outcome outcome = answer(ctx, spec, message);
        ++requestsAnswered_;
        ++answeredInline_;
        return frame(message.id, outcome);
    } catch (const NeedsWorker&) {
        return std::nullopt;
    }
}

void Server::broadcast(const QJsonObject& notification) {
    const QByteArray bytes = protocol::frame(notification);
    for (auto& [id, connection] : connections_)
        if (connection->initialized())
            connection->sendFramed(bytes);
}

void Server::indexRunStarted(uint64_t run) {
    indexing_ = true;
    currentRun_ = run;
    for (auto& [id, connection] : connections_)
        connection->indexRunStarted(run);
}

void Server::indexProgress(uint32_t done, uint32_t total) {
    for (auto& [id, connection] : connections_)
        connection->indexProgress(done, total);
}

void Server::indexRunFinished(const QString& message) {
    indexing_ = false;
    for (auto& [id, connection] : connections_)
        connection->indexRunFinished(message);
}

QJsonObject Server::figures() const {
    return QJsonObject{{"connections", qint64(connectionCount_.load())},
                       {"queriesWaiting", qint64(workers_->queued())},
                       {"queryThreads", qint64(workers_->threads())},
                       {"requestsAnswered", qint64(requestsAnswered_.load())},
                       {"requestsAnsweredInline", qint64(answeredInline_.load())}};
}

} // namespace symdex::daemon
