// BlockCache: blocks decoded lately, kept for the next requests. A name search decompresses a
// block of 16 declarations for each answer (`SymbolBlock::decode`: 16% of findSymbols'
// instructions for names typed a letter at a time, name_search_bench at 300k names), and an
// editor's successive keystrokes ("fl", "flu", "flush") answer many of the same declarations.
// A request at a cursor decodes the reference and declaration blocks of its line, and an
// editor's requests come from a few places of one file: its blocks serve the next ones.
//
// An entry is found by (file id, block) and used only when the block's compressed bytes in the
// reader's snapshot are the ones it was decoded from: a block a later commit rewrote is never
// answered from the old one, and an older snapshot never from a newer one, with no tie to
// transaction ids or compactions. Comparing a few hundred bytes costs a fraction of
// decompressing them. What is kept must therefore depend on the bytes alone (a reference block's
// rows keep table indexes, not the hashes its file's table maps them to).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace symdex {

template <typename Decoded> class BlockCache {
public:
    explicit BlockCache(size_t capacity) : capacity_(capacity) {}

    /// The block decoded from exactly `bytes`, if kept.
    std::shared_ptr<const Decoded> find(uint32_t file, uint32_t block, std::string_view bytes) {
        std::lock_guard lock(mu_);
        auto it = index_.find(keyOf(file, block));
        if (it == index_.end() || it->second->bytes != bytes)
            return nullptr;
        entries_.splice(entries_.begin(), entries_, it->second);
        return it->second->decoded;
    }

    /// Keeps `decoded` (of `bytes`), dropping the least recently used entry when full. A
    /// Decoded's size() is how much of the block it holds (a declaration block may be expanded
    /// only up to a row): the same bytes kept with as much or more stay, so that two readers of
    /// one block, one asking for fewer rows, do not leave the smaller one kept.
    void keep(uint32_t file, uint32_t block, std::string_view bytes,
              std::shared_ptr<const Decoded> decoded) {
        if (capacity_ == 0)
            return;
        // The copy is made, and what leaves is freed, outside the lock.
        std::list<Entry> entry;
        entry.push_back({keyOf(file, block), std::string(bytes), std::move(decoded)});
        std::list<Entry> gone;
        std::lock_guard lock(mu_);
        if (auto it = index_.find(entry.front().key); it != index_.end()) {
            if (it->second->bytes == bytes &&
                it->second->decoded->size() >= entry.front().decoded->size()) {
                entries_.splice(entries_.begin(), entries_, it->second);
                return;
            }
            // Another snapshot's bytes, or fewer rows of these: replaced.
            gone.splice(gone.end(), entries_, it->second);
            index_.erase(it);
        } else if (entries_.size() >= capacity_) {
            index_.erase(entries_.back().key);
            gone.splice(gone.end(), entries_, std::prev(entries_.end()));
        }
        entries_.splice(entries_.begin(), entry);
        index_.emplace(entries_.front().key, entries_.begin());
    }

private:
    struct Entry {
        uint64_t key;
        std::string bytes;
        std::shared_ptr<const Decoded> decoded;
    };
    static uint64_t keyOf(uint32_t file, uint32_t block) { return uint64_t(file) << 32 | block; }

    const size_t capacity_;
    std::mutex mu_;
    std::list<Entry> entries_; // Requires mu_; most recently used first
    std::unordered_map<uint64_t, typename std::list<Entry>::iterator> index_; // Requires mu_
};

} // namespace symdex
