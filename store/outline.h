// A file's declarations as a tree (namespaces contain classes contain methods), nested by the
// containment of their extents. Used by `symdex symbols` and textDocument/documentSymbol.
#pragma once

#include "store/records.h"

#include <vector>

namespace symdex {

struct OutlineNode {
    Symbol symbol;
    std::vector<OutlineNode> children;
};

/// Nests `symbols` (any order) by extent; siblings come out in source order.
std::vector<OutlineNode> buildOutline(std::vector<Symbol> symbols);

} // namespace symdex
