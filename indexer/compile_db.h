// Reading a JSON compilation database (compile_commands.json): both the "command" and the
// "arguments" form, response files (@file) expanded as clang's driver expands them, relative
// paths resolved against each entry's "directory", and the flags that only matter to a compiler
// that writes files (-o, -c, dependency files) removed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

/// One translation unit, ready to be parsed.
struct CompileCommand {
    std::string file;      ///< absolute, normalised path of the main file
    std::string directory; ///< absolute working directory of the compilation
    /// argv of the parse: the compiler first, then the flags; no source file, no -o/-c/-M*.
    std::vector<std::string> arguments;
    /// hash64 of directory, arguments (response files expanded) and the environment variables
    /// clang's driver reads for the command (CPATH, CPLUS_INCLUDE_PATH, COMPILER_PATH, ...): a
    /// change means the TU must be re-parsed.
    uint64_t hash() const;
};

struct CompileDatabase {
    std::string path; ///< the compile_commands.json that was read
    std::vector<CompileCommand> commands;
    /// Problems that did not stop the load: missing source files, repeated entries.
    std::vector<std::string> warnings;
    size_t entries = 0; ///< entries in the file, usable or not
    /// Main files of the entries skipped because they do not exist (absolute, normalised).
    std::vector<std::string> missingFiles;
    /// A shard's share (shards.h, planShard): per command, its tier in the whole database's rank
    /// (pchTiers), which the share alone would not tell. Empty otherwise.
    std::vector<uint8_t> rankTiers;
};

/// Why `db` gives nothing to index: "'PATH' has no entries", or "none of the N files named by
/// 'PATH' exists (first: FILE)"; empty when it has commands. Indexing such a database would
/// remove every TU, which is never what a user whose checkout moved or whose volume is not
/// mounted wants: callers keep the store unless told to prune (symdex index --prune-empty).
std::string emptyDatabaseReason(const CompileDatabase& db);

/// Loads `location`: a compile_commands.json file or a directory holding one. On failure returns
/// nullopt and sets `error` to a message naming the file and, where it applies, the line, column
/// or entry.
std::optional<CompileDatabase> loadCompileDatabase(const std::string& location, std::string* error);

/// Parses database text; `jsonPath` is used for messages and to resolve relative directories.
std::optional<CompileDatabase>
parseCompileDatabase(std::string_view json, const std::string& jsonPath, std::string* error);

/// Splits a shell command line as compilation databases write them (quotes and backslashes).
std::vector<std::string> splitCommandLine(std::string_view command);

/// Splits a response file as clang does on Linux (llvm::cl::TokenizeGNUCommandLine): whitespace
/// separates, a backslash escapes the next character (inside double quotes too), quotes group,
/// and an empty token ("") is dropped. A leading UTF-8 byte order mark is skipped.
std::vector<std::string> splitResponseFile(std::string_view text);

/// Replaces each "@file" argument by the arguments the file holds, recursively, as clang 16's
/// driver does: a relative name, in the command or inside a response file, is taken relative to
/// `directory` (the compile's working directory); "@file" naming no file stays as it is (clang
/// then reports it). False, with `error` set, for a file that cannot be read (a directory) or a
/// response file that includes itself.
bool expandResponseFiles(std::vector<std::string>& argv, const std::string& directory,
                         std::string* error);

/// Removes what does not belong in a parse: compiler wrappers (ccache, ...), output and
/// dependency-file flags, -c, -Werror, and the source file itself.
std::vector<std::string> parseArguments(std::vector<std::string> argv, const std::string& file,
                                        const std::string& directory);

/// `path` made absolute against `base` and lexically normalised ("a/./b/../c" -> "a/c").
std::string absolutePath(std::string_view path, std::string_view base);

/// The physical path of an existing file (symlinks and ".." resolved, as realpath(3)), so that
/// a file reached through different spellings is one file; `path` itself if it does not exist.
/// Lexical normalisation alone is wrong when ".." follows a symlink (/lib -> usr/lib).
std::string canonicalPath(const std::string& path);

} // namespace symdex
