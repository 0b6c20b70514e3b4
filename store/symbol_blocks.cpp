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
/// Coded rows are at most a few bytes a row longer than expanded ones (a string kept as it is
/// after kLiteral, and its length's varint).
constexpr size_t kMaxCodedBytes = kMaxBlockBytes + 1024;

// A row's qualified name, USR and signature as a block stores them (format 26): their bytes,
// except that what they repeat of the row's name, of its qualified name, and of the rows before
// it is one byte each (docs/store-format.md). They are printable (clang writes names, file
// names, type codes and types), so bytes below 0x20 are free for this; a field that holds one
// anyway is stored after kLiteral, as it is.
constexpr uint8_t kLiteral = 0x00;
constexpr uint8_t kName = 0x01;      ///< qualified name, signature: the row's name
constexpr uint8_t kComponent = 0x01; ///< USR: 0x01-0x08, the qualified name's last, second
constexpr uint8_t kComponents = 8;   ///< last, ... component (split at "::", empty ones left out)
constexpr uint8_t kEarlier = 0x10;   ///< USR: 0x10-0x13, the USR 1-4 rows before, after its "c:";
                                     ///< qualified name: the scope of the one 1-4 rows before
constexpr uint8_t kEarlierWhole = 0x14; ///< qualified name: 0x14-0x17, all of the one 1-4 before
constexpr uint8_t kEarliers = 4;
constexpr size_t kMinEarlier = 9;   ///< a USR's shorter repeats are left to zstd
constexpr size_t kMinComponent = 3; ///< likewise
constexpr size_t kMinName = 2;      ///< likewise, in a signature

bool isCode(char c) {
    return static_cast<uint8_t>(c) < 0x20;
}

/// The components of a qualified name, last first: `a::b<c::d>::e` gives e, d>, b<c (the split
/// need not follow C++, only be the same when coding and expanding).
void componentsOf(std::string_view qualified, std::vector<std::string_view>& out) {
    out.clear();
    while (!qualified.empty() && out.size() < kComponents) {
        const size_t cut = qualified.rfind("::");
        const std::string_view last =
            cut == std::string_view::npos ? qualified : qualified.substr(cut + 2);
        if (!last.empty())
            out.push_back(last);
        qualified = cut == std::string_view::npos ? std::string_view() : qualified.substr(0, cut);
    }
}

/// A qualified name without its last component (`a::b` of `a::b::c`; empty for `c`).
std::string_view scopeOf(std::string_view qualified) {
    const size_t cut = qualified.rfind("::");
    return cut == std::string_view::npos ? std::string_view() : qualified.substr(0, cut);
}

/// The `back`-th value before the last of `values` (0: the last); nullopt past the first.
std::optional<std::string_view> before(const std::vector<std::string_view>& values, size_t back) {
    if (back >= values.size())
        return std::nullopt;
    return values[values.size() - 1 - back];
}

/// What a row's coded fields may refer to.
struct Context {
    std::string_view name;                        ///< the row's (stored as it is)
    std::vector<std::string_view> components;     ///< of the row's qualified name
    std::vector<std::string_view> qualifiedNames; ///< of the rows before, expanded, latest last
    std::vector<std::string_view> scopes;         ///< scopeOf() each of them
    std::vector<std::string_view> usrs;           ///< likewise

    void addRow(std::string_view qualifiedName, std::string_view usr) {
        qualifiedNames.push_back(qualifiedName);
        scopes.push_back(scopeOf(qualifiedName));
        usrs.push_back(usr);
    }

    std::optional<std::string_view> inQualifiedName(uint8_t code) const {
        if (code == kName)
            return name;
        if (code >= kEarlier && code < kEarlier + kEarliers)
            return before(scopes, code - kEarlier);
        if (code >= kEarlierWhole && code < kEarlierWhole + kEarliers)
            return before(qualifiedNames, code - kEarlierWhole);
        return std::nullopt;
    }
    std::optional<std::string_view> inUsr(uint8_t code) const {
        if (code >= kComponent && code < kComponent + kComponents) {
            if (size_t(code - kComponent) >= components.size())
                return std::nullopt;
            return components[code - kComponent];
        }
        if (code >= kEarlier && code < kEarlier + kEarliers) {
            const auto earlier = before(usrs, code - kEarlier);
            if (!earlier || earlier->size() < 2)
                return std::nullopt;
            return earlier->substr(2);
        }
        return std::nullopt;
    }
    std::optional<std::string_view> inSignature(uint8_t code) const {
        return code == kName ? std::optional(name) : std::nullopt;
    }
};

/// Appends the field `coded` stands for, each code read by `meaning`; false if one means
/// nothing, or if `out` would grow past `limit` bytes (a damaged block's codes can each repeat
/// the whole string before: 16 rows of them would double it hundreds of times).
template <typename Meaning>
bool expand(std::string_view coded, const Meaning& meaning, std::string& out,
            size_t limit = kMaxBlockBytes) {
    if (!coded.empty() && coded[0] == char(kLiteral)) {
        if (out.size() + coded.size() - 1 > limit)
            return false;
        out.append(coded.substr(1));
        return true;
    }
    while (!coded.empty()) {
        size_t run = 0;
        while (run < coded.size() && !isCode(coded[run]))
            ++run;
        std::string_view part = coded.substr(0, run);
        if (run == 0) {
            const std::optional<std::string_view> meant = meaning(uint8_t(coded[0]));
            if (!meant)
                return false;
            part = *meant;
            coded.remove_prefix(1);
        } else {
            coded.remove_prefix(run);
        }
        if (out.size() + part.size() > limit)
            return false;
        out.append(part);
    }
    return true;
}

/// `coded` if it expands to `field`, else the field as it is: the coders below cannot make one
/// that does not, but what a block stores is checked, not assumed.
template <typename Meaning>
std::string checked(std::string coded, std::string_view field, const Meaning& meaning) {
    std::string back;
    if (expand(coded, meaning, back) && back == field)
        return coded;
    return std::string(field);
}

/// Replaces the first `part` in `coded` by `code`, if `part` is there; true if it was.
bool replaceFirst(std::string& coded, std::string_view part, uint8_t code) {
    const size_t at = coded.find(part);
    if (at == std::string::npos)
        return false;
    coded.replace(at, part.size(), 1, char(code));
    return true;
}

std::string literal(std::string_view field) {
    return std::string(1, char(kLiteral)).append(field);
}

/// A qualified name: the longest scope or whole qualified name of the rows before that starts
/// it, then the row's name where it ends it.
std::string codeQualifiedName(std::string_view qualified, const Context& context) {
    if (std::any_of(qualified.begin(), qualified.end(), isCode))
        return literal(qualified);
    std::string_view prefix;
    uint8_t prefixCode = 0;
    for (size_t back = 0; back < kEarliers; ++back) {
        const auto earlier = before(context.qualifiedNames, back);
        if (!earlier)
            break;
        for (auto [candidate, code] : {std::pair(*earlier, uint8_t(kEarlierWhole + back)),
                                       std::pair(scopeOf(*earlier), uint8_t(kEarlier + back))})
            if (candidate.size() > prefix.size() && qualified.starts_with(candidate)) {
                prefix = candidate;
                prefixCode = code;
            }
    }
    std::string coded;
    std::string_view rest = qualified;
    if (!prefix.empty()) {
        coded.push_back(char(prefixCode));
        rest.remove_prefix(prefix.size());
    }
    if (!context.name.empty() && rest.ends_with(context.name)) {
        coded.append(rest.substr(0, rest.size() - context.name.size())).push_back(char(kName));
    } else {
        coded.append(rest);
    }
    return checked(std::move(coded), qualified,
                   [&](uint8_t code) { return context.inQualifiedName(code); });
}

/// A USR: the longest of the USRs before it that it holds (a parameter's holds its
/// function's), then each component of the qualified name it spells after an '@', longest first.
std::string codeUsr(std::string_view usr, const Context& context) {
    if (std::any_of(usr.begin(), usr.end(), isCode))
        return literal(usr);
    std::string coded(usr);
    std::string_view best;
    uint8_t bestCode = 0;
    for (size_t back = 0; back < kEarliers; ++back) {
        const auto earlier = before(context.usrs, back);
        if (!earlier)
            break;
        if (earlier->size() >= kMinEarlier + 2 && earlier->size() - 2 > best.size() &&
            coded.find(earlier->substr(2)) != std::string::npos) {
            best = earlier->substr(2);
            bestCode = uint8_t(kEarlier + back);
        }
    }
    if (!best.empty())
        replaceFirst(coded, best, bestCode);
    const std::vector<std::string_view>& components = context.components;
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
    return checked(std::move(coded), usr, [&](uint8_t code) { return context.inUsr(code); });
}

/// A signature: the row's name where it first spells it.
std::string codeSignature(std::string_view signature, const Context& context) {
    if (std::any_of(signature.begin(), signature.end(), isCode))
        return literal(signature);
    std::string coded(signature);
    if (context.name.size() >= kMinName)
        replaceFirst(coded, context.name, kName);
    return checked(std::move(coded), signature,
                   [&](uint8_t code) { return context.inSignature(code); });
}

/// A row's fields: the bytes before its name (kind, flags, place), its strings, and the bytes
/// after the signature (the comment). False if the row does not parse so far.
struct RowParts {
    std::string_view head, name, qualifiedName, usr, signature, tail;
};

bool splitRow(std::string_view row, RowParts& parts) {
    Reader r(row);
    r.byte();
    r.byte();
    for (int i = 0; i < 6; ++i)
        r.varint();
    parts.head = row.substr(0, row.size() - r.rest().size());
    parts.name = r.string();
    parts.qualifiedName = r.string();
    parts.usr = r.string();
    parts.signature = r.string();
    parts.tail = r.rest();
    return !r.failed();
}

/// The rows of a block, each after its varint length, with their fields coded (what a block
/// compresses); nullopt if a row does not parse or a field cannot be coded.
std::optional<std::string> codeRows(const std::vector<std::string_view>& rows) {
    std::string out, row;
    Writer w(out);
    Context context;
    for (std::string_view in : rows) {
        RowParts parts;
        if (!splitRow(in, parts))
            return std::nullopt;
        context.name = parts.name;
        const std::string qualifiedName = codeQualifiedName(parts.qualifiedName, context);
        componentsOf(parts.qualifiedName, context.components);
        const std::string usr = codeUsr(parts.usr, context);
        const std::string signature = codeSignature(parts.signature, context);
        row.assign(parts.head);
        Writer fields(row);
        fields.string(parts.name);
        fields.string(qualifiedName);
        fields.string(usr);
        fields.string(signature);
        row.append(parts.tail);
        w.varint(row.size());
        out.append(row);
        context.addRow(parts.qualifiedName, parts.usr); // in the caller's rows, which outlive this
    }
    return out;
}

/// Expands coded rows (a block's, decompressed) into `out`, one after another, their offsets and
/// sizes into `offsets`; false if a row does not parse or a field does not expand, or if `out`
/// would pass kMaxBlockBytes.
///
/// A search answer decodes a block for each declaration it shows, so this is the cost of
/// workspace/symbol's answers: each field expands into scratch kept by the thread, and the
/// context of the rows before is kept as views into `out`, rebuilt only when `out` moves.
bool expandRows(const std::vector<std::string_view>& rows, std::string& out,
                std::vector<std::pair<size_t, size_t>>& offsets) {
    struct Scratch {
        std::string qualifiedName, usr, signature;
        Context context;
        /// Where each row's expanded qualified name and USR are in `out`.
        std::vector<std::pair<size_t, size_t>> qualifiedAt, usrAt;
    };
    thread_local Scratch scratch;
    Context& context = scratch.context;
    context.qualifiedNames.clear();
    context.scopes.clear();
    context.usrs.clear();
    scratch.qualifiedAt.clear();
    scratch.usrAt.clear();
    size_t in = 0;
    for (std::string_view r : rows)
        in += r.size();
    out.reserve(std::min(kMaxBlockBytes, 2 * in));
    offsets.reserve(rows.size());
    const char* base = out.data();
    for (std::string_view row : rows) {
        RowParts parts;
        if (!splitRow(row, parts))
            return false;
        context.name = parts.name;
        std::string& qualifiedName = scratch.qualifiedName;
        std::string& usr = scratch.usr;
        std::string& signature = scratch.signature;
        qualifiedName.clear();
        usr.clear();
        signature.clear();
        // What the expanded strings may take of the block's bytes.
        size_t used = out.size() + parts.head.size() + parts.name.size() + parts.tail.size();
        const auto budget = [&] { return used > kMaxBlockBytes ? 0 : kMaxBlockBytes - used; };
        if (!expand(
                parts.qualifiedName, [&](uint8_t code) { return context.inQualifiedName(code); },
                qualifiedName, budget()))
            return false;
        used += qualifiedName.size();
        // The components only where the USR refers to one (most USRs do not).
        bool componentsKnown = false;
        const auto inUsr = [&](uint8_t code) {
            if (!componentsKnown) {
                componentsOf(qualifiedName, context.components);
                componentsKnown = true;
            }
            return context.inUsr(code);
        };
        if (!expand(parts.usr, inUsr, usr, budget()))
            return false;
        used += usr.size();
        if (!expand(
                parts.signature, [&](uint8_t code) { return context.inSignature(code); }, signature,
                budget()))
            return false;
        const size_t start = out.size();
        out.append(parts.head);
        Writer fields(out);
        fields.string(parts.name);
        fields.string(qualifiedName);
        scratch.qualifiedAt.emplace_back(out.size() - qualifiedName.size(), qualifiedName.size());
        fields.string(usr);
        scratch.usrAt.emplace_back(out.size() - usr.size(), usr.size());
        fields.string(signature);
        out.append(parts.tail);
        if (out.size() > kMaxBlockBytes)
            return false;
        offsets.emplace_back(start, out.size() - start);
        // The rows before, as views into `out`: all of them again if it moved.
        const auto view = [&](std::pair<size_t, size_t> at) {
            return std::string_view(out.data() + at.first, at.second);
        };
        if (out.data() != base) {
            base = out.data();
            context.qualifiedNames.clear();
            context.scopes.clear();
            context.usrs.clear();
            for (size_t i = 0; i < scratch.qualifiedAt.size(); ++i)
                context.addRow(view(scratch.qualifiedAt[i]), view(scratch.usrAt[i]));
        } else {
            context.addRow(view(scratch.qualifiedAt.back()), view(scratch.usrAt.back()));
        }
    }
    return true;
}

} // namespace

std::string encodeSymbolBlock(const std::vector<std::string_view>& rows, uint32_t firstLine,
                              const ZstdDictionary* dictionary) {
    std::optional<std::string> plain = codeRows(rows);
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

std::optional<std::string> recompressSymbolBlock(std::string_view block,
                                                 const ZstdDictionary& storeDictionary) {
    Reader header(block);
    const uint64_t count = header.varint();
    const uint64_t firstLine = header.varint();
    std::string plain;
    if (header.failed() ||
        !decompress(header.rest(), plain, kMaxCodedBytes, &ZstdDictionary::builtInSymbols()))
        return std::nullopt;
    std::string out;
    Writer w(out);
    w.varint(count);
    w.varint(firstLine);
    appendCompressed(out, plain, &storeDictionary);
    return out;
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
    if (!dictionary || !decompress(header.rest(), plain, kMaxCodedBytes, dictionary))
        return std::nullopt;
    return plain;
}

std::optional<SymbolBlock> SymbolBlock::decode(std::string_view block,
                                               const ZstdDictionary* storeDictionary, size_t rows) {
    std::optional<std::string> plain = decompressed(block, storeDictionary);
    if (!plain)
        return std::nullopt;
    const uint64_t count = Reader(block).varint(); // decompressed() checked it
    std::vector<std::string_view> coded;
    coded.reserve(count);
    Reader reader(*plain);
    for (uint64_t i = 0; i < count; ++i) {
        coded.push_back(reader.string());
        if (reader.failed())
            return std::nullopt;
    }
    if (!reader.atEnd())
        return std::nullopt;
    // The rows after the ones asked for are framed (their lengths checked above), not parsed or
    // expanded.
    coded.resize(std::min<size_t>(coded.size(), std::max<size_t>(rows, 1)));
    SymbolBlock out;
    out.count_ = count;
    if (!expandRows(coded, out.bytes_, out.rows_))
        return std::nullopt;
    return out;
}

} // namespace symdex
