#include "store/records.h"

#include "store/encoding.h"

#include <algorithm>
#include <unordered_map>

namespace symdex {

std::string_view kindName(SymbolKind kind) {
    switch (kind) {
    case SymbolKind::Unknown:
        return "unknown";
    case SymbolKind::Namespace:
        return "namespace";
    case SymbolKind::NamespaceAlias:
        return "namespace alias";
    case SymbolKind::Class:
        return "class";
    case SymbolKind::Struct:
        return "struct";
    case SymbolKind::Union:
        return "union";
    case SymbolKind::Enum:
        return "enum";
    case SymbolKind::EnumConstant:
        return "enumerator";
    case SymbolKind::Typedef:
        return "typedef";
    case SymbolKind::TypeAlias:
        return "type alias";
    case SymbolKind::Function:
        return "function";
    case SymbolKind::Method:
        return "method";
    case SymbolKind::StaticMethod:
        return "static method";
    case SymbolKind::Constructor:
        return "constructor";
    case SymbolKind::Destructor:
        return "destructor";
    case SymbolKind::ConversionFunction:
        return "conversion function";
    case SymbolKind::Variable:
        return "variable";
    case SymbolKind::StaticMember:
        return "static member";
    case SymbolKind::Field:
        return "field";
    case SymbolKind::Concept:
        return "concept";
    case SymbolKind::Macro:
        return "macro";
    }
    return "unknown";
}

std::string kindDisplayName(SymbolKind kind, uint8_t flags) {
    std::string name(kindName(kind));
    if (flags & kTemplate)
        name += " template";
    else if (flags & kSpecialization)
        name += " specialization";
    return name;
}

std::string roleName(uint16_t roles) {
    if (roles & kRoleOverride)
        return "override";
    if (roles & kRoleBase)
        return "base";
    if (roles & kRoleCall)
        return "call";
    if (roles & kRoleAddressOf)
        return "address";
    if (roles & kRoleWrite)
        return (roles & kRoleRead) ? "read-write" : "write";
    if (roles & kRoleRead)
        return "read";
    return "reference";
}

std::string_view tuStatusName(TuStatus status) {
    switch (status) {
    case TuStatus::Ok:
        return "ok";
    case TuStatus::Errors:
        return "errors";
    case TuStatus::Failed:
        return "failed";
    case TuStatus::Crashed:
        return "crashed";
    }
    return "unknown";
}

uint64_t Symbol::usrHash() const {
    return hash64(usr);
}

// Positions are delta-encoded inside a record: the extent is stored relative to the name's
// location, which keeps most of the bytes one-byte varints.
std::string encodeSymbol(const Symbol& s) {
    std::string out;
    out.reserve(26 + s.usr.size() + s.name.size() + s.qualifiedName.size() + s.signature.size() +
                s.comment.size());
    Writer w(out);
    w.byte(static_cast<uint8_t>(s.kind));
    w.byte(s.flags);
    w.varint(s.location.line);
    w.varint(s.location.column);
    w.svarint(int64_t(s.location.line) - s.extent.begin.line);
    w.varint(s.extent.begin.column);
    w.svarint(int64_t(s.extent.end.line) - s.location.line);
    w.varint(s.extent.end.column);
    w.string(s.name);
    w.string(s.qualifiedName);
    w.string(s.usr);
    w.string(s.signature);
    w.string(s.comment);
    return out;
}

std::optional<Symbol> decodeSymbol(std::string_view bytes) {
    Reader r(bytes);
    Symbol s;
    uint8_t kind = r.byte();
    if (kind > static_cast<uint8_t>(SymbolKind::Macro))
        return std::nullopt;
    s.kind = static_cast<SymbolKind>(kind);
    s.flags = r.byte();
    s.location.line = uint32_t(r.varint());
    s.location.column = uint32_t(r.varint());
    // Modulo 2^32, in unsigned arithmetic: a corrupt record's delta can be any int64, and the
    // signed sum could overflow.
    s.extent.begin.line = uint32_t(uint64_t(s.location.line) - uint64_t(r.svarint()));
    s.extent.begin.column = uint32_t(r.varint());
    s.extent.end.line = uint32_t(uint64_t(s.location.line) + uint64_t(r.svarint()));
    s.extent.end.column = uint32_t(r.varint());
    s.name = r.string();
    s.qualifiedName = r.string();
    s.usr = r.string();
    s.signature = r.string();
    s.comment = r.string();
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return s;
}

std::string encodeReference(const Reference& ref) {
    std::string out;
    out.reserve(24);
    Writer w(out);
    w.fixed64(ref.usrHash);
    w.varint(ref.location.line);
    w.varint(ref.location.column);
    w.varint(ref.roles);
    w.fixed64(ref.container);
    return out;
}

std::optional<Reference> decodeReference(std::string_view bytes) {
    Reader r(bytes);
    Reference ref;
    ref.usrHash = r.fixed64();
    ref.location.line = uint32_t(r.varint());
    ref.location.column = uint32_t(r.varint());
    const uint64_t roles = r.varint();
    if (roles > UINT16_MAX)
        return std::nullopt;
    ref.roles = uint16_t(roles);
    ref.container = r.fixed64();
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return ref;
}

std::optional<uint32_t> encodedSymbolLine(std::string_view bytes) {
    Reader r(bytes);
    r.byte(); // kind
    r.byte(); // flags
    const uint64_t line = r.varint();
    return r.failed() ? std::nullopt : std::optional(uint32_t(line));
}

std::optional<uint32_t> encodedReferenceLine(std::string_view bytes) {
    Reader r(bytes);
    r.fixed64(); // usrHash
    const uint64_t line = r.varint();
    return r.failed() ? std::nullopt : std::optional(uint32_t(line));
}

std::string encodeFileRecord(const FileRecord& f) {
    std::string out;
    Writer w(out);
    w.string(f.path);
    w.fixed64(f.contentHash);
    w.svarint(f.mtimeNs);
    w.varint(f.size);
    w.svarint(f.ctimeNs);
    w.varint(f.inode);
    w.varint(f.symbolCount);
    w.varint(f.referenceCount);
    w.varint(f.ownerFileId);
    w.varint(f.errorCount);
    w.varint(f.warningCount);
    w.string(f.firstError);
    w.byte(f.asciiOnly ? 1 : 0);
    return out;
}

std::optional<FileRecord> decodeFileRecord(std::string_view bytes) {
    Reader r(bytes);
    FileRecord f;
    f.path = r.string();
    f.contentHash = r.fixed64();
    f.mtimeNs = r.svarint();
    f.size = r.varint();
    f.ctimeNs = r.svarint();
    f.inode = r.varint();
    f.symbolCount = uint32_t(r.varint());
    f.referenceCount = uint32_t(r.varint());
    f.ownerFileId = uint32_t(r.varint());
    f.errorCount = uint32_t(r.varint());
    f.warningCount = uint32_t(r.varint());
    f.firstError = r.string();
    const uint8_t ascii = r.byte();
    f.asciiOnly = ascii == 1;
    if (r.failed() || !r.atEnd() || ascii > 1)
        return std::nullopt;
    return f;
}

uint64_t filesDigest(const std::vector<uint64_t>& contentHashes) {
    if (contentHashes.empty() ||
        std::find(contentHashes.begin(), contentHashes.end(), 0) != contentHashes.end())
        return 0;
    std::string bytes;
    Writer w(bytes);
    for (uint64_t hash : contentHashes)
        w.fixed64(hash);
    const uint64_t digest = hash64(bytes);
    return digest ? digest : 1; // 0 means unknown
}

namespace {

/// A TU's absent ids (ascending): the count shifted left by one, then either (bit 0 clear) each
/// id's difference from the one before, or (set; format 28) the first id, the number of bytes
/// of a bitmap and the bitmap, bit i (low bit first) standing for the first id + i, whichever is
/// shorter. TUs of one tree probe mostly the same paths: LevelDB's list 639 of its 943 ids on
/// average, 641 bytes a TU as differences; a bitmap of 943 ids is at most 118 bytes.
void writeAbsentIds(Writer& w, const std::vector<uint32_t>& ids) {
    bool distinct = true;
    size_t differences = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        const uint32_t delta = ids[i] - (i ? ids[i - 1] : 0);
        distinct = distinct && (i == 0 || delta > 0);
        differences += varintSize(delta);
    }
    const size_t bitmapBytes = ids.empty() ? 0 : (ids.back() - ids.front()) / 8 + 1;
    if (!distinct || ids.empty() ||
        varintSize(ids.front()) + varintSize(bitmapBytes) + bitmapBytes >= differences) {
        w.varint(uint64_t(ids.size()) << 1);
        for (size_t i = 0; i < ids.size(); ++i)
            w.varint(ids[i] - (i ? ids[i - 1] : 0));
        return;
    }
    w.varint(uint64_t(ids.size()) << 1 | 1);
    w.varint(ids.front());
    std::string bitmap(bitmapBytes, '\0');
    for (uint32_t id : ids)
        bitmap[(id - ids.front()) / 8] |= char(1 << ((id - ids.front()) % 8));
    w.string(bitmap);
}

bool readAbsentIds(Reader& r, size_t recordSize, std::vector<uint32_t>& ids) {
    const uint64_t head = r.varint();
    const uint64_t count = head >> 1;
    if (r.failed() || count > 8 * recordSize) // a bitmap holds 8 a byte
        return false;
    ids.reserve(count);
    if (!(head & 1)) {
        for (uint64_t i = 0, id = 0; i < count && !r.failed(); ++i) {
            const uint64_t delta = r.varint();
            if (delta > UINT32_MAX - id) // also keeps id from wrapping around
                return false;
            id += delta;
            ids.push_back(uint32_t(id));
        }
        return !r.failed();
    }
    const uint64_t first = r.varint();
    const std::string_view bitmap = r.string();
    if (r.failed() || first > UINT32_MAX || bitmap.size() > (UINT32_MAX - first) / 8 + 1)
        return false;
    for (size_t byte = 0; byte < bitmap.size(); ++byte)
        for (int bit = 0; bit < 8; ++bit)
            if (uint8_t(bitmap[byte]) >> bit & 1) {
                const uint64_t id = first + byte * 8 + uint64_t(bit);
                if (id > UINT32_MAX)
                    return false;
                ids.push_back(uint32_t(id));
            }
    return ids.size() == count;
}

} // namespace

std::string encodeTuRecord(const TuRecord& tu, const std::vector<std::string>& filePaths) {
    std::string out;
    Writer w(out);
    w.fixed64(tu.commandHash);
    w.byte(static_cast<uint8_t>(tu.status));
    w.varint(tu.errorCount);
    w.varint(tu.warningCount);
    w.varint(tu.parseMillis);
    w.string(tu.firstError);
    // In the order the TU read them (what filesDigest hashes), each as its zigzag difference
    // from the one before: ids are given as files are first seen, so a TU's tend to be near.
    w.varint(tu.fileIds.size());
    for (size_t i = 0; i < tu.fileIds.size(); ++i)
        w.svarint(int64_t(tu.fileIds[i]) - int64_t(i ? tu.fileIds[i - 1] : 0));
    w.fixed64(tu.filesDigest);
    writeAbsentIds(w, tu.absentIds);
    w.varint(tu.aliases.size());
    for (const TuRecord::Alias& alias : tu.aliases) {
        w.varint(alias.nameId);
        w.varint(alias.fileIndex);
    }
    w.varint(tu.namespaceStarts.size());
    std::unordered_map<std::string_view, size_t> fileIndex;
    if (!tu.namespaceStarts.empty())
        for (size_t i = 0; i < std::min(filePaths.size(), tu.fileIds.size()); ++i)
            fileIndex.emplace(filePaths[i], i); // the first, if one repeats
    for (const TuRecord::NamespaceStart& start : tu.namespaceStarts) {
        w.fixed64(start.usrHash);
        // 1 + the index of its file in fileIds, or 0 and the path.
        const auto index = fileIndex.find(start.path);
        w.varint(index != fileIndex.end() ? index->second + 1 : 0);
        if (index == fileIndex.end())
            w.string(start.path);
        w.varint(start.location.line);
        w.varint(start.location.column);
    }
    return out;
}

std::optional<TuRecord> decodeTuRecord(std::string_view bytes, const FilePathOf& pathOf) {
    Reader r(bytes);
    TuRecord tu;
    tu.commandHash = r.fixed64();
    uint8_t status = r.byte();
    if (status > static_cast<uint8_t>(TuStatus::Crashed))
        return std::nullopt;
    tu.status = static_cast<TuStatus>(status);
    tu.errorCount = uint32_t(r.varint());
    tu.warningCount = uint32_t(r.varint());
    tu.parseMillis = uint32_t(r.varint());
    tu.firstError = r.string();
    uint64_t n = r.varint();
    if (r.failed() || n > bytes.size())
        return std::nullopt;
    tu.fileIds.reserve(n);
    for (int64_t i = 0, id = 0; i < int64_t(n) && !r.failed(); ++i) {
        const int64_t delta = r.svarint();
        if (delta > int64_t(UINT32_MAX) || delta < -int64_t(UINT32_MAX) || id + delta < 0 ||
            id + delta > int64_t(UINT32_MAX))
            return std::nullopt;
        id += delta;
        tu.fileIds.push_back(uint32_t(id));
    }
    tu.filesDigest = r.fixed64();
    if (!readAbsentIds(r, bytes.size(), tu.absentIds))
        return std::nullopt;
    uint64_t k = r.varint();
    if (r.failed() || k > bytes.size())
        return std::nullopt;
    tu.aliases.reserve(k);
    for (uint64_t i = 0; i < k && !r.failed(); ++i) {
        const uint64_t nameId = r.varint();
        const uint64_t fileIndex = r.varint();
        if (nameId > UINT32_MAX || fileIndex >= tu.fileIds.size())
            return std::nullopt;
        tu.aliases.push_back({uint32_t(nameId), uint32_t(fileIndex)});
    }
    uint64_t starts = r.varint();
    if (r.failed() || starts > bytes.size())
        return std::nullopt;
    tu.namespaceStarts.reserve(starts);
    for (uint64_t i = 0; i < starts && !r.failed(); ++i) {
        TuRecord::NamespaceStart start;
        start.usrHash = r.fixed64();
        const uint64_t file = r.varint();
        if (file == 0)
            start.path = r.string();
        else if (file <= tu.fileIds.size() && pathOf)
            start.path = pathOf(tu.fileIds[file - 1]);
        else
            return std::nullopt;
        const uint64_t line = r.varint(), column = r.varint();
        if (line > UINT32_MAX || column > UINT32_MAX)
            return std::nullopt;
        start.location = {uint32_t(line), uint32_t(column)};
        tu.namespaceStarts.push_back(start);
    }
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return tu;
}

} // namespace symdex
