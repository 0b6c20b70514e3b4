// The name index's vocabulary: how a name splits into words, which index tokens a name is found
// under, and the one rule that says whether (and how well) a name matches a query. The writer
// (store_writer.cpp) keeps the tokens of every stored name; name search (name_search.cpp) asks
// the tokens a query needs and checks each name found with matchName(), so an index can only
// narrow a search, never change its answer. docs/names.md has the rules with examples.
#pragma once

#include "store/store.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

/// A name's words, lower case: split at anything not a letter or digit, before an upper-case
/// letter that follows a lower-case one or a digit, before the last capital of a run followed by
/// a lower-case letter ("HTTPServer": http, server), and between letters and digits ("utf8":
/// utf, 8). At most kMaxWords, each at most kMaxWordBytes.
std::vector<std::string> nameWords(std::string_view name);
inline constexpr size_t kMaxWords = 16;
inline constexpr size_t kMaxWordBytes = 48;

/// The name as the index stores it: capped like nameKey() but keeping its case.
std::string indexedName(std::string_view name);

/// Index tokens: 'W' + a word the name holds, 'F' + its first word, 'P' + two consecutive words
/// (pairToken()), and 'I' + the initials of three consecutive words ("GetLengthPrefixedSlice":
/// Fget, Iglp, Ilps, "Pget length", ..., Wget, Wlength, ...). Each distinct token once.
std::vector<std::string> nameTokens(const std::vector<std::string>& words);
inline constexpr char kWordToken = 'W';
inline constexpr char kFirstWordToken = 'F';
inline constexpr char kPairToken = 'P';
inline constexpr char kInitialsToken = 'I';
/// 'P' + first + ' ' + second.
std::string pairToken(std::string_view first, std::string_view second);

/// Where a declaration stands in name search's order once its name's match and length are
/// known (name_search.cpp's rankKey): specializations after the rest, declarations after
/// definitions, then the shorter qualified name first. The names index keeps it beside each
/// declaration (format 19), packed, so that a search can pass over a name none of whose
/// declarations can rank high enough without decoding them.
struct EntryRank {
    bool specialization = false;
    bool declaration = false; ///< not a definition
    uint32_t qualifiedLength = 0;
    friend auto operator<=>(const EntryRank&, const EntryRank&) = default;
    static EntryRank of(const Symbol& symbol);
    /// As a varint would keep it cheaply: length << 2 | specialization << 1 | declaration.
    uint32_t packed() const;
    static EntryRank unpack(uint32_t packed);
};

/// A query as matching sees it.
struct NameQuery {
    std::string key;     ///< nameKey() of the query's last component: exact and prefix matches
    std::string compact; ///< its letters and digits, lower case: word-start and substring matches
};
NameQuery makeNameQuery(std::string_view lastComponent);

/// Word-start matches need a query of two letters or digits, and one of two alone matches the
/// start of a single word; substring matches need three. Shorter queries match exactly or by
/// prefix only (as clangd, whose trigram index needs them too).
inline constexpr size_t kMinWordStart = 2;
inline constexpr size_t kMinSubstring = 3;

/// How `name` matches: Exact (its nameKey equals the query's), Prefix (starts with it),
/// WordStart (the query's letters and digits are prefixes of consecutive words, each non-empty:
/// "flushbuf" in flushBuffer, "glps" in GetLengthPrefixedSlice, "buf" in flushBuffer),
/// Substring (its words, joined, contain the query's letters and digits elsewhere: "ngthpre");
/// nullopt when none does.
std::optional<MatchRank> matchName(std::string_view name, const NameQuery& query);

/// Whether a piece may follow the pieces before it in a cut (false: no name has words so).
using CutFits = std::function<bool(const std::vector<std::string_view>&, std::string_view)>;
/// Ways to cut `compact` into pieces each of which starts a word of the vocabulary (`startsWord`
/// says whether any word starts with a piece) and, when `fits` is given, fits after the pieces
/// before it; at most `cap`, longer first pieces first (a cut that does not fit does not count).
/// One piece only for a query of fewer than three characters. The pieces are views into
/// `compact`.
std::vector<std::vector<std::string_view>>
wordStartCuts(std::string_view compact, const std::function<bool(std::string_view)>& startsWord,
              size_t cap, const CutFits& fits = {});

} // namespace symdex
