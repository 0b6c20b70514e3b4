// Crash isolation: a TU is parsed in a symdex-worker child process, so that whatever libclang does
// on it — a segfault, a stack overflow, llvm::report_fatal_error's exit(), a hang, unbounded
// memory — costs that TU and nothing else. rtags parses in child processes for the same reason;
// scip-clang does too, but notices a dead worker only when its 300 s per-TU timeout expires. Here
// the parent holds the worker's socket and learns of a death at once (end of file, then
// waitpid), retries the TU once in a fresh worker, and records it as crashed with the reason.
//
// One ParseWorker per arena slot, used by that slot's thread only. The worker keeps one libclang
// session for all the TUs it parses (SessionMode::PerThread), and asks the parent for every
// header claim (FileClaimer lives in the parent: header_claims.h).
#pragma once

#include "indexer/compile_db.h"
#include "indexer/file_stamps.h"
#include "indexer/tu_parser.h"

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace symdex {

struct WorkerOptions {
    /// The symdex-worker executable.
    std::string path;
    /// A parse that takes longer than this is killed and its TU recorded as crashed ("timed
    /// out"); 0: no limit.
    std::chrono::milliseconds timeout{std::chrono::minutes(5)};
    /// Address-space limit of a worker (RLIMIT_AS), in MiB; 0: none. Ignored by sanitizer builds
    /// of the worker, whose shadow memory needs terabytes of address space.
    uint64_t memoryLimitMb = 0;
    bool skipParsedBodies = true;
    bool indexMacros = true;
    /// ParseRequest::denialsHold: the TUs this worker parses come in rising rank order against
    /// one claim table.
    bool denialsHold = true;
    /// When it becomes true, a parse in progress is abandoned within ~0.1 s. Not owned.
    const std::atomic<bool>* cancel = nullptr;
};

/// How one parse in a worker ended.
struct WorkerOutcome {
    enum Kind {
        Parsed,    ///< `tu` is the result (its status may still be Failed or Crashed by libclang)
        Died,      ///< the worker died or broke the protocol; `reason` says how
        TimedOut,  ///< killed after WorkerOptions::timeout
        Cancelled, ///< WorkerOptions::cancel; nothing to publish
        NoWorker,  ///< the worker could not be started; `reason` says why
    };
    Kind kind = Died;
    IndexedTu tu;
    std::string reason;
    /// Every file the parse reached (claimed or not) before it ended, main file excluded.
    std::vector<std::string> reached;
    /// Every path the worker probed in vain while parsing (probe_log.h), in order, with repeats.
    std::vector<std::string> absent;
    /// Symlinks the parse reached files through: (name, target), from "@name\ttarget" lines.
    std::vector<std::pair<std::string, std::string>> links;
    /// What the parse says about PCHs (tu_parser.h).
    PchReport pch;
};

/// What a parse is asked to do with a PCH (ParseRequest::pchPath, pchHeaders).
struct PchTask {
    std::string path;                 ///< parse against it, or build it
    std::vector<std::string> headers; ///< non-empty: build it from these
};

class ParseWorker {
public:
    explicit ParseWorker(WorkerOptions options);
    /// Stops the worker (closing its socket ends it; it is killed if it does not exit).
    ~ParseWorker();
    ParseWorker(const ParseWorker&) = delete;
    ParseWorker& operator=(const ParseWorker&) = delete;

    /// Parses `command` as rank `rank` in the worker, starting one if none runs. Claims go to
    /// `claimer`; files it extracted but lost to a lower rank meanwhile are dropped from the
    /// result. Never throws.
    WorkerOutcome parse(const CompileCommand& command, size_t rank, FileClaimer& claimer,
                        const PchTask& pch = {});

    /// Processes started so far (the first one, and one after each death).
    size_t spawned() const { return spawned_; }

private:
    WorkerOutcome exchange(const CompileCommand& command, size_t rank, FileClaimer& claimer,
                           const PchTask& pch);
    /// The paths the worker reported reaching, and those it probed in vain, since the last call
    /// (worker_protocol.h).
    void takeReached(WorkerOutcome& outcome);
    bool start(std::string* error);
    /// Kills (if `kill`) and reaps the worker; returns how it ended ("killed by signal 11
    /// (Segmentation fault)", "exited with status 1").
    std::string stop(bool kill);
    void drainStderr();

    WorkerOptions options_;
    pid_t pid_ = -1;
    int socket_ = -1;
    int stderr_ = -1;
    int reached_ = -1;          ///< memfd the workers append reached paths to; outlives each worker
    std::string stderrTail_;    ///< the last few KiB the worker wrote to stderr
    std::string lastErrorLine_; ///< the line of it stop() found to say what went wrong
    size_t spawned_ = 0;
};

/// The line of a dead worker's stderr tail that says what went wrong, trimmed to 300 bytes; empty
/// if none: the last fatal error (libclang's "LIBCLANG FATAL ERROR: ...", LLVM's "LLVM ERROR: ...")
/// if there is one, for a sanitizer's report after it is its consequence; else the last line
/// naming an error ("ERROR: AddressSanitizer: stack-overflow ...", "terminate called ...").
std::string workerErrorLine(std::string_view tail);

/// The symdex-worker beside the running executable, or $SYMDEX_WORKER when set; empty if neither
/// exists.
std::string defaultWorkerPath();

/// The worker's main loop (symdex-worker's main): serves ParseRequests on `fd` until it closes,
/// appending the files each parse reaches to `reachedFd`.
int runParseWorker(int fd, int reachedFd, uint64_t memoryLimitMb);

} // namespace symdex
