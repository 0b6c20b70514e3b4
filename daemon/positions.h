// Positions between LSP and the store. LSP counts lines from 0 and characters in UTF-16 code
// units (or UTF-8 bytes when the client and server agree on "utf-8"); the store counts lines and
// byte columns from 1, as libclang does. Converting UTF-16 needs the line's text: it is read
// from the file on disk when a request needs it (docs/protocol.md, "Positions").
#pragma once

#include "protocol/json_writer.h"
#include "store/records.h"

#include <QJsonObject>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symdex {
class Store;
class StoreSnapshot;
} // namespace symdex

namespace symdex::daemon {

/// How LSP characters are counted on this connection (LSP 3.17 positionEncoding).
enum class PositionEncoding { Utf16, Utf8 };

/// The UTF-16 offset of byte offset `byteOffset` within `line` (UTF-8). A byte inside a
/// multi-byte sequence counts as the start of that character; invalid bytes count one unit each;
/// past the end of the line, each extra byte counts one unit.
uint32_t utf16FromByteOffset(std::string_view line, uint32_t byteOffset);
/// The byte offset of UTF-16 offset `units` within `line`; past the end, one byte per unit.
uint32_t byteOffsetFromUtf16(std::string_view line, uint32_t units);

/// Whether a file holds only ASCII bytes (then UTF-16 columns are byte columns and its lines
/// need not be read). Cached process-wide by path, mtime and size; thread-safe. A version of the
/// file not cached yet is read, unless `index` records it as ASCII with the stat fields it has
/// now (FileRecord::asciiOnly: what was indexed is what is there).
bool isAsciiFile(const std::string& path, const Store* index = nullptr);
/// The same, the record read from `index`, a snapshot the caller holds (a request that reads
/// one answers many files from it: a snapshot for each file cost more than the lookup).
bool isAsciiFile(const std::string& path, const StoreSnapshot& index);

/// A file's text as read once, with where each line starts.
struct FileText {
    int64_t mtimeNs = 0;
    int64_t size = -1;
    std::string text;
    std::vector<uint32_t> lineStarts; ///< byte offset of each line
};

/// The text of `path` as it is on disk now: from a process-wide cache (the files a daemon's
/// requests touched last) when its mtime and size are those cached, else read. Thread-safe;
/// empty text when unreadable.
std::shared_ptr<const FileText> fileText(const std::string& path);

/// The lines of the files a request touches, each file looked up at most once (fileText()), so
/// one request sees one version of each. Not thread-safe: one per request.
class SourceLines {
public:
    /// The text of 1-based `line` of `path` without its newline; empty when unreadable.
    std::string_view line(const std::string& path, uint32_t line);

private:
    std::unordered_map<std::string, std::shared_ptr<const FileText>> files_;
};

/// Converts positions for one request.
class PositionMapper {
public:
    /// `index`, when given, tells which files were ASCII when indexed (isAsciiFile()).
    explicit PositionMapper(PositionEncoding encoding, const Store* index = nullptr)
        : encoding_(encoding), index_(index) {}
    /// The same, the files' records read from `snapshot`, which must outlive the mapper.
    PositionMapper(PositionEncoding encoding, const StoreSnapshot& snapshot)
        : encoding_(encoding), index_(nullptr), snapshot_(&snapshot) {}
    PositionMapper(PositionEncoding encoding, StoreSnapshot&& snapshot) = delete;

    /// The store position (1-based line, byte column) of an LSP position in `path`.
    Position fromLsp(const std::string& path, uint32_t line, uint32_t character);
    /// The LSP position {"line", "character"} of a store position.
    QJsonObject toLsp(const std::string& path, Position position);
    /// An LSP range from `begin` spanning `byteLength` bytes on the same line.
    QJsonObject rangeOf(const std::string& path, Position begin, uint32_t byteLength);
    /// An LSP range between two store positions.
    QJsonObject rangeOf(const std::string& path, Position begin, Position end);
    /// An LSP Location {"uri", "range"}.
    QJsonObject location(const std::string& path, Position begin, uint32_t byteLength);
    /// The same Location written as JSON text (answers of many locations: no QJsonObjects).
    void writeLocation(protocol::JsonWriter& out, const std::string& path, Position begin,
                       uint32_t byteLength);
    /// The same, appended to a value being written (JsonWriter::append), as a member's value.
    void appendLocation(protocol::JsonWriter& out, const std::string& path, Position begin,
                        uint32_t byteLength);
    /// The file:// URI of `path` (fileUri()), each path's worked out once per request.
    const std::string& uri(const std::string& path);

    SourceLines& lines() { return lines_; }

private:
    /// Whether columns of `path` need converting (UTF-16 and not all ASCII); asked once per file
    /// and request.
    bool needsConversion(const std::string& path);
    /// The 0-based LSP line and character of a store position.
    std::pair<uint32_t, uint32_t> lspPoint(const std::string& path, Position position);
    /// The same, `convert` being needsConversion(path).
    std::pair<uint32_t, uint32_t> lspPoint(const std::string& path, Position position,
                                           bool convert);

    PositionEncoding encoding_;
    const Store* index_;
    const StoreSnapshot* snapshot_ = nullptr;
    SourceLines lines_;
    /// What is worked out once per file and request: one map, so that an answer's location
    /// costs one look-up of its path.
    struct File {
        std::optional<bool> needsConversion;
        std::string uri; ///< empty until asked
    };
    File& file(const std::string& path) { return files_[path]; }
    bool needsConversion(const std::string& path, File& file);
    const std::string& uri(const std::string& path, File& file);
    std::unordered_map<std::string, File> files_;
};

/// "file:///a/b%20c.cpp" for "/a/b c.cpp": QUrl::fromLocalFile's fully encoded URI, written
/// directly for an absolute ASCII path (QUrl's parsing and encoding was a tenth of a
/// workspace/symbol answer's work).
std::string fileUri(const std::string& path);
QString pathToUri(const std::string& path);
/// The path of a file:// URI; nullopt for any other scheme or a malformed URI.
std::optional<std::string> uriToPath(const QString& uri);

} // namespace symdex::daemon
