#include "store/symbol_blocks.h"

#include "store/encoding.h"
#include "store/zstd_frame.h"

#include <algorithm>
#include <stdexcept>

namespace symdex {

namespace {

/// A block larger than this once decompressed is refused as damaged (16 rows of signatures and
/// comments are a few KB).
constexpr size_t kMaxBlockBytes = 64u << 20;

// A row's USR as a block stores it (format 26): its bytes, except that what it repeats of the
// block's USRs before it and of its own qualified name is one byte each. USRs are printable
// (clang writes names, file names and type codes), so bytes below 0x20 are free for this; a USR
// that holds one anyway is stored after kLiteral, as it is.
constexpr uint8_t kLiteral = 0x00;
constexpr uint8_t kComponent = 0x01; ///< 0x01-0x08: the qualified name's last, second last, ...
constexpr uint8_t kComponents = 8;   ///< ... component (split at "::", empty ones left out)
constexpr uint8_t kEarlier = 0x10;   ///< 0x10-0x13: the USR 1-4 rows before, after its "c:"
constexpr uint8_t kEarliers = 4;
constexpr size_t kMinEarlier = 9;   ///< shorter repeats are left to zstd
constexpr size_t kMinComponent = 3; ///< likewise

bool isCode(char c) {
    return static_cast<uint8_t>(c) < 0x20;
}

/// The components of a qualified name, last first: `a::b<c::d>::e` gives e, d>, b<c (the split
/// need not follow C++, only be the same when coding and expanding).
void componentsOf(std::string_view qualified, std::vector<std::string_view>& out) {
    out.clear();
    while (!qualified.empty()) {
        const size_t cut = qualified.rfind("::");
        const std::string_view last =
            cut == std::string_view::npos ? qualified : qualified.substr(cut + 2);
        if (!last.empty())
            out.push_back(last);
        qualified = cut == std::string_view::npos ? std::string_view() : qualified.substr(0, cut);
    }
}

/// A row's fields around its USR: the bytes before the USR's length, the qualified name, the
/// USR, and the bytes after it (signature and comment). False if the row does not parse so far.
struct RowParts {
    std::string_view head, qualifiedName, usr, tail;
};

bool splitRow(std::string_view row, RowParts& parts) {
    Reader r(row);
    r.byte();
    r.byte();
    for (int i = 0; i < 6; ++i)
        r.varint();
    r.string();
    parts.qualifiedName = r.string();
    parts.head = row.substr(0, row.size() - r.rest().size());
    parts.usr = r.string();
    parts.tail = r.rest();
    return !r.failed();
}

/// Appends the USR `coded` stands for; false if it is not a coded USR of this row.
bool expandUsr(std::string_view coded, const std::vector<std::string_view>& components,
               const std::vector<std::string_view>& earlier, std::string& out) {
    if (!coded.empty() && coded[0] == char(kLiteral)) {
        out.append(coded.substr(1));
        return true;
    }
    for (char c : coded) {
        const uint8_t code = static_cast<uint8_t>(c);
        if (!isCode(c)) {
            out.push_back(c);
        } else if (code >= kComponent && code < kComponent + kComponents) {
            if (size_t(code - kComponent) >= components.size())
                return false;
            out.append(components[code - kComponent]);
        } else if (code >= kEarlier && code < kEarlier + kEarliers) {
            const size_t back = code - kEarlier;
            if (back >= earlier.size() || earlier[earlier.size() - 1 - back].size() < 2)
                return false;
            out.append(earlier[earlier.size() - 1 - back].substr(2));
        } else {
            return false;
        }
    }
    return true;
}

/// `usr` coded against its row's qualified name's components and the block's USRs before it.
std::string codeUsr(std::string_view usr, const std::vector<std::string_view>& components,
                    const std::vector<std::string_view>& earlier) {
    if (std::any_of(usr.begin(), usr.end(), isCode))
        return std::string(1, char(kLiteral)).append(usr);
    std::string coded(usr);
    // The longest of the last USRs that this one holds: a parameter's holds its function's.
    size_t best = 0, bestBack = 0;
    for (size_t back = 0; back < kEarliers && back < earlier.size(); ++back) {
        const std::string_view before = earlier[earlier.size() - 1 - back];
        if (before.size() >= kMinEarlier + 2 && before.size() - 2 > best &&
            coded.find(before.substr(2)) != std::string::npos) {
            best = before.size() - 2;
            bestBack = back;
        }
    }
    if (best > 0) {
        const std::string_view body = earlier[earlier.size() - 1 - bestBack].substr(2);
        coded.replace(coded.find(body), body.size(), 1, char(kEarlier + bestBack));
    }
    // Then each component it spells after an '@', longest first.
    std::vector<size_t> order;
    for (size_t i = 0; i < components.size() && i < kComponents; ++i)
        if (components[i].size() >= kMinComponent)
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return components[a].size() > components[b].size();
    });
    std::string needle;
    for (size_t i : order) {
        needle.assign(1, '@').append(components[i]);
        for (size_t at = coded.find(needle); at != std::string::npos;
             at = coded.find(needle, at + 2))
            coded.replace(at + 1, components[i].size(), 1, char(kComponent + i));
    }
    std::string back;
    if (!expandUsr(coded, components, earlier, back) || back != usr)
        return std::string(usr); // cannot happen; the literal is always right
    return coded;
}

/// The rows of a block, each after its varint length, with each USR coded (`coding`) or
/// expanded; nullopt if a row does not parse or a USR does not expand. `offsets` gets each row's
/// offset and size in the result.
std::optional<std::string> recodeRows(const std::vector<std::string_view>& rows, bool coding,
                                      std::vector<std::pair<size_t, size_t>>* offsets = nullptr) {
    std::string out, usr, length;
    Writer w(out);
    std::vector<std::string_view> components, earlier;
    std::vector<std::pair<size_t, size_t>> expanded; // expanding: each USR's place in `out`
    for (std::string_view row : rows) {
        RowParts parts;
        if (!splitRow(row, parts))
            return std::nullopt;
        componentsOf(parts.qualifiedName, components);
        usr.clear();
        if (coding) {
            usr = codeUsr(parts.usr, components, earlier);
            earlier.push_back(parts.usr); // in the caller's rows, which outlive this
        } else {
            earlier.clear(); // views into `out`, which grows below
            for (auto [at, size] : expanded)
                earlier.emplace_back(out.data() + at, size);
            if (!expandUsr(parts.usr, components, earlier, usr))
                return std::nullopt;
        }
        length.clear();
        Writer(length).varint(usr.size());
        const size_t rowSize = parts.head.size() + length.size() + usr.size() + parts.tail.size();
        w.varint(rowSize);
        if (offsets)
            offsets->emplace_back(out.size(), rowSize);
        out.append(parts.head).append(length);
        expanded.emplace_back(out.size(), usr.size());
        out.append(usr).append(parts.tail);
    }
    return out;
}

} // namespace

std::string encodeSymbolBlock(const std::vector<std::string_view>& rows, uint32_t firstLine,
                              const ZstdDictionary* dictionary) {
    std::optional<std::string> plain = recodeRows(rows, true);
    if (!plain)
        throw std::invalid_argument("encodeSymbolBlock: a row that is not an encoded symbol");
    std::string block;
    Writer w(block);
    w.varint(rows.size());
    w.varint(firstLine);
    appendCompressed(block, *plain, dictionary ? dictionary : &ZstdDictionary::builtInSymbols());
    return block;
}

std::optional<uint32_t> symbolBlockFirstLine(std::string_view block) {
    Reader r(block);
    r.varint();
    const uint64_t line = r.varint();
    if (r.failed() || line > UINT32_MAX)
        return std::nullopt;
    return uint32_t(line);
}

uint32_t symbolBlockDictionaryId(std::string_view block) {
    Reader header(block);
    header.varint();
    header.varint();
    return header.failed() ? 0 : frameDictionaryId(header.rest());
}

std::optional<std::string> SymbolBlock::decompressed(std::string_view block,
                                                     const ZstdDictionary* storeDictionary) {
    Reader header(block);
    const uint64_t count = header.varint();
    const uint64_t firstLine = header.varint();
    if (header.failed() || count == 0 || count > kSymbolsPerBlock || firstLine > UINT32_MAX)
        return std::nullopt;
    const ZstdDictionary& builtIn = ZstdDictionary::builtInSymbols();
    const uint32_t id = frameDictionaryId(header.rest());
    const ZstdDictionary* dictionary = id == builtIn.id() ? &builtIn
                                       : storeDictionary && id == storeDictionary->id()
                                           ? storeDictionary
                                           : nullptr;
    std::string plain;
    if (!dictionary || !decompress(header.rest(), plain, kMaxBlockBytes, dictionary))
        return std::nullopt;
    return plain;
}

std::optional<SymbolBlock> SymbolBlock::decode(std::string_view block,
                                               const ZstdDictionary* storeDictionary) {
    std::optional<std::string> plain = decompressed(block, storeDictionary);
    if (!plain)
        return std::nullopt;
    const uint64_t count = Reader(block).varint(); // decompressed() checked it
    std::vector<std::string_view> coded;
    Reader rows(*plain);
    for (uint64_t i = 0; i < count; ++i) {
        coded.push_back(rows.string());
        if (rows.failed())
            return std::nullopt;
    }
    if (!rows.atEnd())
        return std::nullopt;
    SymbolBlock out;
    std::optional<std::string> expanded = recodeRows(coded, false, &out.rows_);
    if (!expanded)
        return std::nullopt;
    out.bytes_ = std::move(*expanded);
    return out;
}

} // namespace symdex
