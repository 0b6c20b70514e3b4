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
#include <vector>

namespace symdex {

enum class WorkerMessage : uint8_t {
    Parse = 1,       ///< parent -> worker: ParseRequest
    Claim = 2,       ///< worker -> parent: string path
    ClaimAnswer = 3, ///< parent -> worker: byte granted, then the FileStamp if granted
    Result = 4,      ///< worker -> parent: IndexedTu
};

/// Besides the socket, a worker appends the path of every file its parse reaches, one per line,
/// to a memory file (fd 4, O_APPEND) the parent truncates before each TU: what the parent needs
/// for the record of a TU whose worker died, at the cost of a write(2) per file and no wake-up
/// of the parent. Lines starting with '?' are the paths the parse probed and did not find
/// (probe_log.h): every TU's record takes them from there.

/// What a worker needs to parse one TU.
struct ParseRequest {
    CompileCommand command;
    uint64_t rank = 0;
    bool indexMacros = true;
    bool skipParsedBodies = true;
    /// A claim refused to a rank stays refused to every higher rank of the run (header_claims.h:
    /// a file goes to the lowest rank that reaches it), so the worker may remember refusals
    /// across the TUs it parses in rank order instead of asking again. Not so for the re-parses
    /// that recover orphaned headers, each of which is granted its own set.
    bool denialsHold = false;
    /// Parse against this PCH when pch.h's rules allow (empty: plain); with `pchHeaders`, build it
    /// there from them instead of parsing (the command gives the configuration).
    std::string pchPath;
    std::vector<std::string> pchHeaders;
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

/// A Result frame: the parse result and what it says about PCHs.
std::string encodeParseResult(const IndexedTu& tu, const PchReport& report);
std::optional<std::pair<IndexedTu, PchReport>> decodeParseResult(std::string_view bytes);

} // namespace symdex
