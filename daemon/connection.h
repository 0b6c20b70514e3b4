// One client connection, on the Qt thread: reads frames, answers the lifecycle methods itself,
// hands every other request to the query workers, and writes replies as they come back (a worker
// writes its own when nothing waits before it: WriteGate). Writes
// never block: Qt buffers them, and an answer of any size is written whole. Reading stops while
// the client has too many requests in flight, so one flooding client cannot fill the workers'
// queue, and while it leaves replies unread, so a client that stops reading makes the daemon hold
// at most the answers to the requests it already had in flight. Only a client that has taken
// nothing for a long time while much waits for it is disconnected.
#pragma once

#include "daemon/client_stream.h"
#include "daemon/positions.h"
#include "protocol/jsonrpc.h"

#include <QJsonObject>
#include <QObject>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace symdex::daemon {

class Server;
struct MethodSpec;

/// A request with a worker. `cancelled` is set when the client cancels it (or is gone), unless
/// its answer went out already: `answered`, set by the worker that wrote it to the client
/// itself. Both are decided under the stream's WriteGate mutex, so exactly one of the answer and
/// RequestCancelled reaches the client.
struct PendingRequest {
    std::atomic<bool> cancelled{false};
    bool answered = false; ///< under the WriteGate mutex
};

struct ConnectionLimits {
    /// Requests of one client being answered at once; more wait, unread, in the socket. The
    /// workers' queue is first come, first served: this bounds how many tasks of one flooding
    /// client a request of another can find ahead of it.
    size_t maxInFlight = 8;
    /// Unwritten bytes above which no further request is read until the client takes some.
    size_t pauseReadingAboveBytes = size_t(1) << 20;
    /// A client with more than this unwritten is disconnected when another message is due for it,
    /// if it has also taken nothing for `stallTimeout`. Answers are bounded by the pause above;
    /// this bounds what else piles up (notifications of index runs) for a client gone silent.
    size_t maxPendingWriteBytes = size_t(64) << 20;
    std::chrono::milliseconds stallTimeout = std::chrono::seconds(30);
};

class Connection : public QObject {
    Q_OBJECT
public:
    /// Serves the client of `stream` (made a child of this).
    Connection(uint64_t id, ClientStream* stream, Server& server, ConnectionLimits limits);
    ~Connection() override;

    uint64_t id() const { return id_; }
    /// The connection whose end closes this one (kAdoptStdio's two), or 0.
    uint64_t partner() const { return partner_; }
    void setPartner(uint64_t id) { partner_ = id; }
    /// Closes now (emits closed()).
    void close();
    bool initialized() const { return initialized_; }

    /// Writes a message (already framed), or disconnects a client that reads too slowly.
    void sendFramed(const QByteArray& bytes);
    void send(const QJsonObject& message) { sendFramed(protocol::frame(message)); }
    /// A worker finished request `key` (empty for a notification): write `reply` unless the
    /// request was cancelled meanwhile, or the worker wrote it itself (`written`).
    void complete(const QString& key, const QByteArray& reply, bool written);
    /// Where workers write answers themselves.
    const std::shared_ptr<WriteGate>& writeGate() const;

    // Work-done progress of indexing runs ($/progress), for clients that support it.
    void indexRunStarted(uint64_t run);
    void indexProgress(uint32_t done, uint32_t total);
    void indexRunFinished(const QString& message);

signals:
    void closed(uint64_t id);

private:
    void pump();
    /// The client took bytes: the stall clock restarts, and reading may resume.
    void written();
    bool writeBacklogged() const;
    void handleBody(const QByteArray& body);
    void dispatch(protocol::Message&& message);
    bool handleLifecycle(protocol::Message& message);
    void handleResponse(const protocol::Message& message);
    void cancel(const protocol::Message& cancelRequest);
    void adoptStdio(const protocol::Message& request);
    void failFraming(const std::string& error);

    enum class Progress { None, Creating, Active };

    const uint64_t id_;
    ClientStream* stream_; // owned (child)
    Server& server_;
    const ConnectionLimits limits_;
    protocol::FrameReader reader_;
    /// When the client last took bytes, or when bytes began to wait for it.
    std::chrono::steady_clock::time_point lastTaken_ = std::chrono::steady_clock::now();
    uint64_t partner_ = 0;
    bool closing_ = false;
    bool initialized_ = false;
    bool shutdown_ = false;
    bool clientSupportsProgress_ = false;
    PositionEncoding encoding_ = PositionEncoding::Utf16;
    /// Requests handed to workers and not completed, by idKey().
    std::unordered_map<QString, std::shared_ptr<PendingRequest>> pending_;
    size_t inFlight_ = 0; ///< requests and notifications with the workers
    /// Requests answered on this thread since pump() began: past kInlinePerTurn the rest go to
    /// the workers, so a client sending thousands keeps the thread from no one else.
    int answeredInline_ = 0;
    Progress progress_ = Progress::None;
    QString progressToken_;
    bool runActive_ = false;
};

} // namespace symdex::daemon
