// Name search, for every store: the View gives the name keys and the declarations under a key;
// matching, ranking and choosing each symbol's best occurrence happen here.
#include "store/name_search.h"

#include "store/snapshot_view.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace symdex {

std::string lowerAscii(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

std::string nameKey(std::string_view name) {
    constexpr size_t kMaxNameKey = 400;
    return lowerAscii(name.substr(0, kMaxNameKey));
}

namespace {

bool endsWithScope(std::string_view qualified, std::string_view tail) {
    if (qualified == tail)
        return true;
    return qualified.size() > tail.size() + 2 && qualified.ends_with(tail) &&
           qualified.substr(qualified.size() - tail.size() - 2, 2) == "::";
}

/// The last component of a possibly qualified name, ignoring "::" inside template arguments.
std::string_view lastComponent(std::string_view name) {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
        char c = name[i];
        if (c == '>')
            ++depth;
        else if (c == '<')
            --depth;
        else if (depth == 0 && c == ':' && i > 0 && name[i - 1] == ':')
            return name.substr(i + 1);
    }
    return name;
}

/// Whether the characters of `needle` appear in `text` in order.
bool isSubsequence(std::string_view needle, std::string_view text) {
    size_t i = 0;
    for (char c : text)
        if (i < needle.size() && c == needle[i])
            ++i;
    return i == needle.size();
}

/// Whether (symbol, path) shows a symbol better than `best`: a definition before a declaration,
/// then the first by path and position. Never the order the store keeps rows in, which follows
/// the order files were first written: a namespace defined in many files would show a different
/// one after each run.
bool betterOccurrence(const Symbol& symbol, const std::string& path, const SymbolHit& best) {
    if (symbol.isDefinition() != best.symbol.isDefinition())
        return symbol.isDefinition();
    return std::tie(path, symbol.location) < std::tie(best.path, best.symbol.location);
}

/// Within a rank: primary templates and plain symbols before specializations, definitions before
/// declarations, then shorter qualified names (std::vector before std::pmr::vector).
void sortMatches(std::vector<NameMatch>& matches) {
    std::stable_sort(matches.begin(), matches.end(), [](const NameMatch& a, const NameMatch& b) {
        const Symbol& x = a.best.symbol;
        const Symbol& y = b.best.symbol;
        auto key = [](const NameMatch& m, const Symbol& s) {
            return std::make_tuple(m.rank, bool(s.flags & kSpecialization), !s.isDefinition(),
                                   s.qualifiedName.size());
        };
        if (key(a, x) != key(b, y))
            return key(a, x) < key(b, y);
        return x.qualifiedName < y.qualifiedName;
    });
}

} // namespace

std::vector<uint64_t> StoreSnapshot::resolveName(std::string_view name) const {
    while (name.starts_with("::"))
        name.remove_prefix(2);
    const std::string_view last = lastComponent(name);
    const bool qualified = last.size() != name.size();

    struct Candidate {
        uint64_t usrHash;
        Symbol symbol;
    };
    std::vector<Candidate> candidates;
    view_->forEachSymbolNamed(nameKey(last),
                              [&](uint64_t usrHash, Symbol&& symbol, const std::string&) {
                                  candidates.push_back({usrHash, std::move(symbol)});
                              });
    auto collect = [&](bool caseSensitive) {
        std::vector<uint64_t> out;
        const std::string lowerName = lowerAscii(name), lowerLast = lowerAscii(last);
        for (const Candidate& c : candidates) {
            bool match;
            if (caseSensitive)
                match = c.symbol.name == last &&
                        (!qualified || endsWithScope(c.symbol.qualifiedName, name));
            else
                match =
                    lowerAscii(c.symbol.name) == lowerLast &&
                    (!qualified || endsWithScope(lowerAscii(c.symbol.qualifiedName), lowerName));
            if (match && std::find(out.begin(), out.end(), c.usrHash) == out.end())
                out.push_back(c.usrHash);
        }
        return out;
    };
    std::vector<uint64_t> exact = collect(true);
    return exact.empty() ? collect(false) : exact;
}

std::vector<NameMatch> StoreSnapshot::findSymbols(std::string_view pattern, size_t limit,
                                                  bool subsequence) const {
    while (pattern.starts_with("::"))
        pattern.remove_prefix(2);
    const std::string_view last = lastComponent(pattern);
    const bool qualified = last.size() != pattern.size();
    const std::string needle = nameKey(last);
    const std::string lowerPattern = lowerAscii(pattern);
    if (needle.empty())
        return {};

    // Rank the distinct name keys first (cheap: keys only), then expand them in rank order.
    constexpr int kRanks = 4;
    std::vector<std::string> keys[kRanks];
    view_->forEachNameKey([&](std::string_view k) {
        if (k == needle)
            keys[0].emplace_back(k);
        else if (k.starts_with(needle))
            keys[1].emplace_back(k);
        else if (k.find(needle) != std::string_view::npos)
            keys[2].emplace_back(k);
        else if (subsequence && isSubsequence(needle, k))
            keys[3].emplace_back(k);
    });
    for (auto& group : keys) {
        std::sort(group.begin(), group.end(), [](const std::string& a, const std::string& b) {
            return std::make_pair(a.size(), std::string_view(a)) <
                   std::make_pair(b.size(), std::string_view(b));
        });
        group.erase(std::unique(group.begin(), group.end()), group.end());
    }

    std::vector<NameMatch> matches;
    std::unordered_map<uint64_t, size_t> byUsr;
    for (int rank = 0; rank < kRanks && matches.size() < limit; ++rank) {
        for (const std::string& key : keys[rank]) {
            if (matches.size() >= limit)
                break;
            // Expand one key completely so a symbol's best occurrence is chosen among all.
            view_->forEachSymbolNamed(
                key, [&](uint64_t usrHash, Symbol&& symbol, const std::string& path) {
                    if (qualified &&
                        lowerAscii(symbol.qualifiedName).find(lowerPattern) == std::string::npos)
                        return;
                    auto [it, inserted] = byUsr.try_emplace(usrHash, matches.size());
                    if (inserted) {
                        if (matches.size() >= limit) {
                            byUsr.erase(it);
                            return;
                        }
                        matches.push_back({MatchRank(rank), {std::move(symbol), path}, 1});
                        return;
                    }
                    NameMatch& match = matches[it->second];
                    ++match.occurrences;
                    if (betterOccurrence(symbol, path, match.best))
                        match.best = {std::move(symbol), path};
                });
        }
    }
    sortMatches(matches);
    return matches;
}

} // namespace symdex
