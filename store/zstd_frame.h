// Private to store/: the zstd frames blocks of declarations and of references are compressed
// into (symbol_blocks.h, ref_blocks.h). One compression and one decompression context per thread:
// creating one per call costs more than compressing a block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

typedef struct ZSTD_CDict_s ZSTD_CDict;
typedef struct ZSTD_DDict_s ZSTD_DDict;

namespace symdex {

/// A zstd dictionary, digested once for each direction (read-only: every thread's context shares
/// it). Its id is in every frame compressed against it, so a frame is decompressed only with the
/// dictionary it was compressed with, or refused.
class ZstdDictionary {
public:
    /// `bytes` in zstd's dictionary format; nullopt if they are not one (or have no id).
    static std::shared_ptr<const ZstdDictionary> fromBytes(std::string bytes);
    /// The dictionary built into symdex for blocks of declarations (store/symbol_dictionary.h).
    static const ZstdDictionary& builtInSymbols();
    ~ZstdDictionary();
    ZstdDictionary(const ZstdDictionary&) = delete;
    ZstdDictionary& operator=(const ZstdDictionary&) = delete;

    uint32_t id() const { return id_; }
    std::string_view bytes() const { return bytes_; }
    /// Digested for compression on first use: a process that only reads never pays for it
    /// (hashing every position of the dictionary, about a million instructions for 64 KiB).
    const ZSTD_CDict* forCompression() const;
    const ZSTD_DDict* forDecompression() const { return decompress_; }

private:
    /// `owned` may be empty: the bytes are then `bytes`, which live as long as the program.
    ZstdDictionary(std::string owned, std::string_view bytes);
    std::string owned_;
    std::string_view bytes_; ///< owned_, or the program's own bytes
    uint32_t id_ = 0;
    mutable std::once_flag compressOnce_;
    mutable ZSTD_CDict* compress_ = nullptr;
    ZSTD_DDict* decompress_ = nullptr;
};

/// Appends `plain` to `out` as one zstd frame (level 3, its content size in the header; with a
/// dictionary, its id too).
void appendCompressed(std::string& out, std::string_view plain,
                      const ZstdDictionary* dictionary = nullptr);

/// The id of the dictionary the frame `frame` was compressed against: 0 for none (or if it is not
/// a frame: decompress() refuses it).
uint32_t frameDictionaryId(std::string_view frame);

/// Decompresses the single frame `frame` into `out` (replacing it); false if it is not one, holds
/// more than `maxBytes`, or was compressed against another dictionary than `dictionary`.
bool decompress(std::string_view frame, std::string& out, size_t maxBytes,
                const ZstdDictionary* dictionary = nullptr);

/// A dictionary of `capacity` bytes trained on `samples` (zstd's trainer), or nullopt if zstd
/// finds too little in them to train on.
std::optional<std::string> trainDictionary(const std::vector<std::string>& samples,
                                           size_t capacity);

} // namespace symdex
