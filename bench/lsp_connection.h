// A minimal LSP client over a child's stdin/stdout, for driving clangd: JSON-RPC messages framed
// with a Content-Length header, read with a deadline so a silent server cannot hang the bench.
#pragma once

#include "bench/child_process.h"

#include <QJsonObject>

#include <optional>
#include <string>

namespace symdex::bench {

/// `message` with its Content-Length header, ready to write.
std::string frameLspMessage(const QJsonObject& message);

/// Removes the first complete message from the front of `buffer` and returns it; nullopt while
/// the buffer holds no complete message yet. Throws std::runtime_error on a malformed header.
std::optional<QJsonObject> takeLspMessage(std::string& buffer);

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

private:
    bool write(const QJsonObject& message);

    ChildProcess& child_;
    std::string buffer_;
};

} // namespace symdex::bench
