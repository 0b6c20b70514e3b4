#include "daemon/connection.h"

#include "daemon/handlers/handler.h"
#include "daemon/server.h"

#include <cstdio>
#include <unistd.h>

namespace symdex::daemon {

namespace {

constexpr qint64 kReadChunk = 64 << 10;
/// Requests of one client answered on the connection's thread in one go (MethodSpec::inlineFirst;
/// each well under a millisecond); more, read in the same go, go to the workers.
constexpr int kInlinePerTurn = 16;

} // namespace

Connection::Connection(uint64_t id, ClientStream* stream, Server& server, ConnectionLimits limits)
    : id_(id), stream_(stream), server_(server), limits_(limits) {
    stream_->setParent(this);
    connect(stream_, &ClientStream::readyRead, this, &Connection::pump);
    connect(stream_, &ClientStream::bytesWritten, this, &Connection::written);
    connect(stream_, &ClientStream::closed, this, [this] { emit closed(id_); });
}

Connection::~Connection() {
    for (auto& [key, request] : pending_)
        request->cancelled.store(true); // nobody will read the answers: let the workers skip them
}

const std::shared_ptr<WriteGate>& Connection::writeGate() const {
    return stream_->gate();
}

void Connection::sendFramed(const QByteArray& bytes) {
    if (!stream_->isOpen())
        return;
    // Judged on what waits before this message, so that one answer, however large, always goes
    // out; the stream hands it to the kernel in pieces as the client takes it.
    const qint64 waiting = stream_->bytesToWrite();
    const auto now = std::chrono::steady_clock::now();
    if (waiting == 0) {
        lastTaken_ = now;
    } else if (size_t(waiting) > limits_.maxPendingWriteBytes &&
               now - lastTaken_ > limits_.stallTimeout) {
        std::fprintf(
            stderr,
            "symdexd: connection %llu left %lld bytes unread and took none for %lld s; "
            "disconnecting it\n",
            static_cast<unsigned long long>(id_), static_cast<long long>(waiting),
            static_cast<long long>(
                std::chrono::duration_cast<std::chrono::seconds>(now - lastTaken_).count()));
        closing_ = true;
        stream_->abort();
        return;
    }
    stream_->write(bytes);
}

void Connection::written() {
    lastTaken_ = std::chrono::steady_clock::now();
    if (!writeBacklogged())
        pump(); // reading may have paused for the client to catch up
}

bool Connection::writeBacklogged() const {
    return size_t(stream_->bytesToWrite()) > limits_.pauseReadingAboveBytes;
}

void Connection::failFraming(const std::string& error) {
    std::fprintf(stderr, "symdexd: connection %llu: %s; closing it\n",
                 static_cast<unsigned long long>(id_), error.c_str());
    send(protocol::makeError(QJsonValue::Null, protocol::kInvalidRequest,
                             QString::fromStdString(error) + "; closing the connection"));
    closing_ = true;
    stream_->closeAfterWrites(); // after the pending writes
}

void Connection::pump() {
    answeredInline_ = 0;
    // Workers hand their answers back while this reads: a cancellation read with its request
    // always wins. The client's path is unchanged: this ends before a worker can answer.
    struct HoldWorkerWrites {
        ClientStream* stream;
        explicit HoldWorkerWrites(ClientStream* s) : stream(s) { stream->holdWorkerWrites(true); }
        ~HoldWorkerWrites() { stream->holdWorkerWrites(false); }
    } hold(stream_);
    while (!closing_ && stream_->isOpen() && inFlight_ < limits_.maxInFlight &&
           !writeBacklogged()) {
        QByteArray body;
        std::string error;
        switch (reader_.next(&body, &error)) {
        case protocol::FrameReader::Status::Message:
            handleBody(body);
            continue;
        case protocol::FrameReader::Status::Error:
            failFraming(error);
            return;
        case protocol::FrameReader::Status::NeedMore:
            break;
        }
        if (stream_->bytesAvailable() <= 0)
            return;
        reader_.append(stream_->read(kReadChunk));
    }
}

void Connection::handleBody(const QByteArray& body) {
    protocol::RpcError error{};
    protocol::RequestId id;
    std::optional<protocol::Message> message = protocol::parseMessage(body, &error, &id);
    if (!message) {
        sendFramed(protocol::frameError(id, error.code, error.message));
        return;
    }
    if (message->isResponse()) {
        handleResponse(*message);
        return;
    }
    dispatch(std::move(*message));
}

bool Connection::handleLifecycle(protocol::Message& m) {
    const QString& method = m.method;
    if (method == "initialize") {
        if (!m.hasId())
            return true;
        if (initialized_) {
            sendFramed(protocol::frameError(m.id, protocol::kInvalidRequest,
                                            "initialize was already called"));
            return true;
        }
        if (!m.params.isUndefined() && !m.params.isObject()) {
            sendFramed(
                protocol::frameError(m.id, protocol::kInvalidParams, "'params' must be an object"));
            return true;
        }
        const QJsonObject caps = m.params.toObject().value("capabilities").toObject();
        clientSupportsProgress_ =
            caps.value("window").toObject().value("workDoneProgress").toBool(false);
        sendFramed(protocol::frameResult(m.id, initializeResult(m.params, &encoding_)));
        initialized_ = true;
        if (server_.indexing())
            indexRunStarted(server_.currentRun());
        return true;
    }
    if (method == "initialized")
        return true;
    if (method == "shutdown") {
        shutdown_ = true;
        if (m.hasId())
            sendFramed(protocol::frameResult(m.id, QJsonValue::Null));
        return true;
    }
    if (method == "exit") {
        closing_ = true;
        stream_->closeAfterWrites();
        return true;
    }
    if (method == "$/cancelRequest") {
        cancel(m);
        return true;
    }
    if (method == protocol::kAdoptStdio) {
        adoptStdio(m);
        return true;
    }
    return false;
}

void Connection::adoptStdio(const protocol::Message& m) {
    std::vector<int> fds = stream_->takeReceivedDescriptors();
    auto fail = [&](const QString& why) {
        for (int fd : fds)
            ::close(fd);
        if (m.hasId())
            sendFramed(protocol::frameError(m.id, protocol::kInvalidParams, why));
    };
    if (!m.hasId())
        return fail({});
    if (initialized_ || partner_)
        return fail(QString(protocol::kAdoptStdio) +
                    " on a connection that serves a session already");
    if (fds.size() != 2)
        return fail(QString(protocol::kAdoptStdio) +
                    " needs the client's stdin and stdout passed with it (SCM_RIGHTS); got " +
                    QString::number(fds.size()) + " descriptors");
    const uint64_t session = server_.adoptStdio(*this, fds[0], fds[1]);
    sendFramed(protocol::frameResult(m.id, QJsonObject{{"connection", qint64(session)}}));
}

void Connection::close() {
    closing_ = true;
    stream_->abort();
}

void Connection::dispatch(protocol::Message&& m) {
    if (handleLifecycle(m))
        return;
    const MethodSpec* spec = findMethod(m.method);
    if (!m.hasId()) {
        // Notifications get no answer, not even an error; unknown ones ($/setTrace, didOpen,
        // ...) are ignored as LSP asks.
        if (spec && (initialized_ || !spec->needsInitialize)) {
            ++inFlight_;
            server_.run(*this, *spec, std::move(m), encoding_, nullptr);
        }
        return;
    }
    if (shutdown_) {
        sendFramed(protocol::frameError(m.id, protocol::kInvalidRequest,
                                        "shutdown was requested: only 'exit' is accepted"));
        return;
    }
    if (!spec) {
        sendFramed(protocol::frameError(m.id, protocol::kMethodNotFound,
                                        "unknown method '" + m.method + "'"));
        return;
    }
    if (spec->needsInitialize && !initialized_) {
        sendFramed(protocol::frameError(m.id, protocol::kServerNotInitialized,
                                        "'" + m.method + "' before 'initialize'"));
        return;
    }
    const QString key = protocol::idKey(m.id);
    if (pending_.contains(key)) {
        sendFramed(protocol::frameError(m.id, protocol::kInvalidRequest,
                                        "a request with this id is still pending"));
        return;
    }
    if (spec->inlineFirst && answeredInline_ < kInlinePerTurn &&
        (!spec->inlineWhen || spec->inlineWhen(m.params))) {
        if (std::optional<QByteArray> reply = server_.answerInline(*spec, m, encoding_)) {
            ++answeredInline_;
            sendFramed(*reply);
            return;
        }
    }
    auto request = std::make_shared<PendingRequest>();
    pending_.emplace(key, request);
    ++inFlight_;
    server_.run(*this, *spec, std::move(m), encoding_, std::move(request));
}

void Connection::cancel(const protocol::Message& m) {
    const QJsonValue value = m.params.toObject().value("id");
    if (!value.isString() && !value.isDouble())
        return; // a notification: nothing to answer, malformed or not
    std::optional<QByteArrayView> text;
    if (std::optional<QByteArrayView> params = protocol::jsonMemberText(m.body, u"params"))
        text = protocol::jsonMemberText(*params, u"id");
    const protocol::RequestId id = protocol::requestId(value, text);
    auto it = pending_.find(protocol::idKey(id));
    if (it == pending_.end())
        return; // answered already, or never sent
    {
        std::lock_guard lock(stream_->gate()->mutex());
        if (it->second->answered)
            return; // its worker wrote the answer: the cancellation came too late
        it->second->cancelled.store(true);
    }
    pending_.erase(it);
    sendFramed(protocol::frameError(id, protocol::kRequestCancelled, "request cancelled"));
}

void Connection::complete(const QString& key, const QByteArray& reply, bool written) {
    --inFlight_;
    if (!key.isEmpty()) {
        auto it = pending_.find(key);
        if (it != pending_.end()) {
            pending_.erase(it);
            if (!written)
                sendFramed(reply);
        }
    }
    if (written)
        stream_->sendCarried(); // what the kernel did not take of the worker's write
    pump();                     // reading may have stopped at the in-flight limit
}

void Connection::handleResponse(const protocol::Message& m) {
    // The only requests this server sends are window/workDoneProgress/create.
    if (m.id.value.toString() != progressToken_ || progress_ != Progress::Creating)
        return;
    if (m.raw.contains("error")) {
        progress_ = Progress::None;
        return;
    }
    progress_ = Progress::Active;
    send(protocol::makeNotification("$/progress",
                                    QJsonObject{{"token", progressToken_},
                                                {"value", QJsonObject{{"kind", "begin"},
                                                                      {"title", "symdex: indexing"},
                                                                      {"percentage", 0}}}}));
    if (!runActive_)
        indexRunFinished("done");
}

void Connection::indexRunStarted(uint64_t run) {
    runActive_ = true;
    if (!initialized_ || !clientSupportsProgress_)
        return;
    // A create the client never answered is forgotten: its late answer names an old token.
    progressToken_ = QString("symdex-index-%1").arg(run);
    progress_ = Progress::Creating;
    // The token doubles as the request id: the response names the token it created.
    send(protocol::makeRequest(progressToken_, "window/workDoneProgress/create",
                               QJsonObject{{"token", progressToken_}}));
}

void Connection::indexProgress(uint32_t done, uint32_t total) {
    if (progress_ != Progress::Active)
        return;
    QJsonObject value{{"kind", "report"}, {"message", QString("%1/%2 TUs").arg(done).arg(total)}};
    if (total > 0)
        value["percentage"] = int(uint64_t(done) * 100 / total);
    send(protocol::makeNotification("$/progress",
                                    QJsonObject{{"token", progressToken_}, {"value", value}}));
}

void Connection::indexRunFinished(const QString& message) {
    runActive_ = false;
    if (progress_ != Progress::Active)
        return; // a pending create ends the progress when its response comes
    send(protocol::makeNotification(
        "$/progress", QJsonObject{{"token", progressToken_},
                                  {"value", QJsonObject{{"kind", "end"}, {"message", message}}}}));
    progress_ = Progress::None;
}

} // namespace symdex::daemon
