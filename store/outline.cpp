#include "store/outline.h"

#include <algorithm>

namespace symdex {

namespace {

bool contains(const Range& outer, const Range& inner) {
    return outer.begin <= inner.begin && inner.end <= outer.end && !(outer == inner);
}

} // namespace

std::vector<OutlineNode> buildOutline(std::vector<Symbol> symbols) {
    std::erase_if(symbols, [](const Symbol& s) { return s.isLocal(); }); // as clangd's outline
    // Outer extents first: by start, then by end descending.
    std::stable_sort(symbols.begin(), symbols.end(), [](const Symbol& a, const Symbol& b) {
        if (a.extent.begin != b.extent.begin)
            return a.extent.begin < b.extent.begin;
        return b.extent.end < a.extent.end;
    });
    std::vector<OutlineNode> roots;
    // The chain of open ancestors of the next symbol.
    std::vector<OutlineNode*> stack;
    for (Symbol& symbol : symbols) {
        while (!stack.empty() && !contains(stack.back()->symbol.extent, symbol.extent))
            stack.pop_back();
        std::vector<OutlineNode>& siblings = stack.empty() ? roots : stack.back()->children;
        siblings.push_back(OutlineNode{std::move(symbol), {}});
        // No pointer on the stack is invalidated by this push_back: after the pops the stack holds
        // only the parent's chain, and none of the parent's children.
        stack.push_back(&siblings.back());
    }
    return roots;
}

} // namespace symdex
