// Shared precompiled prefixes (issue 13): the system headers most TUs of a configuration include
// are parsed once into a precompiled header (PCH), and the other TUs of that configuration are
// parsed against it (`-include-pch`). A PCH is a speed-up and nothing else: a TU's answers with
// it are the answers without it, or it is parsed without it. docs/pch.md has the rules; in short,
// a TU uses the PCH only when
//   - it includes every file the PCH holds (else the PCH would show it declarations it does not
//     see: "incomplete");
//   - no macro it defines before the PCH's headers would have been included occurs in them, and
//     it uses no macro the PCH defines before the header defining it would have been included
//     ("macros"): the PCH comes first, where its headers came later;
//   - it owns none of the PCH's files (header_claims.h): a header's owner extracts it, and a
//     parse against a PCH does not see the declarations inside it ("owner").
// The PCH's own headers are extracted by their owners' plain parses, so the store holds what it
// holds without PCHs.
//
// This file: the manifest kept beside each PCH (the files it holds and their include graph, the
// identifiers in them, the macros they define), the lexical scan that finds identifiers, and how
// TUs are grouped. Building and using a PCH is in tu_parser.cpp; choosing headers in indexer.cpp.
#pragma once

#include "indexer/compile_db.h"
#include "indexer/pch_config.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace symdex {

/// What a PCH holds, written beside it (`PATH.manifest`) by the parse that built it.
struct PchManifest {
    /// The #include lines the PCH was built from, as spelled ("<string>").
    std::vector<std::string> headers;
    struct File {
        std::string path;  ///< real path
        uint64_t hash = 0; ///< hash64 of the contents the build read
        /// Include-guarded: entered once. An unguarded file (stddef.h, stdarg.h, assert.h) is
        /// entered again at each #include, by the TU itself too.
        bool guarded = true;
        /// Unguarded, but every #include of it is inside an inner guard (`#ifndef G`/`#define
        /// G` ... `#endif`, after a preamble that includes nothing: glibc's bits/stat.h): only
        /// its first entry includes anything, whichever entry that is (includesOnlyOnce()).
        bool includesOnce = false;
        uint32_t node = 0; ///< its first entry, in `nodes`
    };
    std::vector<File> files;
    /// The include graph, by entry: a guarded file is entered once, an unguarded one at each
    /// #include, each time with what the macros then say (stddef.h's __need_ macros), so what
    /// an entry includes is the entry's. Children: the entries of the files it #includes; an
    /// #include an include guard skipped names an entry of the skipped file without children
    /// (following a guarded file means following its first entry).
    struct Node {
        uint32_t file = 0;
        std::vector<uint32_t> children;
    };
    std::vector<Node> nodes;
    /// Every identifier of the files' text (outside comments and literals), sorted, with the
    /// files it is in and how: kUse, kUndef (an #undef names it), kDefine (a #define does).
    std::vector<std::pair<std::string, std::vector<std::pair<uint32_t, uint8_t>>>> identifiers;
    static constexpr uint8_t kUse = 1, kUndef = 2, kDefine = 4;
    /// Each macro the files define (its last definition; not one its file #undefs after it): its
    /// name, the file defining it and its USR.
    struct Macro {
        std::string name;
        uint32_t file = 0;
        std::string usr;
    };
    std::vector<Macro> macros;
    /// Paths the build probed in vain: a TU parsed against the PCH depends on them too.
    std::vector<std::string> absentPaths;
    /// The namespaces the PCH's files open, each where it is first opened: (USR hash, path,
    /// line, column).
    struct NamespaceStart {
        uint64_t usrHash = 0;
        std::string path;
        uint32_t line = 0, column = 0;
    };
    std::vector<NamespaceStart> namespaceStarts;
};

std::string encodePchManifest(const PchManifest& manifest);
std::optional<PchManifest> decodePchManifest(std::string_view bytes);

/// A manifest ready for the checks a parse makes: looked up by path and name.
struct LoadedPch {
    std::string path; ///< the .pch file
    PchManifest manifest;
    std::unordered_map<std::string, uint32_t> fileIndex;
    /// Views into manifest.identifiers: name -> the files it is in, and how.
    std::unordered_map<std::string_view, const std::vector<std::pair<uint32_t, uint8_t>>*>
        identifiers;
    /// Names whose uses in a TU matter: the PCH's macros and the names its files #undef.
    std::unordered_set<std::string_view> watched;
    std::unordered_map<std::string_view, const PchManifest::Macro*> macros; ///< by name
    /// The scan of a TU's own file, kept per path and content hash (the TUs of a run share their
    /// headers): occurrences that matter to this PCH only.
    struct Occurrence {
        uint32_t offset = 0;
        std::string name;
        /// 'u': a use of a watched name; 'd': a #define, 'x': an #undef, of a name the PCH's
        /// files hold.
        char kind = 'u';
    };
    std::vector<Occurrence> scan(const std::string& path, uint64_t hash,
                                 std::string_view text) const;
    /// The files any entry of the unguarded `file` includes.
    const std::vector<uint32_t>& childFiles(uint32_t file) const {
        static const std::vector<uint32_t> none;
        auto found = children.find(file);
        return found == children.end() ? none : found->second;
    }
    std::unordered_map<uint32_t, std::vector<uint32_t>> children; ///< of the unguarded files

private:
    mutable std::mutex scansMu_;
    mutable std::unordered_map<std::string, std::pair<uint64_t, std::vector<Occurrence>>> scans_;
};

/// The manifest beside `pchPath`, loaded once per process for as long as the file is unchanged;
/// nullptr if it is missing or malformed.
std::shared_ptr<const LoadedPch> loadPch(const std::string& pchPath);

/// One identifier or directive name of a C or C++ text, as scanIdentifiers() finds it.
struct Token {
    uint32_t offset = 0;
    std::string_view name;
    /// 'd': the name a #define names; 'u': the name an #undef names; 'b': an identifier in a
    /// #define's body; 'i': any other identifier.
    char kind = 'i';
};

/// Identifiers of `text`, in order, outside comments, string and character literals (raw strings
/// too) and the names of #include'd files; lexical only (#if 0 blocks count).
std::vector<Token> scanIdentifiers(std::string_view text);

/// True if every #include of `text` is inside an `#ifndef G` / `#define G` block that ends at its
/// last directive, with no #else of its own, and no #include before it: entered again, the file
/// includes nothing, though clang does not count it as include-guarded (a preamble before the
/// guard, such as glibc's "Never include <bits/stat.h> directly" check).
bool includesOnlyOnce(std::string_view text);

/// Chooses a PCH's headers before any parse, from the text: the #includes a TU's main file and
/// the project headers it reaches make outside any #if (a header's own include guard aside),
/// resolved as clang would through the directory of the includer, -iquote, -I and -isystem.
/// What resolves through the first three is a project header: followed, and named by real path
/// if it is include-guarded (#pragma once, or #ifndef/#define around all of it). Anything else
/// is a system header, named as spelled and not followed.
class IncludeScanner {
public:
    explicit IncludeScanner(const CompileCommand& configuration);
    /// As PchManifest::headers spells them, in the order the preprocessor would enter them.
    std::vector<std::string> headersOf(const std::string& mainFile);

private:
    struct Scanned {
        bool guarded = false;
        std::vector<std::pair<bool, std::string>> includes; ///< (angled, name), unconditional
    };
    const Scanned& scan(const std::string& path);
    /// (real path, found through -isystem), or nullopt: not found, a compiler directory's.
    std::optional<std::pair<std::string, bool>> resolve(const std::string& includer,
                                                        const std::string& name, bool angled);
    std::vector<std::string> quote_, user_, system_;
    std::unordered_map<std::string, Scanned> files_;
};

} // namespace symdex
