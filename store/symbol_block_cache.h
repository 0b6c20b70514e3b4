// SymbolBlockCache: declaration blocks decompressed lately, kept for the next requests. A name
// search decompresses a block of 16 declarations for each answer (`SymbolBlock::decode`: 16% of
// findSymbols' instructions for names typed a letter at a time, name_search_bench at 300k
// names), and an editor's successive keystrokes ("fl", "flu", "flush") answer many of the same
// declarations.
//
// An entry is found by (file id, block) and used only when the block's compressed bytes in the
// reader's snapshot are the ones it was decoded from: a block a later commit rewrote is never
// answered from the old one, and an older snapshot never from a newer one, with no tie to
// transaction ids or compactions. Comparing a few hundred bytes costs a fraction of
// decompressing them.
#pragma once

#include "store/symbol_blocks.h"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace symdex {

class SymbolBlockCache {
public:
    explicit SymbolBlockCache(size_t capacity) : capacity_(capacity) {}

    /// The block decoded from exactly `bytes`, if kept.
    std::shared_ptr<const SymbolBlock> find(uint32_t file, uint32_t block, std::string_view bytes);
    /// Keeps `decoded` (of `bytes`), dropping the least recently used entry when full.
    void keep(uint32_t file, uint32_t block, std::string_view bytes,
              std::shared_ptr<const SymbolBlock> decoded);

private:
    struct Entry {
        uint64_t key;
        std::string bytes;
        std::shared_ptr<const SymbolBlock> decoded;
    };
    static uint64_t keyOf(uint32_t file, uint32_t block) { return uint64_t(file) << 32 | block; }

    const size_t capacity_;
    mutable std::mutex mu_;
    std::list<Entry> entries_; // Requires mu_; most recently used first
    std::unordered_map<uint64_t, std::list<Entry>::iterator> index_; // Requires mu_
};

} // namespace symdex
