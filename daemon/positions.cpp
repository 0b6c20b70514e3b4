#include "daemon/positions.h"

#include "store/encoding.h"
#include "store/store.h"

#include <QUrl>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <mutex>
#include <shared_mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex::daemon {

namespace {

/// Length in bytes of the UTF-8 sequence starting with `lead`; 1 for an invalid lead byte.
uint32_t sequenceLength(unsigned char lead) {
    if (lead < 0x80)
        return 1;
    if ((lead & 0xE0) == 0xC0)
        return 2;
    if ((lead & 0xF0) == 0xE0)
        return 3;
    if ((lead & 0xF8) == 0xF0)
        return 4;
    return 1;
}

} // namespace

uint32_t utf16FromByteOffset(std::string_view line, uint32_t byteOffset) {
    uint32_t units = 0;
    size_t i = 0;
    while (i < line.size() && i < byteOffset) {
        const uint32_t len = sequenceLength(static_cast<unsigned char>(line[i]));
        units += len == 4 ? 2 : 1; // beyond the BMP: a surrogate pair
        i += len;
    }
    if (byteOffset > line.size())
        units += byteOffset - uint32_t(line.size());
    return units;
}

uint32_t byteOffsetFromUtf16(std::string_view line, uint32_t units) {
    uint32_t counted = 0;
    size_t i = 0;
    while (i < line.size() && counted < units) {
        const uint32_t len = sequenceLength(static_cast<unsigned char>(line[i]));
        counted += len == 4 ? 2 : 1;
        i += len;
    }
    i = std::min(i, line.size());
    if (counted < units)
        i += units - counted;
    return uint32_t(i);
}

namespace {

struct AsciiEntry {
    int64_t mtimeNs = 0;
    int64_t size = -1;
    bool ascii = false;
};

/// path -> what isAsciiFile() found for that version of the file. Reads are shared; a file is
/// scanned outside the lock and the result stored under it.
std::unordered_map<std::string, AsciiEntry> asciiFiles;
std::shared_mutex asciiFilesMu;

/// Whether the file holds ASCII only: read in large pieces (a workspace/symbol answer's first
/// look at a hundred files scanned them through an istream a byte at a time, a third of the
/// request's instructions).
bool scanAscii(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true; // nothing to read: every column maps to itself
    static thread_local std::vector<char> buf(size_t(1) << 16);
    bool ascii = true;
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (!isAscii(std::string_view(buf.data(), size_t(n)))) {
            ascii = false;
            break;
        }
    }
    ::close(fd);
    return ascii;
}

} // namespace

namespace {

/// isAsciiFile() with the index's record of a file read by `indexed` (nullopt: none).
template <typename Indexed> bool asciiFile(const std::string& path, Indexed&& indexed) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return true; // nothing to read: every column maps to itself
    const int64_t mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    {
        std::shared_lock lock(asciiFilesMu);
        auto it = asciiFiles.find(path);
        if (it != asciiFiles.end() && it->second.mtimeNs == mtimeNs &&
            it->second.size == int64_t(st.st_size))
            return it->second.ascii;
    }
    // The index saw these bytes (every stat field as it recorded them) and found no high byte:
    // no need to read them again (a workspace/symbol answer's first look at a file read it all).
    auto indexedAscii = [&] {
        const std::optional<FileRecord> record = indexed();
        return record && record->asciiOnly && record->contentHash != 0 &&
               record->mtimeNs == mtimeNs && record->size == uint64_t(st.st_size) &&
               record->ctimeNs == int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec &&
               record->inode == uint64_t(st.st_ino);
    };
    const bool ascii = indexedAscii() || scanAscii(path);
    std::unique_lock lock(asciiFilesMu);
    asciiFiles[path] = {mtimeNs, int64_t(st.st_size), ascii};
    return ascii;
}

} // namespace

bool isAsciiFile(const std::string& path, const Store* index) {
    return asciiFile(path, [&]() -> std::optional<FileRecord> {
        return index ? index->file(path) : std::nullopt;
    });
}

bool isAsciiFile(const std::string& path, const StoreSnapshot& index) {
    return asciiFile(path, [&] { return index.file(path); });
}

namespace {

/// path -> the text fileText() read last. Bounded: past kMaxCachedTexts files it starts over
/// (an editor's requests touch a few files at a time; a references answer may touch hundreds).
constexpr size_t kMaxCachedTexts = 512;
std::unordered_map<std::string, std::shared_ptr<const FileText>> fileTexts;
std::shared_mutex fileTextsMu;

std::shared_ptr<const FileText> readText(const std::string& path, int64_t mtimeNs, int64_t size) {
    auto file = std::make_shared<FileText>();
    file->mtimeNs = mtimeNs;
    file->size = size;
    // One read of the size stat() saw (and what more there is), not a stream a byte at a time:
    // a request's first use of a file of 200 KB took 2M instructions so.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return file;
    std::string& text = file->text;
    text.resize(size_t(std::max<int64_t>(size, 0)) + 1);
    size_t got = 0;
    for (;;) {
        if (got == text.size())
            text.resize(text.size() * 2);
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += size_t(n);
    }
    ::close(fd);
    text.resize(got);
    if (!text.empty())
        file->lineStarts.push_back(0);
    for (const char* p = text.data();
         (p = static_cast<const char*>(std::memchr(p, '\n', text.data() + got - p)));) {
        ++p;
        if (p < text.data() + got)
            file->lineStarts.push_back(uint32_t(p - text.data()));
    }
    return file;
}

} // namespace

std::shared_ptr<const FileText> fileText(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return std::make_shared<const FileText>();
    const int64_t mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    {
        std::shared_lock lock(fileTextsMu);
        auto it = fileTexts.find(path);
        if (it != fileTexts.end() && it->second->mtimeNs == mtimeNs &&
            it->second->size == int64_t(st.st_size))
            return it->second;
    }
    std::shared_ptr<const FileText> text = readText(path, mtimeNs, int64_t(st.st_size));
    if (int64_t(text->text.size()) != int64_t(st.st_size))
        return text; // changed while read: use it for this request, cache nothing
    std::unique_lock lock(fileTextsMu);
    if (fileTexts.size() >= kMaxCachedTexts)
        fileTexts.clear();
    fileTexts[path] = text;
    return text;
}

std::string_view SourceLines::line(const std::string& path, uint32_t line) {
    auto it = files_.find(path);
    if (it == files_.end())
        it = files_.emplace(path, fileText(path)).first;
    const FileText& file = *it->second;
    if (line == 0 || line > file.lineStarts.size())
        return {};
    const size_t begin = file.lineStarts[line - 1];
    const size_t end = line < file.lineStarts.size() ? file.lineStarts[line] - 1 : file.text.size();
    std::string_view text(file.text.data() + begin, end - begin);
    if (!text.empty() && text.back() == '\n')
        text.remove_suffix(1);
    if (!text.empty() && text.back() == '\r')
        text.remove_suffix(1);
    return text;
}

bool PositionMapper::needsConversion(const std::string& path) {
    if (encoding_ == PositionEncoding::Utf8)
        return false;
    return needsConversion(path, file(path));
}

bool PositionMapper::needsConversion(const std::string& path, File& file) {
    if (encoding_ == PositionEncoding::Utf8)
        return false;
    if (!file.needsConversion) {
        // The store's columns are of the bytes it indexed: if those were ASCII, they are the
        // UTF-16 columns too, whatever the file holds now (symdexd knows it in memory; else a
        // stat and the record, or a read of the file).
        if (const std::optional<bool> ascii =
                snapshot_ ? snapshot_->indexedAscii(path) : std::nullopt)
            file.needsConversion = !*ascii;
        else
            file.needsConversion =
                snapshot_ ? !isAsciiFile(path, *snapshot_) : !isAsciiFile(path, index_);
    }
    return *file.needsConversion;
}

Position PositionMapper::fromLsp(const std::string& path, uint32_t line, uint32_t character) {
    if (!needsConversion(path))
        return {line + 1, character + 1};
    return {line + 1, byteOffsetFromUtf16(lines_.line(path, line + 1), character) + 1};
}

std::pair<uint32_t, uint32_t> PositionMapper::lspPoint(const std::string& path, Position position) {
    return lspPoint(path, position, needsConversion(path));
}

std::pair<uint32_t, uint32_t> PositionMapper::lspPoint(const std::string& path, Position position,
                                                       bool convert) {
    const uint32_t line = position.line ? position.line - 1 : 0;
    const uint32_t byteOffset = position.column ? position.column - 1 : 0;
    const uint32_t character =
        !convert ? byteOffset : utf16FromByteOffset(lines_.line(path, line + 1), byteOffset);
    return {line, character};
}

QJsonObject PositionMapper::toLsp(const std::string& path, Position position) {
    const auto [line, character] = lspPoint(path, position);
    return QJsonObject{{"line", qint64(line)}, {"character", qint64(character)}};
}

QJsonObject PositionMapper::rangeOf(const std::string& path, Position begin, uint32_t byteLength) {
    return rangeOf(path, begin, Position{begin.line, begin.column + byteLength});
}

QJsonObject PositionMapper::rangeOf(const std::string& path, Position begin, Position end) {
    return QJsonObject{{"start", toLsp(path, begin)}, {"end", toLsp(path, end)}};
}

QJsonObject PositionMapper::location(const std::string& path, Position begin, uint32_t byteLength) {
    return QJsonObject{{"uri", pathToUri(path)}, {"range", rangeOf(path, begin, byteLength)}};
}

void PositionMapper::writeLocation(protocol::JsonWriter& out, const std::string& path,
                                   Position begin, uint32_t byteLength) {
    out.raw({});
    appendLocation(out, path, begin, byteLength);
}

void PositionMapper::appendLocation(protocol::JsonWriter& out, const std::string& path,
                                    Position begin, uint32_t byteLength) {
    // Keys in QJsonObject's order (sorted), so both writers give the same text.
    File& f = file(path);
    const bool convert = needsConversion(path, f);
    const auto [line, start] = lspPoint(path, begin, convert);
    const uint32_t end =
        lspPoint(path, Position{begin.line, begin.column + byteLength}, convert).second;
    out.append(R"({"range":{"end":{"character":)")
        .appendNumber(end)
        .append(R"(,"line":)")
        .appendNumber(line)
        .append(R"(},"start":{"character":)")
        .appendNumber(start)
        .append(R"(,"line":)")
        .appendNumber(line)
        .append(R"(}},"uri":)")
        .appendString(uri(path, f))
        .append("}");
}

const std::string& PositionMapper::uri(const std::string& path) {
    return uri(path, file(path));
}

const std::string& PositionMapper::uri(const std::string& path, File& file) {
    if (file.uri.empty())
        file.uri = fileUri(path);
    return file.uri;
}

namespace {

/// The bytes QUrl::FullyEncoded escapes in a path: controls, space, "#%<>?\^`{|} and DEL
/// (tests/protocol: every ASCII byte checked against QUrl); high bytes are not for this table.
constexpr std::array<bool, 128> kEscapedInUri = [] {
    std::array<bool, 128> escaped{};
    for (int c = 0; c <= 0x20; ++c)
        escaped[size_t(c)] = true;
    escaped[0x7F] = true;
    for (char c : std::string_view("\"#%<>?\\^`{|}"))
        escaped[size_t(c)] = true;
    return escaped;
}();

} // namespace

std::string fileUri(const std::string& path) {
    // A run of bytes that need no escape is appended whole: every answer of a search writes
    // the URI of its file, and a byte at a time through a search of the escaped set was a
    // third of writing the location.
    std::string uri;
    if (path.size() > 1 && path[0] == '/' && path[1] != '/') {
        uri.reserve(7 + path.size() + path.size() / 8);
        uri = "file://";
        static constexpr char kHex[] = "0123456789ABCDEF";
        size_t run = 0;
        bool plain = true;
        for (size_t i = 0; i < path.size() && plain; ++i) {
            const auto c = static_cast<unsigned char>(path[i]);
            if (c >= 0x80)
                plain = false;
            else if (kEscapedInUri[c]) {
                uri.append(path, run, i - run);
                uri += '%';
                uri += kHex[c >> 4];
                uri += kHex[c & 15];
                run = i + 1;
            }
        }
        if (plain) {
            uri.append(path, run, path.size() - run);
            return uri;
        }
    }
    // "//host/...", relative paths and non-ASCII: QUrl's own rules.
    return QUrl::fromLocalFile(QString::fromStdString(path))
        .toString(QUrl::FullyEncoded)
        .toStdString();
}

QString pathToUri(const std::string& path) {
    return QString::fromStdString(fileUri(path));
}

std::optional<std::string> uriToPath(const QString& uri) {
    const QUrl url(uri, QUrl::StrictMode);
    if (!url.isValid() || !url.isLocalFile() || url.toLocalFile().isEmpty())
        return std::nullopt;
    return url.toLocalFile().toStdString();
}

} // namespace symdex::daemon
