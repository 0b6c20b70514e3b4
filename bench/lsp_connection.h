// A minimal LSP client over a child's stdin/stdout, for driving clangd: JSON-RPC messages in LSP
// frames (protocol/framing.h, the reader symdexd uses too), read with a deadline so a silent
// server cannot hang the bench.
#pragma once

#include "bench/child_process.h"
#include "protocol/framing.h"

#include <QJsonObject>

#include <optional>

namespace symdex::bench {

/// The next message `reader` holds, as a JSON object; nullopt while it holds no complete message
/// yet. Throws std::runtime_error when the framing is lost or a body is not a JSON object.
std::optional<QJsonObject> takeLspMessage(protocol::FrameReader& reader);

class LspConnection {
public:
    /// Talks to `child`, which must have been started with pipeStdin and pipeStdout.
    explicit LspConnection(ChildProcess& child) : child_(child) {}

    /// Sends a request (with `id`) or, with id < 0, a notification. False if the server is gone.
    bool send(const QString& method, const QJsonObject& params, int id = -1);
    /// Sends the reply to a request the server made.
    bool reply(const QJsonValue& id, const QJsonValue& result);
    /// The next message, or nullopt when `deadline` (monotonicSeconds) passes or the server
    /// closes its stdout.
    std::optional<QJsonObject> receive(double deadline);
    /// When the last bytes of the message receive() returned last had been read
    /// (monotonicSeconds): before the client parsed it.
    double arrivedSeconds() const { return arrived_; }

private:
    bool write(const QJsonObject& message);

    ChildProcess& child_;
    /// A server's answers are large (a whole tree's workspace/symbol), so the client bound.
    protocol::FrameReader reader_{protocol::kMaxAnswerBytes, "answer"};
    double arrived_ = 0;
};

} // namespace symdex::bench
