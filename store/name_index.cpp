#include "store/name_index.h"

#include "store/name_search.h"

#include <algorithm>
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
bool isWordChar(char c) {
    return isLower(c) || isUpper(c) || isDigit(c);
}

/// Whether the pieces of `compact` from `pos` on are prefixes of words[j], words[j + 1], ...
bool wordStartsFrom(const std::vector<std::string>& words, size_t j, std::string_view rest) {
    if (rest.empty())
        return true;
    if (j >= words.size())
        return false;
    const std::string& word = words[j];
    for (size_t k = std::min(word.size(), rest.size()); k >= 1; --k)
        if (word.compare(0, k, rest, 0, k) == 0 && wordStartsFrom(words, j + 1, rest.substr(k)))
            return true;
    return false;
}

} // namespace

std::vector<std::string> nameWords(std::string_view name) {
    std::vector<std::string> words;
    std::string word;
    auto flush = [&] {
        if (!word.empty() && words.size() < kMaxWords)
            words.push_back(lowerAscii(std::string_view(word).substr(0, kMaxWordBytes)));
        word.clear();
    };
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (!isWordChar(c)) {
            flush();
            continue;
        }
        if (!word.empty()) {
            const char prev = word.back();
            const bool next_lower = i + 1 < name.size() && isLower(name[i + 1]);
            if ((isUpper(c) && (isLower(prev) || isDigit(prev))) ||
                (isUpper(c) && isUpper(prev) && next_lower) || (isDigit(c) != isDigit(prev)))
                flush();
        }
        word += c;
    }
    flush();
    return words;
}

std::string indexedName(std::string_view name) {
    return std::string(name.substr(0, nameKey(name).size()));
}

std::vector<std::string> nameTokens(const std::vector<std::string>& words) {
    std::vector<std::string> tokens;
    for (const std::string& word : words)
        tokens.push_back(kWordToken + word);
    if (!words.empty())
        tokens.push_back(kFirstWordToken + words[0]);
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

std::optional<MatchRank> matchName(std::string_view name, const NameQuery& query) {
    const std::string key = nameKey(name);
    if (key == query.key)
        return MatchRank::Exact;
    if (key.starts_with(query.key))
        return MatchRank::Prefix;
    const std::string_view q = query.compact;
    if (q.size() < kMinWordStart)
        return std::nullopt;
    const std::vector<std::string> words = nameWords(name);
    for (size_t j = 0; j < words.size(); ++j) {
        if (q.size() < kMinSubstring ? words[j].starts_with(q) : wordStartsFrom(words, j, q))
            return MatchRank::WordStart;
    }
    if (q.size() < kMinSubstring)
        return std::nullopt;
    std::string joined;
    for (const std::string& word : words)
        joined += word;
    if (joined.find(q) != std::string::npos)
        return MatchRank::Substring;
    return std::nullopt;
}

std::vector<std::vector<std::string>>
wordStartCuts(std::string_view compact, const std::function<bool(std::string_view)>& startsWord,
              size_t cap) {
    std::vector<std::vector<std::string>> cuts;
    if (compact.size() < kMinWordStart)
        return cuts;
    if (compact.size() < kMinSubstring) {
        if (startsWord(compact))
            cuts.push_back({std::string(compact)});
        return cuts;
    }
    std::vector<std::string> pieces;
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
            pieces.emplace_back(rest.substr(0, k));
            cut(rest.substr(k));
            pieces.pop_back();
        }
    };
    cut(compact);
    return cuts;
}

} // namespace symdex
