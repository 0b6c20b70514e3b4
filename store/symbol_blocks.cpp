#include "store/symbol_blocks.h"

#include "store/encoding.h"
#include "store/zstd_frame.h"

namespace symdex {

namespace {

/// A block larger than this once decompressed is refused as damaged (16 rows of signatures and
/// comments are a few KB).
constexpr size_t kMaxBlockBytes = 64u << 20;

} // namespace

std::string encodeSymbolBlock(const std::vector<std::string_view>& rows, uint32_t firstLine,
                              const ZstdDictionary* dictionary) {
    std::string plain;
    Writer rowsOut(plain);
    for (std::string_view row : rows)
        rowsOut.string(row);
    std::string block;
    Writer w(block);
    w.varint(rows.size());
    w.varint(firstLine);
    appendCompressed(block, plain, dictionary ? dictionary : &ZstdDictionary::builtInSymbols());
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

std::optional<SymbolBlock> SymbolBlock::decode(std::string_view block,
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
    SymbolBlock out;
    if (!dictionary || !decompress(header.rest(), out.bytes_, kMaxBlockBytes, dictionary))
        return std::nullopt;
    Reader rows(out.bytes_);
    for (uint64_t i = 0; i < count; ++i) {
        std::string_view row = rows.string();
        if (rows.failed())
            return std::nullopt;
        out.rows_.emplace_back(size_t(row.data() - out.bytes_.data()), row.size());
    }
    if (!rows.atEnd())
        return std::nullopt;
    return out;
}

} // namespace symdex
