// The comment that documents a declaration, read from the source text itself: the `//` lines or
// the `/* */` block right above it (no blank line between), or a trailing `///<` comment on its
// line. Read from the text rather than from clang's comment attachment, which depends on what
// else the parse session parsed before (1 and 2 threads gave different comments on LevelDB):
// the same text always gives the same comment.
#pragma once

#include "store/records.h"

#include <string>
#include <string_view>
#include <vector>

namespace symdex {

/// The offsets where each line of a file's text starts (line 1 at offset 0).
std::vector<size_t> lineStarts(std::string_view text);

/// The first paragraph of the comment documenting the declaration whose extent begins on
/// `firstLine` and whose name is on `nameLine` (1-based), without comment markers, its lines
/// joined by spaces; "" when there is none.
std::string docComment(std::string_view text, const std::vector<size_t>& starts, uint32_t firstLine,
                       uint32_t nameLine);

} // namespace symdex
