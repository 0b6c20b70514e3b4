// A client's bytes, on the Qt thread: read from one descriptor and written to another, the same
// one for a client's socket, two for an editor's stdin and stdout that `symdex lsp` handed over
// (Server::adoptStdio). Non-blocking throughout. Reading stops while `readBufferLimit` bytes wait
// unread: the kernel then holds the rest and the client's writes wait. A write goes to the
// kernel at once when nothing waits before it (no event-loop turn between an answer and the
// client), else waits, whole, and goes out as the client takes bytes. Query workers write their
// answers through the stream's WriteGate, under the lock every write takes.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QSocketNotifier>

#include <memory>
#include <mutex>
#include <vector>

namespace symdex::daemon {

/// A stream's descriptor as a query worker may write to it: the worker writes its answer itself
/// when nothing waits before it in the stream, so that the answer reaches the client without a
/// hop back to the Qt thread (a thread wake-up: 0.12 ms on a VM with idle vCPUs). Every write to
/// the descriptor, and its closing, happen under mutex(); what the kernel does not take of a
/// worker's write waits here, and the stream sends it before anything else.
class WriteGate {
public:
    std::recursive_mutex& mutex() { return mu_; }
    /// With mutex() held: the stream is open and nothing waits to be written.
    bool idleLocked() const { return idle_; }
    /// With mutex() held and idleLocked(): writes `bytes` to the descriptor; what the kernel does
    /// not take waits for the Qt thread (ClientStream::sendCarried()).
    void writeLocked(const QByteArray& bytes);

private:
    friend class ClientStream;
    std::recursive_mutex mu_;
    int fd_ = -1;
    bool isSocket_ = false;
    bool idle_ = false;
    QByteArray carry_;
};

class ClientStream : public QObject {
    Q_OBJECT
public:
    /// Owns both descriptors (one when they are equal) and makes them non-blocking. A socket's
    /// reads also take descriptors the client passes (SCM_RIGHTS): takeReceivedDescriptors().
    ClientStream(int readFd, int writeFd, qint64 readBufferLimit, QObject* parent = nullptr);
    ~ClientStream() override;
    ClientStream(const ClientStream&) = delete;
    ClientStream& operator=(const ClientStream&) = delete;

    /// Neither closed nor closing: writes are taken.
    bool isOpen() const { return open_ && !closing_; }
    qint64 bytesAvailable() const { return in_.size() - inAt_; }
    qint64 bytesToWrite() const { return out_.size() - outAt_; }
    QByteArray read(qint64 max);
    void write(const QByteArray& bytes);
    /// Closes now, dropping what waits to be written; emits closed().
    void abort();
    /// Stops reading, and closes once what waits is written.
    void closeAfterWrites();
    /// The descriptors the client passed so far, oldest first; the caller owns them.
    std::vector<int> takeReceivedDescriptors();
    /// For workers that write answers themselves; outlives the stream (closed, it takes nothing).
    const std::shared_ptr<WriteGate>& gate() const { return gate_; }
    /// Sends what a worker's write left (the kernel was full), before anything else.
    void sendCarried();
    /// While held, workers hand their answers to the Qt thread instead of writing them: held
    /// while the Qt thread handles what it read, so that a request and its cancellation read
    /// together always end in the cancellation.
    void holdWorkerWrites(bool held);

signals:
    void readyRead();
    /// The client took bytes that had to wait.
    void bytesWritten();
    /// The client closed, an error ended the stream, or abort()/closeAfterWrites() did; once.
    void closed();

private:
    void readSome();
    void writeSome();
    /// Writes from out_ until done or the kernel is full; false on an error (the stream closed).
    bool flush();
    void finish();
    /// With the gate's mutex held: a worker's unsent bytes go first in out_.
    void takeCarried();
    /// With the gate's mutex held: whether a worker may write now.
    void updateIdle();
    void keepDescriptors(const char* control, size_t length);

    int readFd_ = -1, writeFd_ = -1;
    bool readIsSocket_ = false, writeIsSocket_ = false;
    const qint64 readBufferLimit_;
    std::unique_ptr<QSocketNotifier> readNotifier_, writeNotifier_;
    QByteArray in_, out_;
    qint64 inAt_ = 0, outAt_ = 0; ///< bytes of in_ read, of out_ written
    std::vector<int> received_;
    bool open_ = true;
    bool closing_ = false; ///< closeAfterWrites() asked
    bool workerWritesHeld_ = false;
    const std::shared_ptr<WriteGate> gate_ = std::make_shared<WriteGate>();
};

} // namespace symdex::daemon
