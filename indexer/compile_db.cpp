#include "indexer/compile_db.h"

#include "store/encoding.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unordered_map>
#include <unordered_set>

namespace symdex {

namespace {

struct TextPosition {
    int line = 1;
    int column = 1; ///< in bytes, like the compilers' messages
};

/// Line and column of byte offsets in one text. The line starts are found once, so a database
/// with hundreds of thousands of warning entries costs a binary search per warning, not a rescan
/// of the text from its start.
class LineIndex {
public:
    explicit LineIndex(std::string_view text) : size_(text.size()) {
        lineStarts_.push_back(0);
        for (size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1))
            lineStarts_.push_back(i + 1);
    }

    TextPosition positionOf(size_t offset) const {
        offset = std::min(offset, size_);
        // The last line start at or before the offset.
        auto next = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
        const size_t line = size_t(next - lineStarts_.begin());
        return {int(line), int(offset - lineStarts_[line - 1]) + 1};
    }

private:
    size_t size_;
    std::vector<size_t> lineStarts_;
};

/// Byte offsets of the elements of a top-level JSON array, so errors can name an entry's line.
/// Only called on text that already parsed as JSON.
std::vector<size_t> topLevelElementOffsets(std::string_view text) {
    std::vector<size_t> offsets;
    int depth = 0;
    bool inString = false, expectElement = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (depth == 1 && expectElement) {
            offsets.push_back(i);
            expectElement = false;
        }
        switch (c) {
        case '"':
            inString = true;
            break;
        case '[':
        case '{':
            if (++depth == 1)
                expectElement = true;
            break;
        case ']':
        case '}':
            --depth;
            break;
        case ',':
            if (depth == 1)
                expectElement = true;
            break;
        default:
            break;
        }
    }
    return offsets;
}

/// Flags whose value is a path, joined ("-Iinc") or separate ("-I inc").
constexpr std::string_view kPathFlags[] = {
    "-I",        "-iquote",   "-isystem",      "-idirafter",    "-include",     "-imacros",
    "-isysroot", "-F",        "-iframework",   "-cxx-isystem",  "-include-pch", "-ivfsoverlay",
    "-B",        "--sysroot", "-resource-dir", "-isystem-after"};
/// Flags whose value follows an '='.
constexpr std::string_view kPathFlagsWithEquals[] = {"--sysroot=",
                                                     "-resource-dir=",
                                                     "-fmodule-map-file=",
                                                     "-fmodules-cache-path=",
                                                     "-fprebuilt-module-path=",
                                                     "--include-directory="};

bool isCompilerWrapper(std::string_view arg) {
    std::string_view base = arg.substr(arg.rfind('/') + 1);
    return base == "ccache" || base == "sccache" || base == "distcc" || base == "icecc";
}

/// A flag value made absolute, except sysroot-relative ("=...") and empty values.
std::string absoluteFlagValue(std::string_view value, const std::string& directory) {
    if (value.empty() || value.front() == '=' || value.front() == '/')
        return std::string(value);
    return absolutePath(value, directory);
}

/// `arg` with a joined path value made absolute ("-Iinc" -> "-I/dir/inc").
std::string absolutePathFlag(const std::string& arg, const std::string& directory) {
    for (std::string_view flag : kPathFlagsWithEquals)
        if (arg.starts_with(flag))
            return std::string(flag) +
                   absoluteFlagValue(std::string_view(arg).substr(flag.size()), directory);
    // Longest first, so that "-include-pch" is not read as "-include" + "-pch".
    static constexpr std::string_view joinable[] = {"-isystem-after",
                                                    "-include-pch",
                                                    "-cxx-isystem",
                                                    "-ivfsoverlay",
                                                    "-iframework",
                                                    "-idirafter",
                                                    "-isysroot",
                                                    "-isystem",
                                                    "-include",
                                                    "-imacros",
                                                    "-iquote",
                                                    "-I",
                                                    "-F",
                                                    "-B"};
    for (std::string_view flag : joinable)
        if (arg.size() > flag.size() && arg.starts_with(flag))
            return std::string(flag) +
                   absoluteFlagValue(std::string_view(arg).substr(flag.size()), directory);
    return arg;
}

std::string readFile(const std::string& path, bool* ok) {
    std::string text;
    std::ifstream in(path, std::ios::binary);
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (in && !ec) {
        // One read into a buffer of the right size: a database can be hundreds of megabytes.
        text.resize(size_t(size));
        in.read(text.data(), std::streamsize(size));
        text.resize(size_t(in.gcount()));
    }
    *ok = in.good() || (in.eof() && !ec);
    return text;
}

/// canonicalPath() and a regular-file check for many sources in few directories. realpath(3)
/// reads every component of every path (a readlink(2) each); here each directory is resolved once
/// per load and each source costs one lstat(2). Equivalent to canonicalPath(), because a path
/// whose last component is not a symlink resolves to its resolved directory plus that component.
class SourceResolver {
public:
    struct Source {
        std::string path; ///< as canonicalPath() gives it
        bool isRegularFile = false;
    };

    /// `path` must be absolute and lexically normal (absolutePath()).
    Source resolve(const std::string& path) {
        const size_t slash = path.rfind('/');
        if (slash == std::string::npos || slash + 1 == path.size())
            return resolveSlowly(path);
        const std::string directory = slash == 0 ? "/" : path.substr(0, slash);
        auto [known, inserted] = directories_.try_emplace(directory);
        if (inserted) {
            std::error_code ec;
            std::filesystem::path real = std::filesystem::canonical(directory, ec);
            if (!ec)
                known->second = real.string();
        }
        if (!known->second)
            return {path, false}; // canonicalPath() leaves a path that does not exist alone
        std::string resolved = *known->second;
        if (resolved.back() != '/')
            resolved.push_back('/');
        resolved.append(path, slash + 1);
        struct stat st;
        if (::lstat(resolved.c_str(), &st) != 0)
            return {path, false};
        if (S_ISLNK(st.st_mode))
            return resolveSlowly(path);
        return {std::move(resolved), S_ISREG(st.st_mode)};
    }

private:
    static Source resolveSlowly(const std::string& path) {
        Source source{canonicalPath(path)};
        std::error_code ec;
        source.isRegularFile = std::filesystem::is_regular_file(source.path, ec);
        return source;
    }

    /// Lexical directory -> its physical path; nullopt when it does not resolve.
    std::unordered_map<std::string, std::optional<std::string>> directories_;
};

} // namespace

uint64_t CompileCommand::hash() const {
    std::string joined = directory;
    for (const std::string& arg : arguments) {
        joined.push_back('\0');
        joined += arg;
    }
    // The environment libclang's driver reads as part of the command (strings in libclang 16):
    // include directories, where it looks for the compiler installation, and its config files.
    // Parses in this process and in symdex-worker (which inherits it) see the same values.
    for (const char* name :
         {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
          "OBJCPLUS_INCLUDE_PATH", "COMPILER_PATH", "CLANG_NO_DEFAULT_CONFIG", "SDKROOT"}) {
        if (const char* value = std::getenv(name)) {
            joined.push_back('\0');
            joined += name;
            joined.push_back('=');
            joined += value;
        }
    }
    return hash64(joined);
}

namespace {

/// Whether lexically_normal() would leave `path` as it is: no empty, "." or ".." component and no
/// trailing '/'. Nearly every path in a database is, and sending each through std::filesystem::path
/// was a fifth of the load of a big one.
bool isLexicallyNormal(std::string_view path) {
    if (path == "/")
        return true;
    for (size_t start = !path.empty() && path.front() == '/' ? 1 : 0;;) {
        const size_t end = path.find('/', start);
        const std::string_view part = path.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            return false;
        if (end == std::string_view::npos)
            return true;
        start = end + 1;
    }
}

} // namespace

std::string absolutePath(std::string_view path, std::string_view base) {
    if (isLexicallyNormal(path)) {
        if (path.front() == '/')
            return std::string(path);
        if (base.starts_with('/') && isLexicallyNormal(base)) {
            std::string joined(base);
            if (joined != "/")
                joined.push_back('/');
            joined += path;
            return joined;
        }
    }
    std::filesystem::path p(path);
    if (p.is_relative())
        p = std::filesystem::path(base) / p;
    std::string normal = p.lexically_normal().string();
    if (normal.size() > 1 && normal.back() == '/')
        normal.pop_back();
    return normal;
}

std::string canonicalPath(const std::string& path) {
    std::error_code ec;
    std::filesystem::path real = std::filesystem::canonical(path, ec);
    return ec ? path : real.string();
}

std::vector<std::string> splitCommandLine(std::string_view command) {
    std::vector<std::string> args;
    std::string current;
    bool inArg = false;
    char quote = 0;
    for (size_t i = 0; i < command.size(); ++i) {
        char c = command[i];
        if (quote == '\'') {
            if (c == '\'')
                quote = 0;
            else
                current.push_back(c);
            continue;
        }
        if (c == '\\' && i + 1 < command.size()) {
            char next = command[i + 1];
            // Inside double quotes a backslash only escapes the characters the shell treats so.
            if (quote == '"' && next != '"' && next != '\\' && next != '$' && next != '`') {
                current.push_back(c);
            } else {
                current.push_back(next);
                ++i;
            }
            inArg = true;
            continue;
        }
        if (quote == '"') {
            if (c == '"')
                quote = 0;
            else
                current.push_back(c);
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
            inArg = true;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (inArg)
                args.push_back(std::move(current));
            current.clear();
            inArg = false;
        } else {
            current.push_back(c);
            inArg = true;
        }
    }
    if (inArg)
        args.push_back(std::move(current));
    return args;
}

std::vector<std::string> splitResponseFile(std::string_view text) {
    if (text.starts_with("\xEF\xBB\xBF"))
        text.remove_prefix(3);
    auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    std::vector<std::string> args;
    std::string token;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            token.push_back(text[++i]);
        } else if (c == '"' || c == '\'') {
            for (++i; i < text.size() && text[i] != c; ++i) {
                if (text[i] == '\\' && i + 1 < text.size())
                    ++i;
                token.push_back(text[i]);
            }
        } else if (isSpace(c)) {
            if (!token.empty())
                args.push_back(std::move(token));
            token.clear();
        } else {
            token.push_back(c);
        }
    }
    if (!token.empty())
        args.push_back(std::move(token));
    return args;
}

namespace {

bool expandInto(std::vector<std::string>& out, std::vector<std::string> argv,
                const std::string& directory, std::vector<std::string>& chain, std::string* error) {
    for (std::string& arg : argv) {
        if (!arg.starts_with('@')) {
            out.push_back(std::move(arg));
            continue;
        }
        const std::string path = absolutePath(std::string_view(arg).substr(1), directory);
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) {
            out.push_back(std::move(arg));
            continue;
        }
        if (std::find(chain.begin(), chain.end(), path) != chain.end()) {
            *error = "recursive expansion of response file '" + path + "'";
            return false;
        }
        bool ok = false;
        const std::string text =
            std::filesystem::is_regular_file(path, ec) ? readFile(path, &ok) : std::string();
        if (!ok) {
            *error = "cannot read response file '" + path + "'";
            return false;
        }
        chain.push_back(path);
        if (!expandInto(out, splitResponseFile(text), directory, chain, error))
            return false;
        chain.pop_back();
    }
    return true;
}

} // namespace

bool expandResponseFiles(std::vector<std::string>& argv, const std::string& directory,
                         std::string* error) {
    if (std::none_of(argv.begin(), argv.end(),
                     [](const std::string& arg) { return arg.starts_with('@'); }))
        return true;
    std::vector<std::string> out, chain;
    if (!expandInto(out, std::move(argv), directory, chain, error))
        return false;
    argv = std::move(out);
    return true;
}

std::vector<std::string> parseArguments(std::vector<std::string> argv, const std::string& file,
                                        const std::string& directory) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i + 1 < argv.size() && isCompilerWrapper(argv[i]))
        ++i;
    if (i < argv.size())
        out.push_back(argv[i++]);
    for (; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        // Flags that take the next argument as their value.
        if (arg == "-o" || arg == "-MF" || arg == "-MT" || arg == "-MQ" ||
            arg == "--serialize-diagnostics") {
            ++i;
            continue;
        }
        if (arg == "-c" || arg == "-M" || arg == "-MM" || arg == "-MD" || arg == "-MMD" ||
            arg == "-MP" || arg == "-MG" || arg == "-Werror" || arg.starts_with("-Werror=") ||
            arg.starts_with("-Wp,-M") || (arg.starts_with("-o") && arg.size() > 2) ||
            // Keeping the temporaries makes the driver plan one job per phase, and libclang
            // then refuses the command: it wants a single compile job.
            arg == "-save-temps" || arg == "--save-temps" || arg.starts_with("-save-temps=") ||
            arg.starts_with("--save-temps=") ||
            ((arg.starts_with("-MF") || arg.starts_with("-MT") || arg.starts_with("-MQ")) &&
             arg.size() > 3))
            continue;
        if (arg == "--") // what follows are inputs
            break;
        if (!arg.starts_with("-") && absolutePath(arg, directory) == file)
            continue;
        // Paths become absolute here, because libclang must not be given -working-directory:
        // its driver would chdir() the whole process (llvm::vfs::RealFileSystem), under the feet
        // of every other parse thread.
        if (std::find(std::begin(kPathFlags), std::end(kPathFlags), arg) != std::end(kPathFlags) &&
            i + 1 < argv.size()) {
            out.push_back(arg);
            out.push_back(absoluteFlagValue(argv[++i], directory));
            continue;
        }
        out.push_back(absolutePathFlag(arg, directory));
    }
    return out;
}

std::optional<CompileDatabase>
parseCompileDatabase(std::string_view json, const std::string& jsonPath, std::string* error) {
    QJsonParseError parseError;
    QJsonDocument doc = QJsonDocument::fromJson(
        QByteArray::fromRawData(json.data(), qsizetype(json.size())), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        TextPosition pos = LineIndex(json).positionOf(size_t(parseError.offset));
        *error = jsonPath + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) +
                 ": invalid JSON: " + parseError.errorString().toStdString();
        return std::nullopt;
    }
    if (!doc.isArray()) {
        *error = jsonPath + ":1:1: a compilation database must be a JSON array of entries";
        return std::nullopt;
    }
    const std::vector<size_t> offsets = topLevelElementOffsets(json);
    const LineIndex lines(json);
    const std::string jsonDir =
        std::filesystem::path(absolutePath(jsonPath, std::filesystem::current_path().string()))
            .parent_path()
            .string();
    CompileDatabase db;
    db.path = jsonPath;
    std::unordered_set<std::string> seen;
    SourceResolver sources;
    const QJsonArray entries = doc.array();
    db.entries = size_t(entries.size());
    for (qsizetype index = 0; index < entries.size(); ++index) {
        auto where = [&] {
            std::string at = jsonPath;
            if (size_t(index) < offsets.size()) {
                TextPosition pos = lines.positionOf(offsets[size_t(index)]);
                at += ':';
                at += std::to_string(pos.line);
                at += ':';
                at += std::to_string(pos.column);
            }
            return at + ": entry " + std::to_string(index + 1);
        };
        const QJsonValue value = entries[index];
        if (!value.isObject()) {
            *error = where() + ": an entry must be a JSON object";
            return std::nullopt;
        }
        const QJsonObject entry = value.toObject();
        auto stringField = [&](const char* name, bool required, std::string* out) {
            const QJsonValue field = entry.value(QLatin1String(name));
            if (field.isUndefined()) {
                if (required)
                    *error = where() + ": missing \"" + name + "\"";
                return !required;
            }
            if (!field.isString()) {
                *error = where() + ": \"" + name + "\" must be a string";
                return false;
            }
            *out = field.toString().toStdString();
            return true;
        };
        std::string file, directory, command;
        if (!stringField("file", true, &file) || !stringField("directory", true, &directory))
            return std::nullopt;
        if (file.empty() || directory.empty()) {
            *error = where() + ": \"" + (file.empty() ? "file" : "directory") + "\" is empty";
            return std::nullopt;
        }
        directory = absolutePath(directory, jsonDir);
        std::vector<std::string> argv;
        const QJsonValue arguments = entry.value(QLatin1String("arguments"));
        if (!arguments.isUndefined()) {
            if (!arguments.isArray()) {
                *error = where() + ": \"arguments\" must be an array of strings";
                return std::nullopt;
            }
            for (const QJsonValue& arg : arguments.toArray()) {
                if (!arg.isString()) {
                    *error = where() + ": \"arguments\" must be an array of strings";
                    return std::nullopt;
                }
                argv.push_back(arg.toString().toStdString());
            }
        } else {
            if (!stringField("command", false, &command))
                return std::nullopt;
            if (entry.value(QLatin1String("command")).isUndefined()) {
                *error = where() + ": needs \"arguments\" or \"command\"";
                return std::nullopt;
            }
            argv = splitCommandLine(command);
        }
        if (argv.empty()) {
            *error = where() + ": the command is empty";
            return std::nullopt;
        }
        CompileCommand cmd;
        SourceResolver::Source source = sources.resolve(absolutePath(file, directory));
        cmd.file = std::move(source.path);
        cmd.directory = directory;
        if (!source.isRegularFile) {
            db.warnings.push_back(where() + ": source file '" + cmd.file +
                                  "' does not exist; skipped");
            db.missingFiles.push_back(cmd.file);
            continue;
        }
        if (std::string problem; !expandResponseFiles(argv, directory, &problem)) {
            db.warnings.push_back(where() + ": " + problem + "; skipped");
            continue;
        }
        if (!seen.insert(cmd.file).second) {
            db.warnings.push_back(where() + ": '" + cmd.file +
                                  "' appears again; the first entry is used");
            continue;
        }
        cmd.arguments = parseArguments(std::move(argv), cmd.file, directory);
        db.commands.push_back(std::move(cmd));
    }
    return db;
}

std::string emptyDatabaseReason(const CompileDatabase& db) {
    if (!db.commands.empty())
        return {};
    if (db.entries == 0)
        return "'" + db.path + "' has no entries";
    std::string reason =
        "none of the " + std::to_string(db.entries) + " files named by '" + db.path + "' exists";
    if (!db.missingFiles.empty())
        reason += " (first: '" + db.missingFiles.front() + "')";
    return reason;
}

std::optional<CompileDatabase> loadCompileDatabase(const std::string& location,
                                                   std::string* error) {
    std::error_code ec;
    std::string path = location;
    if (std::filesystem::is_directory(location, ec) ||
        (!std::filesystem::exists(location, ec) && !location.ends_with(".json")))
        path = (std::filesystem::path(location) / "compile_commands.json").string();
    if (!std::filesystem::exists(path, ec)) {
        *error = "no compilation database at '" + path +
                 "' (pass a build directory or its compile_commands.json; CMake writes one with "
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)";
        return std::nullopt;
    }
    bool ok = false;
    std::string text = readFile(path, &ok);
    if (!ok) {
        *error = "cannot read '" + path + "'";
        return std::nullopt;
    }
    return parseCompileDatabase(text, path, error);
}

} // namespace symdex
