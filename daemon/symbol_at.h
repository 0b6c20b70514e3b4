// Which symbol the cursor is on: the question behind textDocument/definition, declaration and
// references. The store keeps where each declaration and reference starts; a name spans its
// length from there.
#pragma once

#include "store/records.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex::daemon {

struct CursorTarget {
    uint64_t usrHash = 0;
    Position start;      ///< where the occurrence under the cursor starts
    uint32_t length = 0; ///< its length in bytes
    bool isDeclaration = false;
};

/// The unqualified name of a symbol, for the length of a reference to it; nullopt if unknown.
using NameLookup = std::function<std::optional<std::string>(uint64_t usrHash)>;

/// The declaration or reference of a file (`symbols`, `references`) whose name covers `cursor`
/// (1-based line, byte column). A reference's length is its symbol's name length (`nameOf`),
/// or, when the name is unknown, the identifier spelled at its start in `lineText` (the
/// cursor's line). A name covers the columns [start, start + length); when no name does, the
/// cursor just past a name's end counts (an editor's cursor after a word). Among several, the
/// narrowest wins, and a declaration wins a tie with a reference (the name of a constructor is
/// also a reference to its class). Right after a `(` where no name is, the name just before
/// the parenthesis (a call's callee, as clangd answers on a literal argument).
std::optional<CursorTarget> symbolAt(const std::vector<Symbol>& symbols,
                                     const std::vector<Reference>& references, Position cursor,
                                     const NameLookup& nameOf, std::string_view lineText);

/// Where the cursor is taken as on a call's `(` when it is right after it: the parenthesis's
/// position, if the byte before the cursor in `line` is `(`; nullopt otherwise.
std::optional<Position> onParenthesisBefore(std::string_view line, Position cursor);

/// The length of the identifier (letters, digits, '_', '~' first) starting at byte offset
/// `offset` of `line`; 0 if none starts there.
uint32_t identifierLength(std::string_view line, uint32_t offset);

} // namespace symdex::daemon
