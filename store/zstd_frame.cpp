#include "store/zstd_frame.h"

#include "store/symbol_dictionary.h"

#include <stdexcept>
#include <zdict.h>
#define ZSTD_STATIC_LINKING_ONLY // ZSTD_createCDict_advanced, ZSTD_getCParams
#include <zstd.h>

namespace symdex {

namespace {

/// zstd's level 6. LevelDB's 2,479 declaration blocks (4.27 MB as coded, against the built-in
/// dictionary; `zstd -b<L> -D store/symbol_dictionary.zdict` over bench/symbol_block_samples'
/// files): level 3 makes 1.271 MB at 155 MB/s, 6 1.177 MB at 44 MB/s, 9 1.163 MB at 24 MB/s, 19
/// 1.129 MB at 3 MB/s; each decompresses at 400-450 MB/s. Level 6 took LevelDB's store from
/// 3.93 to 3.81 MB and the 300k-name tree's from 64.4 to 63.2 MB (references too) for about
/// 0.5% of a cold index's CPU time (docs/measurements.md).
constexpr int kLevel = 6;
/// A dictionary's tables sized for frames of about this size (a block of declarations is a few
/// KB; reference blocks use no dictionary, and zstd sizes their tables by each frame's size).
/// Made for frames of unknown size, as ZSTD_createCDict makes them, level 6's tables follow
/// zstd's parameters for large inputs (megabytes), which it copies or attaches for each small
/// frame. The two were not timed against each other: at level 9 they gave the same LevelDB store.
constexpr size_t kTypicalFrameBytes = 8 << 10;

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

} // namespace

ZstdDictionary::ZstdDictionary(std::string owned, std::string_view bytes)
    : owned_(std::move(owned)), bytes_(owned_.empty() ? bytes : std::string_view(owned_)) {
    id_ = ZDICT_getDictID(bytes_.data(), bytes_.size());
    if (id_ == 0)
        return;
    // By reference: bytes_ outlives the digest (the destructor frees it first); a copy was page
    // faults at every query command's start (4 of symdex def's ~410), as was a copy of the
    // built-in dictionary's bytes (8).
    decompress_ = ZSTD_createDDict_byReference(bytes_.data(), bytes_.size());
}

const ZSTD_CDict* ZstdDictionary::forCompression() const {
    std::call_once(compressOnce_, [this] {
        compress_ = ZSTD_createCDict_advanced(
            bytes_.data(), bytes_.size(), ZSTD_dlm_byRef, ZSTD_dct_auto,
            ZSTD_getCParams(kLevel, kTypicalFrameBytes, bytes_.size()), ZSTD_defaultCMem);
        if (!compress_)
            throw std::runtime_error("zstd: cannot digest a dictionary for compression");
    });
    return compress_;
}

ZstdDictionary::~ZstdDictionary() {
    ZSTD_freeCDict(compress_);
    ZSTD_freeDDict(decompress_);
}

std::shared_ptr<const ZstdDictionary> ZstdDictionary::fromBytes(std::string bytes) {
    std::shared_ptr<const ZstdDictionary> dictionary(new ZstdDictionary(std::move(bytes), {}));
    if (dictionary->id_ == 0 || !dictionary->decompress_)
        return nullptr;
    return dictionary;
}

const ZstdDictionary& ZstdDictionary::builtInSymbols() {
    // The program's bytes, not a copy.
    static const ZstdDictionary dictionary({}, symbolDictionary());
    if (dictionary.id_ == 0 || !dictionary.decompress_)
        throw std::runtime_error("zstd: the built-in dictionary of declarations is not one");
    return dictionary;
}

void appendCompressed(std::string& out, std::string_view plain, const ZstdDictionary* dictionary) {
    const size_t header = out.size();
    out.resize(header + ZSTD_compressBound(plain.size()));
    const size_t written =
        dictionary
            ? ZSTD_compress_usingCDict(compressor(), out.data() + header, out.size() - header,
                                       plain.data(), plain.size(), dictionary->forCompression())
            : ZSTD_compressCCtx(compressor(), out.data() + header, out.size() - header,
                                plain.data(), plain.size(), kLevel);
    if (ZSTD_isError(written))
        throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(written));
    out.resize(header + written);
}

uint32_t frameDictionaryId(std::string_view frame) {
    return ZSTD_getDictID_fromFrame(frame.data(), frame.size());
}

bool decompress(std::string_view frame, std::string& out, size_t maxBytes,
                const ZstdDictionary* dictionary) {
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > maxBytes)
        return false;
    // A frame names its dictionary: a block of another format or store is refused, not misread.
    if (frameDictionaryId(frame) != (dictionary ? dictionary->id() : 0))
        return false;
    out.resize(size);
    const size_t read =
        dictionary
            ? ZSTD_decompress_usingDDict(decompressor(), out.data(), size, frame.data(),
                                         frame.size(), dictionary->forDecompression())
            : ZSTD_decompressDCtx(decompressor(), out.data(), size, frame.data(), frame.size());
    return !ZSTD_isError(read) && read == size;
}

std::optional<std::string> trainDictionary(const std::vector<std::string>& samples,
                                           size_t capacity) {
    std::string joined;
    std::vector<size_t> sizes;
    for (const std::string& sample : samples) {
        joined += sample;
        sizes.push_back(sample.size());
    }
    // zstd's default trainer (a search over the fast trainer's segment size, 0.2 s on 2 MiB).
    // Calling the fast trainer with fixed parameters (0.03 s) made ThreadSanitizer's runtime
    // fail to map shadow memory in shards_test under ctest (twice in CI, once by hand).
    std::string dictionary(capacity, '\0');
    const size_t size = ZDICT_trainFromBuffer(dictionary.data(), dictionary.size(), joined.data(),
                                              sizes.data(), unsigned(sizes.size()));
    if (ZDICT_isError(size))
        return std::nullopt;
    dictionary.resize(size);
    return dictionary;
}

} // namespace symdex
