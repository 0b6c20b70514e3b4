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
    std::lock_guard lock(mu_);
    const uint64_t key = keyOf(file, block);
    if (auto it = index_.find(key); it != index_.end()) { // another snapshot's bytes: replaced
        it->second->bytes.assign(bytes);
        it->second->decoded = std::move(decoded);
        entries_.splice(entries_.begin(), entries_, it->second);
        return;
    }
    if (entries_.size() >= capacity_) {
        index_.erase(entries_.back().key);
        entries_.pop_back();
    }
    entries_.push_front({key, std::string(bytes), std::move(decoded)});
    index_.emplace(key, entries_.begin());
}

size_t SymbolBlockCache::size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
}

} // namespace symdex
