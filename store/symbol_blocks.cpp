#include "store/symbol_blocks.h"

#include "store/encoding.h"
#include "store/zstd_frame.h"

namespace symdex {

namespace {

/// A block larger than this once decompressed is refused as damaged (16 rows of signatures and
/// comments are a few KB).
constexpr size_t kMaxBlockBytes = 64u << 20;

} // namespace

std::string encodeSymbolBlock(const std::vector<std::string_view>& rows, uint32_t firstLine) {
    std::string plain;
    Writer rowsOut(plain);
    for (std::string_view row : rows)
        rowsOut.string(row);
    std::string block;
    Writer w(block);
    w.varint(rows.size());
    w.varint(firstLine);
    appendCompressed(block, plain, ZstdDictionary::Symbols);
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

std::optional<SymbolBlock> SymbolBlock::decode(std::string_view block) {
    Reader header(block);
    const uint64_t count = header.varint();
    const uint64_t firstLine = header.varint();
    if (header.failed() || count == 0 || count > kSymbolsPerBlock || firstLine > UINT32_MAX)
        return std::nullopt;
    SymbolBlock out;
    if (!decompress(header.rest(), out.bytes_, kMaxBlockBytes, ZstdDictionary::Symbols))
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
