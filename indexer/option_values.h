// The written forms of index options that symdex index, symdex bench and symdexd all accept
// (--index-priority, --tu-timeout). Apart from indexer.h so that what parses a command line
// links no libclang (symdex_indexer_base).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace symdex {

/// An --index-priority name: "low" -> true (IndexOptions::lowPriority), "normal" -> false;
/// nullopt for anything else.
std::optional<bool> parseIndexPriority(std::string_view name);

/// A --tu-timeout value: whole seconds, 0 for no limit, at most a day; nullopt otherwise.
std::optional<std::chrono::milliseconds> parseTuTimeout(std::string_view seconds);

} // namespace symdex
