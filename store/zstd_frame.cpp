#include "store/zstd_frame.h"

#include "store/symbol_dictionary.h"

#include <memory>
#include <stdexcept>
#include <zstd.h>

namespace symdex {

namespace {

/// zstd's level 3 (its default): 4.2x on LevelDB's declarations in blocks of 16, where level 19
/// gains a few percent for ten times the time.
constexpr int kLevel = 3;

struct CctxFree {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_CCtx* compressor() {
    thread_local std::unique_ptr<ZSTD_CCtx, CctxFree> context(ZSTD_createCCtx());
    return context.get();
}
ZSTD_DCtx* decompressor() {
    thread_local std::unique_ptr<ZSTD_DCtx, DctxFree> context(ZSTD_createDCtx());
    return context.get();
}

/// The dictionary digested once for each direction; zstd's digested dictionaries are read-only,
/// shared by every thread's context.
const ZSTD_CDict* compressionDictionary() {
    static const std::unique_ptr<ZSTD_CDict, decltype(&ZSTD_freeCDict)> dictionary(
        ZSTD_createCDict(symbolDictionary().data(), symbolDictionary().size(), kLevel),
        &ZSTD_freeCDict);
    return dictionary.get();
}
const ZSTD_DDict* decompressionDictionary() {
    static const std::unique_ptr<ZSTD_DDict, decltype(&ZSTD_freeDDict)> dictionary(
        ZSTD_createDDict(symbolDictionary().data(), symbolDictionary().size()), &ZSTD_freeDDict);
    return dictionary.get();
}

} // namespace

void appendCompressed(std::string& out, std::string_view plain, ZstdDictionary dictionary) {
    const size_t header = out.size();
    out.resize(header + ZSTD_compressBound(plain.size()));
    const size_t written =
        dictionary == ZstdDictionary::Symbols
            ? ZSTD_compress_usingCDict(compressor(), out.data() + header, out.size() - header,
                                       plain.data(), plain.size(), compressionDictionary())
            : ZSTD_compressCCtx(compressor(), out.data() + header, out.size() - header,
                                plain.data(), plain.size(), kLevel);
    if (ZSTD_isError(written))
        throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(written));
    out.resize(header + written);
}

bool decompress(std::string_view frame, std::string& out, size_t maxBytes,
                ZstdDictionary dictionary) {
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > maxBytes)
        return false;
    // A frame names its dictionary: a block of another format is refused, not misread.
    const unsigned expected = dictionary == ZstdDictionary::Symbols
                                  ? ZSTD_getDictID_fromDDict(decompressionDictionary())
                                  : 0;
    if (ZSTD_getDictID_fromFrame(frame.data(), frame.size()) != expected)
        return false;
    out.resize(size);
    const size_t read =
        dictionary == ZstdDictionary::Symbols
            ? ZSTD_decompress_usingDDict(decompressor(), out.data(), size, frame.data(),
                                         frame.size(), decompressionDictionary())
            : ZSTD_decompressDCtx(decompressor(), out.data(), size, frame.data(), frame.size());
    return !ZSTD_isError(read) && read == size;
}

} // namespace symdex
