// Parsing one translation unit with libclang's indexing API (clang_indexSourceFile) and turning
// its callbacks into per-file symbol and reference lists. Which files a parse extracts is decided
// by a FileClaimer, so that a header reached by many TUs is extracted by only one of them.
#pragma once

#include "indexer/compile_db.h"
#include "store/store.h"

#include <clang-c/Index.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace symdex {

/// Content identity of a file on disk.
struct FileStamp {
    uint64_t contentHash = 0;
    int64_t mtimeNs = 0;
    uint64_t size = 0;
    int64_t ctimeNs = 0;
    uint64_t inode = 0;
    bool asciiOnly = false; ///< the hashed contents hold no byte >= 0x80 (FileRecord::asciiOnly)
    /// Same mtime, size, ctime and inode: the contents need not be hashed again.
    bool sameStat(const FileStamp& other) const {
        return mtimeNs == other.mtimeNs && size == other.size && ctimeNs == other.ctimeNs &&
               inode == other.inode;
    }
};

/// A TU's claim on a file: it extracts the file for as long as `owner` holds its rank. A claim is
/// exclusive at every moment: when a lower rank takes the file over, the former owner sees it at
/// its next callback for the file, drops what it extracted and never publishes it.
struct FileClaim {
    FileStamp stamp;
    std::shared_ptr<const std::atomic<size_t>> owner;
};

/// Decides whether the parse of the TU of rank `rank` (its place in the run's schedule)
/// extracts `path`. Called from parse threads, concurrently.
class FileClaimer {
public:
    virtual ~FileClaimer() = default;
    /// A claim when this TU must extract `path`; nullopt when another TU does, or when the store
    /// already holds these contents.
    virtual std::optional<FileClaim> claim(const std::string& path, size_t rank) = 0;
    /// Whether claim(path, rank) would give `path` to `rank` now, without claiming it; false when
    /// the claimer cannot tell.
    virtual bool wouldClaim(const std::string& /*path*/, size_t /*rank*/) { return false; }
    /// Gives back the claims of a TU whose parse failed, so that another TU can extract them.
    virtual void release(size_t rank) = 0;
};

/// libclang state shared by the parses of one thread (or, SessionMode::Shared, of all threads):
/// one CXIndex and one indexing session (CXIndexAction). With `skipParsedBodies` the session
/// remembers which header function bodies were parsed and later parses skip them
/// (CXIndexOpt_SkipParsedBodiesInSession; libclang guards that record with its own mutex).
class ParseSession {
public:
    /// `againstPch`: for parses against a PCH: visiting a translation unit's children then visits
    /// only its own (CXIndex's excludeDeclarationsFromPCH): the PCH's preprocessing record is
    /// not walked (its macros are in the manifest).
    explicit ParseSession(bool skipParsedBodies, bool againstPch = false);
    ~ParseSession();
    ParseSession(const ParseSession&) = delete;
    ParseSession& operator=(const ParseSession&) = delete;

    CXIndexAction action() const { return action_; }
    bool skipParsedBodies() const { return skipParsedBodies_; }

private:
    CXIndex index_ = nullptr; // must outlive every TU parsed through action_
    CXIndexAction action_ = nullptr;
    bool skipParsedBodies_;
};

/// How a parse went with a precompiled prefix (pch.h), for the run's summary.
enum class PchMode : uint8_t {
    None = 0,    ///< no PCH was offered
    Used,        ///< parsed against the PCH
    Owner,       ///< parsed plain: it owns a file of the PCH, which it must extract
    Incomplete,  ///< parsed plain: it does not include every file of the PCH
    Macros,      ///< parsed plain: a macro of its own would meet the PCH's in another order
    Order,       ///< parsed plain: its own code would read the PCH's declarations in another order
    Unusable,    ///< parsed plain: the PCH or its manifest could not be read
    Built,       ///< a PCH was built (no TU was parsed)
    BuildFailed, ///< a PCH could not be built
};
inline constexpr int kPchModes = 9;
std::string_view pchModeName(PchMode mode);

/// What a parse tells the run about precompiled prefixes.
struct PchReport {
    PchMode mode = PchMode::None;
    /// Why a parse fell back (the file, header or macro), or why a build failed.
    std::string detail;
    /// A plain parse: the include-guarded headers its own files include, in the order first
    /// included (system headers as spelled, project headers by real path): what a PCH for its
    /// configuration may hold when the text chose nothing.
    std::vector<std::string> systemIncludes;
    /// A build: the encoded PchManifest (the absent paths are added by the caller).
    std::string manifest;
};

struct ParseOptions {
    /// Parse against this PCH (its manifest beside it) when the rules of pch.h allow it; empty:
    /// plain.
    std::string pchPath;
    /// Filled when not null.
    PchReport* pchReport = nullptr;
    /// The session parses against a PCH use (needed with pchPath): not the plain parses' one,
    /// since a parse that falls back must not find the bodies its own attempt parsed skipped.
    ParseSession* pchSession = nullptr;
    /// Also extract macro definitions and expansions (needs libclang's detailed preprocessing
    /// record).
    bool indexMacros = true;
    /// LockMode::Global: the store-wide lock, held exclusively while symbols are extracted.
    CountedSharedMutex* extractionLock = nullptr;
};

/// Parses `command` (TU number `tuIndex` of the run) and returns what it extracted. Never throws
/// for a bad TU: failures and crashes come back as TuRecord::status, parse errors as counts.
IndexedTu parseTranslationUnit(ParseSession& session, const CompileCommand& command, size_t tuIndex,
                               FileClaimer& claimer, const ParseOptions& options);

/// Builds a PCH at `pchPath` from `headers` (#include spellings) with `command`'s configuration
/// (its main file only says the language and the directory), in a session of its own: the
/// project's function bodies parsed, those of system headers skipped. The source is written
/// beside it (`pchPath`.h). Returns Built with the manifest, or BuildFailed with the first error;
/// never throws.
PchReport buildPrecompiledHeader(const CompileCommand& command,
                                 const std::vector<std::string>& headers,
                                 const std::string& pchPath, bool indexMacros);

} // namespace symdex
