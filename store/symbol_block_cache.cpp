#include "store/symbol_block_cache.h"

namespace symdex {

std::shared_ptr<const SymbolBlock> SymbolBlockCache::find(uint32_t file, uint32_t block,
                                                          std::string_view bytes) {
    std::lock_guard lock(mu_);
    auto it = index_.find(keyOf(file, block));
    if (it == index_.end() || it->second->bytes != bytes)
        return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->decoded;
}

void SymbolBlockCache::keep(uint32_t file, uint32_t block, std::string_view bytes,
                            std::shared_ptr<const SymbolBlock> decoded) {
    if (capacity_ == 0)
        return;
    // The copy is made, and what leaves is freed, outside the lock.
    std::list<Entry> entry;
    entry.push_back({keyOf(file, block), std::string(bytes), std::move(decoded)});
    std::list<Entry> gone;
    std::lock_guard lock(mu_);
    if (auto it = index_.find(entry.front().key); it != index_.end()) {
        // Another snapshot's bytes: replaced.
        gone.splice(gone.end(), entries_, it->second);
        index_.erase(it);
    } else if (entries_.size() >= capacity_) {
        index_.erase(entries_.back().key);
        gone.splice(gone.end(), entries_, std::prev(entries_.end()));
    }
    entries_.splice(entries_.begin(), entry);
    index_.emplace(entries_.front().key, entries_.begin());
}

} // namespace symdex
