#include "store/name_index.h"

#include "store/name_search.h"

#include <algorithm>
#include <array>
#include <functional>

namespace symdex {

namespace {

bool isLower(char c) {
    return c >= 'a' && c <= 'z';
}
bool isUpper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
/// Each byte in ASCII lower case (a look-up: no branch a letter).
constexpr std::array<char, 256> kLowerAscii = [] {
    std::array<char, 256> table{};
    for (int i = 0; i < 256; ++i)
        table[size_t(i)] = char(i >= 'A' && i <= 'Z' ? i - 'A' + 'a' : i);
    return table;
}();
bool isWordChar(char c) {
    return isLower(c) || isUpper(c) || isDigit(c);
}

/// A name's words (nameWords()) without a string each: lower case and run together in
/// `joined`, word i at [starts[i], starts[i + 1]).
struct Words {
    std::string joined;
    uint16_t starts[kMaxWords + 1] = {};
    size_t count = 0;
    std::string_view word(size_t i) const {
        return std::string_view(joined).substr(starts[i], starts[i + 1] - starts[i]);
    }
};

void splitWords(std::string_view name, Words& out) {
    out.joined.clear();
    out.count = 0;
    out.joined.reserve(name.size());
    size_t begin = 0, length = 0; // the word being read: name[begin, begin + length)
    auto flush = [&] {
        if (length > 0 && out.count < kMaxWords) {
            out.starts[out.count++] = uint16_t(out.joined.size());
            for (char c : name.substr(begin, std::min(length, kMaxWordBytes)))
                out.joined += isUpper(c) ? char(c - 'A' + 'a') : c;
        }
        length = 0;
    };
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (!isWordChar(c)) {
            flush();
            continue;
        }
        if (length > 0) {
            const char prev = name[i - 1];
            const bool nextLower = i + 1 < name.size() && isLower(name[i + 1]);
            if ((isUpper(c) && (isLower(prev) || isDigit(prev))) ||
                (isUpper(c) && isUpper(prev) && nextLower) || (isDigit(c) != isDigit(prev)))
                flush();
        }
        if (length == 0)
            begin = i;
        ++length;
    }
    flush();
    out.starts[out.count] = uint16_t(out.joined.size());
}

/// Whether `rest` is non-empty prefixes of words j, j + 1, ... in turn.
bool wordStartsFrom(const Words& words, size_t j, std::string_view rest) {
    if (rest.empty())
        return true;
    if (j >= words.count)
        return false;
    const std::string_view word = words.word(j);
    for (size_t k = std::min(word.size(), rest.size()); k >= 1; --k)
        if (word.substr(0, k) == rest.substr(0, k) && wordStartsFrom(words, j + 1, rest.substr(k)))
            return true;
    return false;
}

/// ASCII case-insensitive: whether `name`'s key (nameKey()) starts with `key`, and is it.
std::pair<bool, bool> keyStartsWith(std::string_view name, std::string_view key) {
    const size_t keyLength = std::min(name.size(), kMaxNameKey);
    if (keyLength < key.size())
        return {false, false};
    for (size_t i = 0; i < key.size(); ++i) {
        const char c = name[i];
        if ((isUpper(c) ? char(c - 'A' + 'a') : c) != key[i])
            return {false, false};
    }
    return {true, keyLength == key.size()};
}

} // namespace

std::vector<std::string> nameWords(std::string_view name) {
    Words words;
    splitWords(name, words);
    std::vector<std::string> out;
    for (size_t i = 0; i < words.count; ++i)
        out.emplace_back(words.word(i));
    return out;
}

std::string indexedName(std::string_view name) {
    return std::string(name.substr(0, nameKey(name).size()));
}

std::string pairToken(std::string_view first, std::string_view second) {
    std::string token{kPairToken};
    token.append(first).append(1, ' ').append(second);
    return token;
}

std::vector<std::string> nameTokens(const std::vector<std::string>& words) {
    std::vector<std::string> tokens;
    for (const std::string& word : words)
        tokens.push_back(kWordToken + word);
    if (!words.empty())
        tokens.push_back(kFirstWordToken + words[0]);
    for (size_t j = 0; j + 1 < words.size(); ++j)
        tokens.push_back(pairToken(words[j], words[j + 1]));
    for (size_t j = 0; j + 2 < words.size(); ++j)
        tokens.push_back(
            std::string{kInitialsToken, words[j][0], words[j + 1][0], words[j + 2][0]});
    std::sort(tokens.begin(), tokens.end());
    tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
    return tokens;
}

NameQuery makeNameQuery(std::string_view lastComponent) {
    NameQuery query;
    query.key = nameKey(lastComponent);
    for (char c : lastComponent)
        if (isWordChar(c))
            query.compact += isUpper(c) ? char(c - 'A' + 'a') : c;
    return query;
}

EntryRank EntryRank::of(const Symbol& symbol) {
    return {bool(symbol.flags & kSpecialization), !symbol.isDefinition(),
            uint32_t(std::min<size_t>(symbol.qualifiedName.size(), UINT32_MAX >> 2))};
}

uint32_t EntryRank::packed() const {
    return std::min(qualifiedLength, UINT32_MAX >> 2) << 2 | uint32_t(specialization) << 1 |
           uint32_t(declaration);
}

EntryRank EntryRank::unpack(uint32_t packed) {
    return {bool(packed & 2), bool(packed & 1), packed >> 2};
}

std::optional<MatchRank> matchName(std::string_view name, const NameQuery& query) {
    const auto [prefix, exact] = keyStartsWith(name, query.key);
    if (exact)
        return MatchRank::Exact;
    if (prefix)
        return MatchRank::Prefix;
    const std::string_view q = query.compact;
    if (q.size() < kMinWordStart)
        return std::nullopt;
    // A word start or a substring holds the query's letters and digits in order. Most names
    // the index proposes for a long query do not (a cut's rarest constraint holds a few names
    // that share a word or initials with it), and are told so here, before their words are split.
    // (Most of a word-start search's instructions a candidate: the loop is kept tight.)
    size_t held = 0;
    char wanted = q[0];
    for (const char c : name)
        if (kLowerAscii[uint8_t(c)] == wanted) {
            if (++held == q.size())
                break;
            wanted = q[held];
        }
    if (held < q.size())
        return std::nullopt;
    thread_local Words words;
    splitWords(name, words);
    for (size_t j = 0; j < words.count; ++j) {
        if (q.size() < kMinSubstring ? words.word(j).starts_with(q) : wordStartsFrom(words, j, q))
            return MatchRank::WordStart;
    }
    if (q.size() >= kMinSubstring && words.joined.find(q) != std::string::npos)
        return MatchRank::Substring;
    return std::nullopt;
}

std::vector<std::vector<std::string_view>>
wordStartCuts(std::string_view compact, const std::function<bool(std::string_view)>& startsWord,
              size_t cap, const CutFits& fits) {
    std::vector<std::vector<std::string_view>> cuts;
    if (compact.size() < kMinWordStart)
        return cuts;
    if (compact.size() < kMinSubstring) {
        if (startsWord(compact))
            cuts.push_back({compact});
        return cuts;
    }
    std::vector<std::string_view> pieces;
    std::function<void(std::string_view)> cut = [&](std::string_view rest) {
        if (cuts.size() >= cap)
            return;
        if (rest.empty()) {
            cuts.push_back(pieces);
            return;
        }
        // A piece no word starts with cannot be lengthened into one: find the longest first.
        size_t longest = 0;
        while (longest < rest.size() && startsWord(rest.substr(0, longest + 1)))
            ++longest;
        for (size_t k = longest; k >= 1 && cuts.size() < cap; --k) {
            if (fits && !fits(pieces, rest.substr(0, k)))
                continue;
            pieces.push_back(rest.substr(0, k));
            cut(rest.substr(k));
            pieces.pop_back();
        }
    };
    cut(compact);
    return cuts;
}

} // namespace symdex
