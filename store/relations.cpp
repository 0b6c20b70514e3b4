// StoreSnapshot::related: callers, callees, bases, derived classes and overrides, from the
// references alone. A reference records the symbol it sits in (Reference::container), and the
// indexer stores each base-specifier and each direct override as a reference too (kRoleBase,
// kRoleOverride; store/records.h). So one direction of each relation is a USR lookup in the
// `usrs` index (the references to a symbol), and the other a scan of the references in the files
// that declare the symbol; a file's relations are replaced with its references, never stale.
#include "store/snapshot_view.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace symdex {

namespace {

/// A caller: a function, or a variable whose initializer calls (a static's, a field's default).
bool canCall(SymbolKind kind) {
    return isFunctionLike(kind) || kind == SymbolKind::Variable ||
           kind == SymbolKind::StaticMember || kind == SymbolKind::Field;
}

bool bySite(const ReferenceHit& a, const ReferenceHit& b) {
    return std::tie(a.path, a.reference.location) < std::tie(b.path, b.reference.location);
}

} // namespace

std::string_view relationName(Relation relation) {
    switch (relation) {
    case Relation::Callers:
        return "callers";
    case Relation::Callees:
        return "callees";
    case Relation::Bases:
        return "bases";
    case Relation::Derived:
        return "derived";
    case Relation::Overrides:
        return "overrides";
    case Relation::OverriddenBy:
        return "overridden-by";
    }
    return "callers";
}

std::optional<Relation> parseRelation(std::string_view name) {
    for (Relation r : {Relation::Callers, Relation::Callees, Relation::Bases, Relation::Derived,
                       Relation::Overrides, Relation::OverriddenBy})
        if (relationName(r) == name)
            return r;
    return std::nullopt;
}

std::optional<SymbolHit> StoreSnapshot::bestOccurrence(uint64_t usrHash) const {
    std::vector<SymbolHit> hits = occurrences(usrHash); // sorted by path and position
    if (hits.empty())
        return std::nullopt;
    auto isDefinition = [](const SymbolHit& h) { return h.symbol.isDefinition(); };
    auto definition = std::find_if(hits.begin(), hits.end(), isDefinition);
    // A USR that several files define (a test defining a class again under a library's name:
    // LevelDB's skiplist_test.cc has its own `leveldb::Comparator`): a header's definition,
    // which every TU including it sees, before a main file's, which its TU alone sees.
    if (definition != hits.end() && std::count_if(definition, hits.end(), isDefinition) > 1 &&
        tu(definition->path))
        for (auto it = std::next(definition); it != hits.end(); ++it)
            if (it->symbol.isDefinition() && !tu(it->path)) {
                definition = it;
                break;
            }
    return std::move(definition != hits.end() ? *definition : hits.front());
}

std::vector<Related> StoreSnapshot::related(uint64_t usrHash, Relation relation) const {
    // The related symbol of each site, and the sites themselves.
    std::map<uint64_t, std::vector<ReferenceHit>> sites;
    const bool inward = relation == Relation::Callers || relation == Relation::Derived ||
                        relation == Relation::OverriddenBy;
    if (inward) {
        // The references to the symbol, each in the symbol that relates to it.
        auto each = [&](const Reference& ref, const std::string& path) {
            if (!ref.container)
                return;
            const bool wanted = relation == Relation::Derived        ? (ref.roles & kRoleBase)
                                : relation == Relation::OverriddenBy ? (ref.roles & kRoleOverride)
                                                                     : isWrittenUse(ref.roles);
            if (wanted)
                sites[ref.container].push_back({ref, path});
        };
        // Base-specifiers and overrides: only in the files the index says hold some (a class's
        // derived classes, not its thousands of uses).
        if (relation == Relation::Callers)
            view_->forEachReference(usrHash, each);
        else
            view_->forEachRelationReference(usrHash, each);
    } else {
        // The references in the symbol, in the files that declare it (a definition's body for
        // callees; the class definition's base-specifiers; the first declaration's overrides).
        // Only the lines of each declaration's extent are read: a body's references, a class's
        // base-specifiers and a method's override sites all lie within it.
        std::map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> spans;
        for (const SymbolHit& hit : occurrences(usrHash))
            if (relation != Relation::Callees || hit.symbol.isDefinition())
                spans[hit.path].emplace_back(
                    std::min(hit.symbol.extent.begin.line, hit.symbol.location.line),
                    std::max(hit.symbol.extent.end.line, hit.symbol.location.line));
        for (auto& [path, lines] : spans) {
            // Merged, so that a row is read once however many declarations cover it.
            std::sort(lines.begin(), lines.end());
            std::vector<std::pair<uint32_t, uint32_t>> merged;
            for (const auto& span : lines)
                if (!merged.empty() && span.first <= merged.back().second)
                    merged.back().second = std::max(merged.back().second, span.second);
                else
                    merged.push_back(span);
            std::vector<Reference> refs;
            for (const auto& [first, last] : merged)
                for (Reference& ref : view_->fileReferencesInLines(path, first, last)
                                          .value_or(std::vector<Reference>{}))
                    refs.push_back(ref);
            for (const Reference& ref : refs) {
                if (ref.container != usrHash)
                    continue;
                const bool wanted = relation == Relation::Bases       ? (ref.roles & kRoleBase)
                                    : relation == Relation::Overrides ? (ref.roles & kRoleOverride)
                                                                      : isWrittenUse(ref.roles);
                if (wanted)
                    sites[ref.usrHash].push_back({ref, path});
            }
        }
    }
    std::vector<Related> out;
    for (auto& [related, where] : sites) {
        std::optional<SymbolHit> symbol = bestOccurrence(related);
        if (relation == Relation::Callers && (!symbol || !canCall(symbol->symbol.kind)))
            continue;
        if (relation == Relation::Callees && (!symbol || !isFunctionLike(symbol->symbol.kind)))
            continue;
        std::sort(where.begin(), where.end(), bySite);
        out.push_back({related, std::move(symbol), std::move(where)});
    }
    std::sort(out.begin(), out.end(), [](const Related& a, const Related& b) {
        return bySite(a.sites.front(), b.sites.front()) ||
               (!bySite(b.sites.front(), a.sites.front()) && a.usrHash < b.usrHash);
    });
    return out;
}

} // namespace symdex
