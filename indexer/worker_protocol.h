// The wire between the indexer and its parse workers (symdex-worker, one process per arena slot):
// length-prefixed messages on a socketpair, and the encodings of what crosses it. A worker parses
// one TU at a time: the parent sends Parse, the worker asks Claim for every file the parse reaches
// and waits for each ClaimAnswer, and ends with Result. A worker that dies, or stops answering,
// costs only the TU it was parsing (parse_worker.h).
//
// Frame: u32 little-endian payload length, u8 MessageType, payload (store/encoding.h values).
// Both ends are the same build of symdex, so there is no version negotiation.
#pragma once

#include "indexer/compile_db.h"
#include "indexer/tu_parser.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace symdex {

enum class WorkerMessage : uint8_t {
    Parse = 1,       ///< parent -> worker: ParseRequest
    Claim = 2,       ///< worker -> parent: string path
    ClaimAnswer = 3, ///< parent -> worker: byte granted, then the FileStamp if granted
    Result = 4,      ///< worker -> parent: IndexedTu
};

/// What a worker needs to parse one TU.
struct ParseRequest {
    CompileCommand command;
    uint64_t rank = 0;
    bool indexMacros = true;
    bool skipParsedBodies = true;
};

/// Frames larger than this are refused (a TU's result is a few MB at most).
inline constexpr uint32_t kMaxWorkerFrame = 1u << 30;

/// Writes one frame; false on a write error (the other end is gone). Retries on EINTR.
bool writeFrame(int fd, WorkerMessage type, std::string_view payload);

/// Reads one frame, blocking; nullopt at end of file or on an error or a malformed frame.
std::optional<std::pair<WorkerMessage, std::string>> readFrame(int fd);

std::string encodeParseRequest(const ParseRequest& request);
std::optional<ParseRequest> decodeParseRequest(std::string_view bytes);

std::string encodeClaimAnswer(const std::optional<FileStamp>& stamp);
std::optional<std::optional<FileStamp>> decodeClaimAnswer(std::string_view bytes);

/// The whole parse result; TuRecord::fileIds are not carried (the store fills them).
std::string encodeIndexedTu(const IndexedTu& tu);
std::optional<IndexedTu> decodeIndexedTu(std::string_view bytes);

} // namespace symdex
