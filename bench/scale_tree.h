// Scale trees for scale_bench (issue 17): a C++ source tree declaring about N distinct names, with
// a compile_commands.json, the same bytes for the same (names, seed). Names are 2-4 English and
// programming words in camelCase, PascalCase or snake_case (a module keeps one style, as real
// code does): GetLengthPrefixedSlice, flushBufferRecord, read_block_size. Each module is a shared
// header (a namespace of enums, classes with fields and method declarations, free function
// declarations) and four TUs that define its functions; each TU also includes three other
// modules' headers and calls functions defined in their TUs. About 500 names per TU: 2,000 names
// make 4 TUs, 2M make 4,000. A function's name is written about 5 times (declaration, definition,
// three calls); with the namespace and class names the calls qualify, 7.4 times a name.
//
// The generator also names the workspace/symbol queries of the benchmark, derived from the
// names so that each kind is known to have answers (or, for the last kind, none).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace symdex::bench {

struct ScaleSpec {
    /// Distinct names declared: namespaces, classes, fields, methods, free functions, enums and
    /// their constants, each declared once. At least 100.
    size_t names = 30000;
    /// Picks words, styles, includes and callees.
    uint64_t seed = 1;
};

struct ScaleTree {
    std::filesystem::path root;
    std::filesystem::path database; ///< root/compile_commands.json
    /// The TUs, relative to root, in the database's order.
    std::vector<std::string> sources;
    size_t headers = 0;
    /// Every declared name, once each, in the order the generator made them.
    std::vector<std::string> names;
    /// The names' occurrences written in the tree: declarations, definitions and uses (calls,
    /// qualifiers, fields and enum constants read).
    size_t nameOccurrences = 0;
};

/// Writes the tree into `root` (emptied first), with a stamp naming the spec written last, so that
/// an interrupted run leaves no tree existingScaleTree accepts. Throws std::runtime_error when it
/// cannot write.
ScaleTree generateScaleTree(const ScaleSpec& spec, const std::filesystem::path& root);

/// The tree generateScaleTree wrote into `root` for `spec`, recomputed without writing, when
/// root's stamp names that spec and root; nullopt otherwise.
std::optional<ScaleTree> existingScaleTree(const ScaleSpec& spec,
                                           const std::filesystem::path& root);

enum class QueryKind {
    ShortPrefix,           ///< 1-2 letters a name starts with: "re"
    CommonWord,            ///< one of the most used words: "buffer"
    RareExact,             ///< a whole name of 3-4 words, declared once: "GetLengthPrefixedSlice"
    MidNameSubstring,      ///< a piece of a name starting inside a word: "ngthPref"
    WordStartAbbreviation, ///< prefixes of the words in order: "glps", "flubuf"
    NoMatch,               ///< letters no name holds even as a subsequence: "zqxjv"
};
inline constexpr QueryKind kQueryKinds[] = {QueryKind::ShortPrefix,
                                            QueryKind::CommonWord,
                                            QueryKind::RareExact,
                                            QueryKind::MidNameSubstring,
                                            QueryKind::WordStartAbbreviation,
                                            QueryKind::NoMatch};

/// "prefix", "common word", "rare exact", "mid-name substring", "abbreviation", "no match".
const char* queryKindName(QueryKind kind);

struct ScaleQuery {
    QueryKind kind = QueryKind::NoMatch;
    std::string text;
    bool operator==(const ScaleQuery&) const = default;
};

/// Up to `perKind` distinct queries of each kind, in kQueryKinds order, drawn from `names` with
/// `seed` (fewer of a kind only when a tiny tree has no more). Case: prefixes, words and
/// abbreviations lower case; exact names and substrings as the name spells them.
std::vector<ScaleQuery> scaleQueries(const std::vector<std::string>& names, size_t perKind,
                                     uint64_t seed);

} // namespace symdex::bench
