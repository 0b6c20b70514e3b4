#include "store/symbol_blocks.h"

#include "store/encoding.h"

#include <memory>
#include <stdexcept>
#include <zstd.h>

namespace symdex {

namespace {

/// zstd's level 3 (its default): 4.2x on LevelDB's declarations in blocks of 16, where level 19
/// gains a few percent for ten times the time.
constexpr int kLevel = 3;
/// A block larger than this once decompressed is refused as damaged (16 rows of signatures and
/// comments are a few KB).
constexpr unsigned long long kMaxBlockBytes = 64u << 20;

struct CctxFree {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

/// One context per thread: creating one per call costs more than compressing a block.
ZSTD_CCtx* compressor() {
    thread_local std::unique_ptr<ZSTD_CCtx, CctxFree> context(ZSTD_createCCtx());
    return context.get();
}
ZSTD_DCtx* decompressor() {
    thread_local std::unique_ptr<ZSTD_DCtx, DctxFree> context(ZSTD_createDCtx());
    return context.get();
}

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
    const size_t header = block.size();
    block.resize(header + ZSTD_compressBound(plain.size()));
    const size_t written =
        ZSTD_compressCCtx(compressor(), block.data() + header, block.size() - header, plain.data(),
                          plain.size(), kLevel);
    if (ZSTD_isError(written))
        throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(written));
    block.resize(header + written);
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
    const std::string_view frame = header.rest();
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxBlockBytes)
        return std::nullopt;
    SymbolBlock out;
    out.bytes_.resize(size);
    const size_t read =
        ZSTD_decompressDCtx(decompressor(), out.bytes_.data(), size, frame.data(), frame.size());
    if (ZSTD_isError(read) || read != size)
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
