// LSP's base-protocol frames ("Content-Length: N\r\n\r\n" then N bytes of UTF-8 JSON), the one
// framing parser of symdex: symdexd reads requests with it, RpcClient reads symdexd's answers, and
// the benchmark reads clangd's. docs/protocol.md describes the framing for clients.
#pragma once

#include <QByteArray>
#include <QJsonObject>

#include <cstddef>
#include <string>

namespace symdex::protocol {

/// The largest request body the daemon accepts (docs/protocol.md): a bigger Content-Length closes
/// the connection, since skipping the body would mean trusting the rest of a broken stream. It
/// protects the daemon from what clients send; it says nothing about answers.
inline constexpr size_t kMaxRequestBytes = size_t(16) << 20;
/// The largest answer a client of symdexd accepts. Answers are legitimately large (the outline of
/// a file of 100,000 functions is 23 MB of JSON); the bound only keeps a corrupt Content-Length
/// from making the client allocate without end.
inline constexpr size_t kMaxAnswerBytes = size_t(1) << 30;
/// The largest header block; LSP headers are two short lines.
inline constexpr size_t kMaxHeaderBytes = 8 << 10;

/// Splits a byte stream into message bodies. Not thread-safe: one per connection.
class FrameReader {
public:
    /// `bodyName` names a body in the error about one over the limit ("message", "answer").
    explicit FrameReader(size_t maxBodyBytes = kMaxRequestBytes, const char* bodyName = "message")
        : maxBody_(maxBodyBytes), bodyName_(bodyName) {}

    enum class Status {
        NeedMore, ///< no complete message buffered
        Message,  ///< *body holds the next message
        Error,    ///< the framing is lost (*error says why); the stream cannot be resynchronised
    };

    void append(const QByteArray& bytes) { buffer_.append(bytes); }
    Status next(QByteArray* body, std::string* error);
    /// Bytes buffered and not yet returned as messages.
    size_t buffered() const { return size_t(buffer_.size()); }

private:
    /// Parses the header block ending at `headerEnd`; sets bodyLength_ or *error.
    bool parseHeader(qsizetype headerEnd, std::string* error);
    /// Checks the header lines received so far, before the blank line arrived.
    bool checkPartialHeader(std::string* error) const;

    size_t maxBody_;
    const char* bodyName_;
    QByteArray buffer_;
    qsizetype headerLength_ = -1; ///< header bytes incl. the blank line, once parsed
    size_t bodyLength_ = 0;
};

/// `json` with its Content-Length header.
QByteArray frame(const QByteArray& json);
QByteArray frame(const QJsonObject& message);

} // namespace symdex::protocol
