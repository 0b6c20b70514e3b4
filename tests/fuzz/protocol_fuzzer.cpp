// Fuzzes what a client sends the daemon: the byte stream through FrameReader, each message body
// through parseMessage, and the reply the server would build for it.
//
// Checked beyond "no crash, no sanitizer report": the messages a stream splits into do not
// depend on how its bytes arrive (all at once, a byte at a time, in 7-byte pieces), and an error
// reply to any parsed id frames and parses back as a response to that same id.
#include "protocol/jsonrpc.h"

#include <QJsonDocument>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace symdex::protocol;

namespace {

void require(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "protocol_fuzzer: %s\n", what);
        std::abort();
    }
}

struct Split {
    std::vector<QByteArray> bodies;
    bool failed = false;
};

/// The messages of `stream` fed to a FrameReader `piece` bytes at a time (0: all at once).
Split split(const QByteArray& stream, qsizetype piece) {
    FrameReader reader;
    Split out;
    QByteArray body;
    std::string error;
    const qsizetype step = piece > 0 ? piece : std::max<qsizetype>(stream.size(), 1);
    for (qsizetype at = 0; at < stream.size() && !out.failed; at += step) {
        reader.append(stream.mid(at, step));
        for (;;) {
            const FrameReader::Status status = reader.next(&body, &error);
            if (status == FrameReader::Status::Message) {
                out.bodies.push_back(body);
                continue;
            }
            if (status == FrameReader::Status::Error) {
                require(!error.empty(), "a framing error without a message");
                out.failed = true;
            }
            break;
        }
    }
    return out;
}

void checkReply(const RequestId& id) {
    const QByteArray reply = frameError(id, kInvalidRequest, "fuzz");
    Split back = split(reply, 0);
    require(!back.failed && back.bodies.size() == 1, "a reply does not frame as one message");
    RpcError error;
    RequestId backId;
    std::optional<Message> message = parseMessage(back.bodies[0], &error, &backId);
    require(message.has_value(), "a reply does not parse");
    require(message->isResponse(), "a reply does not parse as a response");
    require(idKey(message->id) == idKey(id), "a reply does not carry the request's id");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray stream(reinterpret_cast<const char*>(data), qsizetype(size));
    const Split whole = split(stream, 0);
    // Byte at a time costs a header scan per byte: keep it to inputs of a few frames.
    for (qsizetype piece : {qsizetype(1), qsizetype(7)}) {
        if (piece == 1 && size > 4096)
            continue;
        const Split pieces = split(stream, piece);
        require(pieces.bodies == whole.bodies, "messages depend on how the bytes arrive");
        require(pieces.failed == whole.failed, "a framing error depends on how the bytes arrive");
    }

    // The bodies, and the whole input as one body (most inputs never get past the framing).
    std::vector<QByteArray> bodies = whole.bodies;
    bodies.push_back(stream);
    for (const QByteArray& body : bodies) {
        RpcError error;
        RequestId id;
        std::optional<Message> message = parseMessage(body, &error, &id);
        if (!message) {
            require(error.code < 0 && !error.message.isEmpty(), "a parse error without a code");
            checkReply(id);
            continue;
        }
        require(message->isResponse() || !message->method.isEmpty(),
                "a message that is neither a request, a notification nor a response");
        if (message->hasId())
            checkReply(message->id);
    }
    return 0;
}
