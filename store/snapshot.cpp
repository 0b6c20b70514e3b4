// StoreSnapshot's queries over its View, and Store's one-call queries: the same for every store.
#include "store/snapshot_view.h"

#include <algorithm>
#include <tuple>

namespace symdex {

StoreSnapshot::StoreSnapshot(std::unique_ptr<View> view) : view_(std::move(view)) {}
StoreSnapshot::StoreSnapshot(StoreSnapshot&&) noexcept = default;
StoreSnapshot& StoreSnapshot::operator=(StoreSnapshot&&) noexcept = default;
StoreSnapshot::~StoreSnapshot() = default;

std::optional<FileRecord> StoreSnapshot::file(const std::string& path) const {
    return view_->file(path);
}

std::optional<bool> StoreSnapshot::indexedAscii(const std::string& path) const {
    return view_->indexedAscii(path);
}

void StoreSnapshot::forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) const {
    view_->forEachFile(fn);
}

std::optional<TuRecord> StoreSnapshot::tu(const std::string& mainFile) const {
    return view_->tu(mainFile);
}

void StoreSnapshot::forEachTu(
    const std::function<void(const std::string&, const TuRecord&)>& fn) const {
    view_->forEachTu(fn);
}

void StoreSnapshot::forEachAbsentPath(
    const std::function<void(uint32_t, const std::string&)>& fn) const {
    view_->forEachAbsentPath(fn);
}

std::optional<std::string> StoreSnapshot::metaValue(const std::string& key) const {
    return view_->metaValue(key);
}

std::vector<SymbolHit> StoreSnapshot::occurrences(uint64_t usrHash) const {
    std::vector<SymbolHit> hits;
    view_->forEachOccurrence(usrHash, [&](Symbol&& symbol, const std::string& path) {
        hits.push_back({std::move(symbol), path});
    });
    std::sort(hits.begin(), hits.end(), [](const SymbolHit& a, const SymbolHit& b) {
        return std::tie(a.path, a.symbol.location) < std::tie(b.path, b.symbol.location);
    });
    return hits;
}

std::vector<ReferenceHit> StoreSnapshot::references(uint64_t usrHash) const {
    std::vector<ReferenceHit> hits;
    view_->forEachReference(usrHash, [&](const Reference& ref, const std::string& path) {
        if (isWrittenUse(ref.roles))
            hits.push_back({ref, path});
    });
    std::sort(hits.begin(), hits.end(), [](const ReferenceHit& a, const ReferenceHit& b) {
        return std::tie(a.path, a.reference.location) < std::tie(b.path, b.reference.location);
    });
    return hits;
}

std::optional<std::vector<Symbol>> StoreSnapshot::fileSymbols(const std::string& path) const {
    return view_->fileSymbols(path);
}

std::optional<std::vector<Reference>> StoreSnapshot::fileReferences(const std::string& path) const {
    return view_->fileReferences(path);
}

std::optional<std::string> StoreSnapshot::nameOf(uint64_t usrHash) const {
    return view_->nameOf(usrHash);
}

std::optional<std::vector<Symbol>>
StoreSnapshot::fileSymbolsInLines(const std::string& path, uint32_t first, uint32_t last) const {
    return view_->fileSymbolsInLines(path, first, last);
}

std::optional<std::vector<Reference>>
StoreSnapshot::fileReferencesInLines(const std::string& path, uint32_t first, uint32_t last) const {
    return view_->fileReferencesInLines(path, first, last);
}

StoreStats StoreSnapshot::stats() const {
    return view_->stats();
}

std::optional<FileRecord> Store::file(const std::string& path) const {
    return snapshot().file(path);
}

void Store::forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) const {
    snapshot().forEachFile(fn);
}

std::optional<TuRecord> Store::tu(const std::string& mainFile) const {
    return snapshot().tu(mainFile);
}

void Store::forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) const {
    snapshot().forEachTu(fn);
}

void Store::forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) const {
    snapshot().forEachAbsentPath(fn);
}

std::vector<NameMatch> Store::findSymbols(std::string_view pattern, size_t limit,
                                          NameDetail detail) const {
    return snapshot().findSymbols(pattern, limit, detail);
}

std::vector<uint64_t> Store::resolveName(std::string_view name) const {
    return snapshot().resolveName(name);
}

std::vector<SymbolHit> Store::occurrences(uint64_t usrHash) const {
    return snapshot().occurrences(usrHash);
}

std::vector<ReferenceHit> Store::references(uint64_t usrHash) const {
    return snapshot().references(usrHash);
}

std::vector<Related> Store::related(uint64_t usrHash, Relation relation) const {
    return snapshot().related(usrHash, relation);
}

std::optional<std::vector<Symbol>> Store::fileSymbols(const std::string& path) const {
    return snapshot().fileSymbols(path);
}

std::optional<std::vector<Reference>> Store::fileReferences(const std::string& path) const {
    return snapshot().fileReferences(path);
}

StoreStats Store::stats() const {
    return snapshot().stats();
}

} // namespace symdex
