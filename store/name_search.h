// Names: the key every store indexes a declaration's name under, and how a pattern is matched
// against names (StoreSnapshot::findSymbols and resolveName live in name_search.cpp).
#pragma once

#include <string>
#include <string_view>

namespace symdex {

/// ASCII lower case (names are compared case-insensitively byte by byte).
std::string lowerAscii(std::string_view s);
/// The names-index key of a name: ASCII lower case, capped below LMDB's 511-byte key limit.
std::string nameKey(std::string_view name);
inline constexpr size_t kMaxNameKey = 400;

} // namespace symdex
