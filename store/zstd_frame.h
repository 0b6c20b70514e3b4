// Private to store/: the zstd frames blocks of declarations and of references are compressed
// into (symbol_blocks.h, ref_blocks.h). One compression and one decompression context per thread:
// creating one per call costs more than compressing a block.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace symdex {

/// What a frame is compressed against: nothing, or the built-in dictionary of declaration blocks
/// (store/symbol_dictionary.h).
enum class ZstdDictionary { None, Symbols };

/// Appends `plain` to `out` as one zstd frame (level 3, its content size in the header; with a
/// dictionary, its id too).
void appendCompressed(std::string& out, std::string_view plain,
                      ZstdDictionary dictionary = ZstdDictionary::None);

/// Decompresses the single frame `frame` into `out` (replacing it); false if it is not one, holds
/// more than `maxBytes`, or was compressed against another dictionary than `dictionary`.
bool decompress(std::string_view frame, std::string& out, size_t maxBytes,
                ZstdDictionary dictionary = ZstdDictionary::None);

} // namespace symdex
