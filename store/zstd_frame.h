// Private to store/: the zstd frames blocks of declarations and of references are compressed
// into (symbol_blocks.h, ref_blocks.h). One compression and one decompression context per thread:
// creating one per call costs more than compressing a block.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace symdex {

/// Appends `plain` to `out` as one zstd frame (level 3, its content size in the header).
void appendCompressed(std::string& out, std::string_view plain);

/// Decompresses the single frame `frame` into `out` (replacing it); false if it is not one, or
/// holds more than `maxBytes`.
bool decompress(std::string_view frame, std::string& out, size_t maxBytes);

} // namespace symdex
