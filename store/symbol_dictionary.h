// Private to store/: the zstd dictionary blocks of declarations are compressed with
// (store/symbol_dictionary.zdict, trained by scripts/train-symbol-dictionary.sh on LevelDB's and
// fmtlib's declarations; built into the binary by store/CMakeLists.txt). One dictionary for every
// store: a block of 16 declarations is too small to teach zstd the patterns of USRs, qualified
// names and signatures, which the dictionary holds ready, with its entropy tables.
#pragma once

#include <string_view>

namespace symdex {

/// The dictionary's bytes (zstd's format, with its dictionary id).
std::string_view symbolDictionary();

} // namespace symdex
