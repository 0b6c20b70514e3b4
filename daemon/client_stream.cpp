#include "daemon/client_stream.h"

#include <QMetaObject>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utility>

namespace symdex::daemon {

namespace {

constexpr qint64 kReadChunk = 64 << 10;
/// Descriptors a client may have passed and not yet handed to a request: more are closed.
constexpr size_t kMaxReceived = 8;

bool isSocket(int fd) {
    struct stat st;
    return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

void makeNonBlocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && !(flags & O_NONBLOCK))
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/// Disables a notifier and lets Qt delete it: it may be the one whose signal is running. A child
/// of the stream meanwhile, so that it goes with the stream if that goes first (at exit, before
/// the event loop would have deleted it).
void retire(std::unique_ptr<QSocketNotifier>& notifier, QObject* owner) {
    if (!notifier)
        return;
    notifier->setEnabled(false);
    notifier->setParent(owner);
    notifier.release()->deleteLater();
}

} // namespace

void WriteGate::writeLocked(const QByteArray& bytes) {
    const char* data = bytes.constData();
    const size_t size = size_t(bytes.size());
    size_t at = 0;
    while (at < size) {
        const ssize_t n = isSocket_ ? ::send(fd_, data + at, size - at, MSG_NOSIGNAL)
                                    : ::write(fd_, data + at, size - at);
        if (n > 0) {
            at += size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break; // the kernel is full, or the client gone: the Qt thread sends the rest, or finds out
    }
    if (at < size) {
        carry_.append(data + at, qsizetype(size - at));
        idle_ = false;
    }
}

ClientStream::ClientStream(int readFd, int writeFd, qint64 readBufferLimit, QObject* parent)
    : QObject(parent), readFd_(readFd), writeFd_(writeFd), readBufferLimit_(readBufferLimit) {
    makeNonBlocking(readFd_);
    readIsSocket_ = isSocket(readFd_);
    if (writeFd_ != readFd_)
        makeNonBlocking(writeFd_);
    writeIsSocket_ = writeFd_ == readFd_ ? readIsSocket_ : isSocket(writeFd_);
    readNotifier_ = std::make_unique<QSocketNotifier>(readFd_, QSocketNotifier::Read);
    writeNotifier_ = std::make_unique<QSocketNotifier>(writeFd_, QSocketNotifier::Write);
    writeNotifier_->setEnabled(false);
    connect(readNotifier_.get(), &QSocketNotifier::activated, this, &ClientStream::readSome);
    connect(writeNotifier_.get(), &QSocketNotifier::activated, this, &ClientStream::writeSome);
    std::lock_guard lock(gate_->mu_);
    gate_->fd_ = writeFd_;
    gate_->isSocket_ = writeIsSocket_;
    gate_->idle_ = true;
}

ClientStream::~ClientStream() {
    std::lock_guard lock(gate_->mu_);
    gate_->idle_ = false;
    gate_->fd_ = -1;
    readNotifier_.reset();
    writeNotifier_.reset();
    if (open_) {
        ::close(readFd_);
        if (writeFd_ != readFd_)
            ::close(writeFd_);
    }
    for (int fd : received_)
        ::close(fd);
}

QByteArray ClientStream::read(qint64 max) {
    const qint64 n = std::min(max, bytesAvailable());
    QByteArray bytes(in_.constData() + inAt_, n);
    inAt_ += n;
    if (inAt_ == in_.size()) {
        in_.clear();
        inAt_ = 0;
    }
    if (readNotifier_ && !closing_ && bytesAvailable() < readBufferLimit_)
        readNotifier_->setEnabled(true); // reading may have paused on a full buffer
    return bytes;
}

void ClientStream::readSome() {
    bool got = false;
    while (open_ && !closing_) {
        if (bytesAvailable() >= readBufferLimit_) {
            readNotifier_->setEnabled(false); // read() enables it again
            break;
        }
        if (inAt_ > 0) { // keep only what is unread
            in_.remove(0, inAt_);
            inAt_ = 0;
        }
        const qint64 room = std::min(kReadChunk, readBufferLimit_ - bytesAvailable());
        const qsizetype before = in_.size();
        in_.resize(before + room);
        ssize_t n;
        if (readIsSocket_) {
            iovec iov{in_.data() + before, size_t(room)};
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReceived)];
            msghdr message{};
            message.msg_iov = &iov;
            message.msg_iovlen = 1;
            message.msg_control = control;
            message.msg_controllen = sizeof control;
            n = ::recvmsg(readFd_, &message, MSG_CMSG_CLOEXEC);
            if (n >= 0 && message.msg_controllen > 0)
                keepDescriptors(control, message.msg_controllen);
        } else {
            n = ::read(readFd_, in_.data() + before, size_t(room));
        }
        in_.resize(before + std::max<ssize_t>(n, 0));
        if (n > 0) {
            got = true;
            if (n < room)
                break; // most likely all there was; the notifier says if more comes
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        // The client closed (or the descriptor failed): what arrived is still read first.
        if (got)
            emit readyRead();
        finish();
        return;
    }
    if (got && open_)
        emit readyRead();
}

void ClientStream::keepDescriptors(const char* control, size_t length) {
    msghdr message{};
    message.msg_control = const_cast<char*>(control);
    message.msg_controllen = length;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (received_.size() < kMaxReceived)
                received_.push_back(fd);
            else
                ::close(fd);
        }
    }
}

std::vector<int> ClientStream::takeReceivedDescriptors() {
    return std::exchange(received_, {});
}

void ClientStream::takeCarried() {
    if (gate_->carry_.isEmpty())
        return;
    QByteArray carried = std::exchange(gate_->carry_, {});
    if (!open_)
        return;
    carried.append(out_.constData() + outAt_, out_.size() - outAt_);
    out_ = std::move(carried);
    outAt_ = 0;
}

void ClientStream::updateIdle() {
    gate_->idle_ = open_ && !closing_ && !workerWritesHeld_ && bytesToWrite() == 0 &&
                   gate_->carry_.isEmpty() && writeNotifier_ && !writeNotifier_->isEnabled();
}

void ClientStream::holdWorkerWrites(bool held) {
    std::lock_guard lock(gate_->mu_);
    workerWritesHeld_ = held;
    updateIdle();
}

void ClientStream::sendCarried() {
    std::lock_guard lock(gate_->mu_);
    takeCarried();
    if (open_ && bytesToWrite() > 0 && !writeNotifier_->isEnabled())
        flush();
    updateIdle();
}

void ClientStream::write(const QByteArray& bytes) {
    if (!isOpen() || bytes.isEmpty())
        return;
    std::lock_guard lock(gate_->mu_);
    takeCarried();
    if (bytesToWrite() == 0) {
        out_ = bytes;
        outAt_ = 0;
    } else {
        if (outAt_ > out_.size() / 2) {
            out_.remove(0, outAt_);
            outAt_ = 0;
        }
        out_.append(bytes);
    }
    if (!writeNotifier_->isEnabled()) // else the kernel is full: wait for it
        flush();
    updateIdle();
}

bool ClientStream::flush() {
    while (outAt_ < out_.size()) {
        const char* data = out_.constData() + outAt_;
        const size_t size = size_t(out_.size() - outAt_);
        const ssize_t n = writeIsSocket_ ? ::send(writeFd_, data, size, MSG_NOSIGNAL)
                                         : ::write(writeFd_, data, size);
        if (n > 0) {
            outAt_ += n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            writeNotifier_->setEnabled(true);
            return true;
        }
        // The client is gone. Closed on the next turn of the loop: the writer may be in the
        // middle of handling its requests.
        closing_ = true;
        out_.clear();
        outAt_ = 0;
        writeNotifier_->setEnabled(false);
        readNotifier_->setEnabled(false);
        QMetaObject::invokeMethod(this, &ClientStream::finish, Qt::QueuedConnection);
        return false;
    }
    out_.clear();
    outAt_ = 0;
    writeNotifier_->setEnabled(false);
    if (closing_)
        finish();
    return true;
}

void ClientStream::writeSome() {
    bool took;
    {
        std::lock_guard lock(gate_->mu_);
        takeCarried();
        const qint64 waiting = bytesToWrite();
        took = flush() && open_ && bytesToWrite() < waiting;
        updateIdle();
    }
    if (took)
        emit bytesWritten();
}

void ClientStream::abort() {
    std::lock_guard lock(gate_->mu_);
    gate_->carry_.clear();
    out_.clear();
    outAt_ = 0;
    finish();
}

void ClientStream::closeAfterWrites() {
    if (!open_ || closing_)
        return;
    std::lock_guard lock(gate_->mu_);
    takeCarried();
    closing_ = true;
    updateIdle();
    readNotifier_->setEnabled(false);
    if (bytesToWrite() == 0)
        finish();
    else if (!writeNotifier_->isEnabled())
        flush();
}

void ClientStream::finish() {
    if (!open_)
        return;
    std::lock_guard lock(gate_->mu_);
    gate_->idle_ = false;
    gate_->fd_ = -1;
    gate_->carry_.clear();
    open_ = false;
    closing_ = true;
    retire(readNotifier_, this);
    retire(writeNotifier_, this);
    ::close(readFd_);
    if (writeFd_ != readFd_)
        ::close(writeFd_);
    emit closed();
}

} // namespace symdex::daemon
