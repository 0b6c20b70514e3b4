#include "indexer/worker_protocol.h"

#include "store/encoding.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace symdex {

namespace {

bool writeAll(int fd, const char* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

bool readAll(int fd, char* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::read(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

/// A count read from untrusted bytes: no more than the bytes left could hold.
bool plausibleCount(uint64_t n, std::string_view bytes) {
    return n <= bytes.size();
}

} // namespace

bool writeFrame(int fd, WorkerMessage type, std::string_view payload) {
    if (payload.size() > kMaxWorkerFrame)
        return false;
    char header[5];
    const uint32_t size = uint32_t(payload.size());
    for (int i = 0; i < 4; ++i)
        header[i] = char((size >> (8 * i)) & 0xff);
    header[4] = char(type);
    return writeAll(fd, header, sizeof header) && writeAll(fd, payload.data(), payload.size());
}

std::optional<std::pair<WorkerMessage, std::string>> readFrame(int fd) {
    unsigned char header[5];
    if (!readAll(fd, reinterpret_cast<char*>(header), sizeof header))
        return std::nullopt;
    uint32_t size = 0;
    for (int i = 0; i < 4; ++i)
        size |= uint32_t(header[i]) << (8 * i);
    if (size > kMaxWorkerFrame || header[4] < uint8_t(WorkerMessage::Parse) ||
        header[4] > uint8_t(WorkerMessage::Result))
        return std::nullopt;
    std::string payload(size, '\0');
    if (!readAll(fd, payload.data(), size))
        return std::nullopt;
    return std::pair(WorkerMessage(header[4]), std::move(payload));
}

std::string encodeParseRequest(const ParseRequest& request) {
    std::string out;
    Writer w(out);
    w.varint(request.rank);
    w.byte(uint8_t(request.indexMacros) | uint8_t(request.skipParsedBodies) << 1 |
           uint8_t(request.denialsHold) << 2);
    w.string(request.command.file);
    w.string(request.command.directory);
    w.varint(request.command.arguments.size());
    for (const std::string& arg : request.command.arguments)
        w.string(arg);
    w.string(request.pchPath);
    w.varint(request.pchHeaders.size());
    for (const std::string& header : request.pchHeaders)
        w.string(header);
    return out;
}

std::optional<ParseRequest> decodeParseRequest(std::string_view bytes) {
    Reader r(bytes);
    ParseRequest request;
    request.rank = r.varint();
    const uint8_t flags = r.byte();
    request.indexMacros = flags & 1;
    request.skipParsedBodies = flags & 2;
    request.denialsHold = flags & 4;
    request.command.file = r.string();
    request.command.directory = r.string();
    const uint64_t n = r.varint();
    if (r.failed() || !plausibleCount(n, bytes))
        return std::nullopt;
    for (uint64_t i = 0; i < n && !r.failed(); ++i)
        request.command.arguments.emplace_back(r.string());
    request.pchPath = r.string();
    const uint64_t headers = r.varint();
    if (r.failed() || !plausibleCount(headers, bytes))
        return std::nullopt;
    for (uint64_t i = 0; i < headers && !r.failed(); ++i)
        request.pchHeaders.emplace_back(r.string());
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return request;
}

std::string encodeClaimAnswer(const std::optional<FileStamp>& stamp) {
    std::string out;
    Writer w(out);
    w.byte(stamp ? 1 : 0);
    if (stamp) {
        w.fixed64(stamp->contentHash);
        w.svarint(stamp->mtimeNs);
        w.varint(stamp->size);
        w.svarint(stamp->ctimeNs);
        w.varint(stamp->inode);
        w.byte(stamp->asciiOnly ? 1 : 0);
    }
    return out;
}

std::optional<std::optional<FileStamp>> decodeClaimAnswer(std::string_view bytes) {
    Reader r(bytes);
    std::optional<FileStamp> stamp;
    const uint8_t granted = r.byte();
    if (granted == 1) {
        stamp.emplace();
        stamp->contentHash = r.fixed64();
        stamp->mtimeNs = r.svarint();
        stamp->size = r.varint();
        stamp->ctimeNs = r.svarint();
        stamp->inode = r.varint();
        stamp->asciiOnly = r.byte() == 1;
    }
    if (r.failed() || !r.atEnd() || granted > 1)
        return std::nullopt;
    return stamp;
}

std::string encodeIndexedTu(const IndexedTu& tu) {
    std::string out;
    Writer w(out);
    w.string(tu.mainFile);
    TuRecord record = tu.record;
    record.fileIds.clear();
    w.string(encodeTuRecord(record));
    w.varint(tu.includedFiles.size());
    for (size_t i = 0; i < tu.includedFiles.size(); ++i) {
        w.string(tu.includedFiles[i]);
        w.fixed64(i < tu.includedHashes.size() ? tu.includedHashes[i] : 0);
    }
    w.varint(tu.aliases.size());
    for (const auto& [name, real] : tu.aliases) {
        w.string(name);
        w.string(real);
    }
    w.varint(tu.files.size());
    for (const IndexedFile& file : tu.files) {
        w.string(encodeFileRecord(file.file));
        w.varint(file.priority);
        w.byte(file.bodiesSkipped ? 1 : 0);
        w.varint(file.symbols.size());
        for (const Symbol& symbol : file.symbols)
            w.string(encodeSymbol(symbol));
        w.varint(file.references.size());
        for (const Reference& ref : file.references)
            w.string(encodeReference(ref));
    }
    return out;
}

std::optional<IndexedTu> decodeIndexedTu(std::string_view bytes) {
    Reader r(bytes);
    IndexedTu tu;
    tu.mainFile = r.string();
    std::optional<TuRecord> record = decodeTuRecord(r.string());
    if (!record)
        return std::nullopt;
    tu.record = std::move(*record);
    uint64_t n = r.varint();
    if (r.failed() || !plausibleCount(n, bytes))
        return std::nullopt;
    for (uint64_t i = 0; i < n && !r.failed(); ++i) {
        tu.includedFiles.emplace_back(r.string());
        tu.includedHashes.push_back(r.fixed64());
    }
    n = r.varint();
    if (r.failed() || !plausibleCount(n, bytes))
        return std::nullopt;
    for (uint64_t i = 0; i < n && !r.failed(); ++i) {
        std::string name(r.string());
        tu.aliases.emplace_back(std::move(name), std::string(r.string()));
    }
    n = r.varint();
    if (r.failed() || !plausibleCount(n, bytes))
        return std::nullopt;
    for (uint64_t i = 0; i < n && !r.failed(); ++i) {
        IndexedFile& file = tu.files.emplace_back();
        std::optional<FileRecord> fileRecord = decodeFileRecord(r.string());
        if (!fileRecord)
            return std::nullopt;
        file.file = std::move(*fileRecord);
        file.priority = uint32_t(r.varint());
        file.bodiesSkipped = r.byte() != 0;
        uint64_t count = r.varint();
        if (r.failed() || !plausibleCount(count, bytes))
            return std::nullopt;
        for (uint64_t k = 0; k < count; ++k) {
            std::optional<Symbol> symbol = decodeSymbol(r.string());
            if (!symbol)
                return std::nullopt;
            file.symbols.push_back(std::move(*symbol));
        }
        count = r.varint();
        if (r.failed() || !plausibleCount(count, bytes))
            return std::nullopt;
        for (uint64_t k = 0; k < count; ++k) {
            std::optional<Reference> ref = decodeReference(r.string());
            if (!ref)
                return std::nullopt;
            file.references.push_back(*ref);
        }
    }
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return tu;
}

} // namespace symdex

namespace symdex {

std::string encodeParseResult(const IndexedTu& tu, const PchReport& report) {
    std::string out;
    Writer w(out);
    w.string(encodeIndexedTu(tu));
    w.byte(uint8_t(report.mode));
    w.string(report.detail);
    w.varint(report.systemIncludes.size());
    for (const std::string& header : report.systemIncludes)
        w.string(header);
    w.string(report.manifest);
    return out;
}

std::optional<std::pair<IndexedTu, PchReport>> decodeParseResult(std::string_view bytes) {
    Reader r(bytes);
    std::optional<IndexedTu> tu = decodeIndexedTu(r.string());
    if (!tu || r.failed())
        return std::nullopt;
    PchReport report;
    const uint8_t mode = r.byte();
    if (mode >= kPchModes)
        return std::nullopt;
    report.mode = PchMode(mode);
    report.detail = r.string();
    const uint64_t n = r.varint();
    if (r.failed() || !plausibleCount(n, bytes))
        return std::nullopt;
    for (uint64_t i = 0; i < n && !r.failed(); ++i)
        report.systemIncludes.emplace_back(r.string());
    report.manifest = r.string();
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return std::pair(std::move(*tu), std::move(report));
}

} // namespace symdex
