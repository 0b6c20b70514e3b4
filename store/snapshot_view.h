// Private to store/: what a store implementation gives StoreSnapshot. Each store reads its own
// records and indexes here; the queries built on them (store/snapshot.cpp, store/name_search.cpp)
// are written once for all stores, so both answer the same way.
#pragma once

#include "store/store.h"

namespace symdex {

class StoreSnapshot::View {
public:
    virtual ~View() = default;

    virtual std::optional<FileRecord> file(const std::string& path) = 0;
    virtual void forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) = 0;
    virtual std::optional<TuRecord> tu(const std::string& mainFile) = 0;
    virtual void forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) = 0;
    virtual void forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) = 0;

    /// Every name key (nameKey(), store/name_search.h) of a declaration, in any order; a key may
    /// come more than once.
    virtual void forEachNameKey(const std::function<void(std::string_view)>& fn) = 0;
    /// Every declaration whose name key is `key`: fn(usrHash, symbol, path), in any order.
    virtual void
    forEachSymbolNamed(std::string_view key,
                       const std::function<void(uint64_t, Symbol&&, const std::string&)>& fn) = 0;
    /// Every declaration of a USR: fn(symbol, path), in any order.
    virtual void forEachOccurrence(uint64_t usrHash,
                                   const std::function<void(Symbol&&, const std::string&)>& fn) = 0;
    /// The name of a declaration of a USR (any one: they share it), reading no other; nullopt
    /// if the store has none.
    virtual std::optional<std::string> nameOf(uint64_t usrHash) = 0;
    /// Every reference to a USR: fn(reference, path), in any order.
    virtual void
    forEachReference(uint64_t usrHash,
                     const std::function<void(const Reference&, const std::string&)>& fn) = 0;

    virtual std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) = 0;
    virtual std::optional<std::vector<Reference>> fileReferences(const std::string& path) = 0;
    /// What fileSymbols() and fileReferences() hold on lines [first, last] (their location's),
    /// found by a binary search over the rows (they are in source order) rather than by reading
    /// them all.
    virtual std::optional<std::vector<Symbol>>
    fileSymbolsInLines(const std::string& path, uint32_t first, uint32_t last) = 0;
    virtual std::optional<std::vector<Reference>>
    fileReferencesInLines(const std::string& path, uint32_t first, uint32_t last) = 0;
    virtual StoreStats stats() = 0;
};

} // namespace symdex
