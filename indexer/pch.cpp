#include "indexer/pch.h"

#include "indexer/compile_db.h"
#include "store/encoding.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/stat.h>

namespace symdex {

namespace {

bool identStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool identChar(char c) {
    return identStart(c) || (c >= '0' && c <= '9');
}

bool plausible(uint64_t n, std::string_view bytes) {
    return n <= bytes.size();
}

} // namespace

std::string encodePchManifest(const PchManifest& m) {
    std::string out;
    Writer w(out);
    w.varint(m.headers.size());
    for (const std::string& h : m.headers)
        w.string(h);
    w.varint(m.files.size());
    for (const PchManifest::File& f : m.files) {
        w.string(f.path);
        w.fixed64(f.hash);
        w.byte(f.guarded ? 1 : f.includesOnce ? 2 : 0);
        w.varint(f.node);
    }
    w.varint(m.nodes.size());
    for (const PchManifest::Node& node : m.nodes) {
        w.varint(node.file);
        w.varint(node.children.size());
        for (uint32_t c : node.children)
            w.varint(c);
    }
    w.varint(m.identifiers.size());
    for (const auto& [id, files] : m.identifiers) {
        w.string(id);
        w.varint(files.size());
        for (const auto& [f, kinds] : files) {
            w.varint(f);
            w.byte(kinds);
        }
    }
    w.varint(m.macros.size());
    for (const PchManifest::Macro& macro : m.macros) {
        w.string(macro.name);
        w.varint(macro.file);
        w.string(macro.usr);
    }
    w.varint(m.absentPaths.size());
    for (const std::string& p : m.absentPaths)
        w.string(p);
    w.varint(m.namespaceStarts.size());
    for (const PchManifest::NamespaceStart& s : m.namespaceStarts) {
        w.fixed64(s.usrHash);
        w.string(s.path);
        w.varint(s.line);
        w.varint(s.column);
    }
    return out;
}

std::optional<PchManifest> decodePchManifest(std::string_view bytes) {
    Reader r(bytes);
    PchManifest m;
    auto count = [&] {
        const uint64_t n = r.varint();
        return r.failed() || !plausible(n, bytes) ? std::optional<uint64_t>() : n;
    };
    std::optional<uint64_t> n = count();
    for (uint64_t i = 0; n && i < *n && !r.failed(); ++i)
        m.headers.emplace_back(r.string());
    if (!n || !(n = count()))
        return std::nullopt;
    for (uint64_t i = 0; i < *n && !r.failed(); ++i) {
        PchManifest::File& f = m.files.emplace_back();
        f.path = r.string();
        f.hash = r.fixed64();
        const uint8_t guard = r.byte();
        f.guarded = guard == 1;
        f.includesOnce = guard == 2;
        f.node = uint32_t(r.varint());
    }
    if (!(n = count()))
        return std::nullopt;
    for (uint64_t i = 0; i < *n && !r.failed(); ++i) {
        PchManifest::Node& node = m.nodes.emplace_back();
        node.file = uint32_t(r.varint());
        std::optional<uint64_t> k = count();
        if (!k)
            return std::nullopt;
        for (uint64_t j = 0; j < *k && !r.failed(); ++j)
            node.children.push_back(uint32_t(r.varint()));
    }
    if (!(n = count()))
        return std::nullopt;
    for (uint64_t i = 0; i < *n && !r.failed(); ++i) {
        auto& [id, in] = m.identifiers.emplace_back();
        id = r.string();
        std::optional<uint64_t> k = count();
        if (!k)
            return std::nullopt;
        for (uint64_t j = 0; j < *k && !r.failed(); ++j) {
            const uint32_t f = uint32_t(r.varint());
            in.emplace_back(f, r.byte());
        }
    }
    if (!(n = count()))
        return std::nullopt;
    for (uint64_t i = 0; i < *n && !r.failed(); ++i) {
        PchManifest::Macro& macro = m.macros.emplace_back();
        macro.name = r.string();
        macro.file = uint32_t(r.varint());
        macro.usr = r.string();
    }
    if (!(n = count()))
        return std::nullopt;
    for (uint64_t i = 0; i < *n && !r.failed(); ++i)
        m.absentPaths.emplace_back(r.string());
    if (!(n = count()))
        return std::nullopt;
    for (uint64_t i = 0; i < *n && !r.failed(); ++i) {
        PchManifest::NamespaceStart& s = m.namespaceStarts.emplace_back();
        s.usrHash = r.fixed64();
        s.path = r.string();
        s.line = uint32_t(r.varint());
        s.column = uint32_t(r.varint());
    }
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    const size_t files = m.files.size();
    auto inRange = [&](uint32_t i) { return i < files; };
    auto isNode = [&](uint32_t i) { return i < m.nodes.size(); };
    for (const PchManifest::File& f : m.files)
        if (!isNode(f.node))
            return std::nullopt;
    for (const PchManifest::Node& node : m.nodes)
        if (!inRange(node.file) || !std::all_of(node.children.begin(), node.children.end(), isNode))
            return std::nullopt;
    for (const auto& identifier : m.identifiers)
        for (const auto& [f, kinds] : identifier.second)
            if (!inRange(f))
                return std::nullopt;
    for (const PchManifest::Macro& macro : m.macros)
        if (!inRange(macro.file))
            return std::nullopt;
    return m;
}

std::vector<Token> scanIdentifiers(std::string_view text) {
    std::vector<Token> out;
    const size_t n = text.size();
    bool lineStart = true; // only whitespace and comments since the last newline
    // In a directive: 0 none, 1 just after '#', 2 after #define (next name is 'd'), 6 in its
    // body ('b'), 5 after #undef ('u'), 3 in #include (the rest of the line is a file name), 4
    // another directive.
    int directive = 0;
    size_t i = 0;
    while (i < n) {
        const char c = text[i];
        if (c == '\n') {
            // A backslash-newline continues the line (and the directive).
            size_t back = i;
            while (back > 0 &&
                   (text[back - 1] == ' ' || text[back - 1] == '\t' || text[back - 1] == '\r'))
                --back;
            if (!(back > 0 && text[back - 1] == '\\')) {
                lineStart = true;
                directive = 0;
            }
            ++i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\\') {
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < n && text[i + 1] == '/') {
            while (i < n && text[i] != '\n') {
                if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n')
                    ++i; // a continued line comment
                ++i;
            }
            continue;
        }
        if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? n : end + 2;
            continue;
        }
        if (c == '#' && lineStart) {
            lineStart = false;
            directive = 1;
            ++i;
            continue;
        }
        lineStart = false;
        if (directive == 3) {
            ++i; // a file name: <a/b.h> or "a.h"
            continue;
        }
        if (identStart(c)) {
            size_t end = i + 1;
            while (end < n && identChar(text[end]))
                ++end;
            const std::string_view name = text.substr(i, end - i);
            // A raw string literal: R"delim( ... )delim", with any encoding prefix.
            if (end < n && text[end] == '"' && name.back() == 'R' &&
                (name == "R" || name == "LR" || name == "uR" || name == "UR" || name == "u8R")) {
                const size_t open = text.find('(', end + 1);
                if (open != std::string_view::npos) {
                    const std::string close =
                        ")" + std::string(text.substr(end + 1, open - end - 1)) + "\"";
                    const size_t stop = text.find(close, open + 1);
                    i = stop == std::string_view::npos ? n : stop + close.size();
                    continue;
                }
            }
            if (directive == 1) {
                directive = name == "define"                                                  ? 2
                            : name == "undef"                                                 ? 5
                            : name == "include" || name == "include_next" || name == "import" ? 3
                                                                                              : 4;
                i = end;
                continue;
            }
            out.push_back({uint32_t(i), name,
                           directive == 2   ? 'd'
                           : directive == 5 ? 'u'
                           : directive == 6 ? 'b'
                                            : 'i'});
            if (directive == 2)
                directive = 6; // the body follows
            else if (directive == 5)
                directive = 4;
            i = end;
            continue;
        }
        if (c >= '0' && c <= '9') {
            // A number, with its suffix and digit separators (1'000, 0x1fu): not an identifier.
            ++i;
            while (i < n && (identChar(text[i]) || text[i] == '.' || text[i] == '\'' ||
                             ((text[i] == '+' || text[i] == '-') &&
                              (text[i - 1] == 'e' || text[i - 1] == 'E' || text[i - 1] == 'p' ||
                               text[i - 1] == 'P'))))
                ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            ++i;
            while (i < n && text[i] != c && text[i] != '\n') {
                if (text[i] == '\\' && i + 1 < n)
                    ++i;
                ++i;
            }
            if (i < n && text[i] == c)
                ++i;
            continue;
        }
        if (directive == 1)
            directive = 4; // "# 12" line markers, a null directive
        ++i;
    }
    return out;
}

std::vector<LoadedPch::Occurrence> LoadedPch::scan(const std::string& path, uint64_t hash,
                                                   std::string_view text) const {
    {
        std::lock_guard lock(scansMu_);
        auto found = scans_.find(path);
        if (found != scans_.end() && found->second.first == hash)
            return found->second.second;
    }
    std::vector<Occurrence> out;
    for (const Token& token : scanIdentifiers(text)) {
        if (token.kind == 'd' || token.kind == 'u') {
            if (identifiers.contains(token.name))
                out.push_back(
                    {token.offset, std::string(token.name), token.kind == 'd' ? 'd' : 'x'});
        } else if (token.kind == 'i' && watched.contains(token.name)) {
            // A macro body's identifiers are used where the macro is, not where it is defined.
            out.push_back({token.offset, std::string(token.name), 'u'});
        }
    }
    std::lock_guard lock(scansMu_);
    scans_[path] = {hash, out};
    return out;
}

namespace {

/// A directive of a text: its name, the first identifier after it, and the rest of its line.
struct Directive {
    std::string_view name, arg, rest;
};

/// The directives of `text`, in order, outside comments.
std::vector<Directive> directives(std::string_view text) {
    std::vector<Directive> out;
    const size_t n = text.size();
    bool lineStart = true;
    size_t i = 0;
    auto skipBlanks = [&] {
        while (i < n && (text[i] == ' ' || text[i] == '\t'))
            ++i;
    };
    auto word = [&] {
        skipBlanks();
        const size_t begin = i;
        while (i < n && identChar(text[i]))
            ++i;
        return text.substr(begin, i - begin);
    };
    while (i < n) {
        const char c = text[i];
        if (c == '\n') {
            lineStart = true;
            ++i;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? n : end + 2;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
            i = std::min(n, text.find('\n', i));
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
        } else if (c == '#' && lineStart) {
            ++i;
            Directive& d = out.emplace_back();
            d.name = word();
            skipBlanks();
            const size_t rest = i;
            d.arg = word();
            // The rest of the directive, continued lines too (a comment in it ends nothing).
            while (i < n && text[i] != '\n') {
                if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n')
                    ++i;
                else if (text[i] == '/' && i + 1 < n && text[i + 1] == '*') {
                    const size_t end = text.find("*/", i + 2);
                    i = end == std::string_view::npos ? n : end + 1;
                }
                ++i;
            }
            d.rest = text.substr(rest, std::min(i, n) - rest);
            lineStart = false;
        } else {
            // Code: skip to the end of the line (a '#' there is no directive).
            lineStart = false;
            while (i < n && text[i] != '\n' &&
                   !(text[i] == '/' && i + 1 < n && (text[i + 1] == '*' || text[i + 1] == '/'))) {
                if (text[i] == '"' || text[i] == '\'') {
                    const char quote = text[i++];
                    while (i < n && text[i] != quote && text[i] != '\n')
                        i += text[i] == '\\' ? 2 : 1;
                }
                ++i;
            }
        }
    }
    return out;
}

bool opens(std::string_view name) {
    return name == "if" || name == "ifdef" || name == "ifndef";
}

bool isInclude(std::string_view name) {
    return name == "include" || name == "include_next" || name == "import";
}

/// The index of the `#ifndef G` that, with `#define G` next, guards the rest of `list` from
/// `from` on (its #endif is the last directive, no #else of its own); nullopt if there is none.
std::optional<size_t> guardAt(const std::vector<Directive>& list, size_t from) {
    if (from + 1 >= list.size() || list[from].name != "ifndef" || list[from].arg.empty() ||
        list[from + 1].name != "define" || list[from + 1].arg != list[from].arg)
        return std::nullopt;
    int depth = 1;
    for (size_t d = from + 2; d < list.size(); ++d) {
        const std::string_view name = list[d].name;
        if (opens(name))
            ++depth;
        else if ((name == "else" || name == "elif" || name == "elifdef" || name == "elifndef") &&
                 depth == 1)
            return std::nullopt;
        else if (name == "endif" && --depth == 0)
            return d + 1 == list.size() ? std::optional<size_t>(from) : std::nullopt;
    }
    return std::nullopt;
}

} // namespace

bool includesOnlyOnce(std::string_view text) {
    const std::vector<Directive> list = directives(text);
    int depth = 0;
    // The preamble: conditionals and anything else but #include, up to the guard.
    for (size_t d = 0; d < list.size(); ++d) {
        if (isInclude(list[d].name))
            return false;
        if (depth == 0 && guardAt(list, d))
            return true;
        if (opens(list[d].name))
            ++depth;
        else if (list[d].name == "endif")
            --depth;
    }
    return false;
}

IncludeScanner::IncludeScanner(const CompileCommand& configuration) {
    const std::vector<std::string>& args = configuration.arguments;
    for (size_t i = 0; i < args.size(); ++i) {
        for (auto [flag, into] : {std::pair{"-iquote", &quote_}, std::pair{"-I", &user_},
                                  std::pair{"-isystem", &system_}}) {
            const std::string_view f = flag;
            if (args[i] == f && i + 1 < args.size()) {
                into->push_back(args[++i]);
                break;
            }
            if (args[i].size() > f.size() && args[i].starts_with(f) &&
                !(f == "-I" && args[i].starts_with("-isystem"))) {
                into->push_back(args[i].substr(f.size()));
                break;
            }
        }
    }
}

const IncludeScanner::Scanned& IncludeScanner::scan(const std::string& path) {
    auto [it, inserted] = files_.try_emplace(path);
    if (!inserted)
        return it->second;
    Scanned& out = it->second;
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string text = bytes.str();
    const std::vector<Directive> list = directives(text);
    // Its guard: #pragma once, or #ifndef G / #define G around all of it; a main file needs
    // none.
    size_t from = 0;
    int base = 0;
    if (!list.empty() && list[0].name == "pragma" && list[0].arg == "once") {
        out.guarded = true;
        from = 1;
    } else if (guardAt(list, 0)) {
        out.guarded = true;
        from = 2;
        base = 1;
    }
    int depth = base;
    for (size_t d = from; d < list.size(); ++d) {
        const Directive& directive = list[d];
        if (opens(directive.name)) {
            ++depth;
        } else if (directive.name == "endif") {
            --depth;
        } else if (depth == base && directive.name == "include") {
            const std::string_view rest = directive.rest;
            const char close = rest.empty() ? 0 : rest[0] == '<' ? '>' : rest[0] == '"' ? '"' : 0;
            const size_t end = close ? rest.find(close, 1) : std::string_view::npos;
            if (end != std::string_view::npos && end > 1)
                out.includes.emplace_back(close == '>', std::string(rest.substr(1, end - 1)));
        }
    }
    return out;
}

std::optional<std::pair<std::string, bool>>
IncludeScanner::resolve(const std::string& includer, const std::string& name, bool angled) {
    auto exists = [](const std::string& path) {
        struct stat st {};
        return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    };
    // A project header reached through a symlink of another name comes back with an empty path:
    // a PCH would open it by its real name, and its macros' USRs would name that file.
    auto project = [](const std::string& path) {
        std::string real = canonicalPath(path);
        if (std::filesystem::path(real).filename() != std::filesystem::path(path).filename())
            real.clear();
        return std::pair{real, false};
    };
    if (!angled) {
        const std::string near = includer.substr(0, includer.rfind('/') + 1) + name;
        if (exists(near))
            return project(near);
        for (const std::string& dir : quote_)
            if (exists(dir + "/" + name))
                return project(dir + "/" + name);
    }
    for (const std::string& dir : user_)
        if (exists(dir + "/" + name))
            return project(dir + "/" + name);
    for (const std::string& dir : system_)
        if (exists(dir + "/" + name))
            return std::pair{canonicalPath(dir + "/" + name), true};
    return std::nullopt; // in the compiler's own directories: a system header
}

std::vector<std::string> IncludeScanner::headersOf(const std::string& mainFile) {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen{mainFile};
    std::unordered_set<std::string> spellings;
    // Depth first, as the preprocessor enters them: a header comes before what it includes.
    std::vector<std::pair<std::string, size_t>> stack{{mainFile, 0}};
    while (!stack.empty()) {
        auto& [path, next] = stack.back();
        const Scanned& file = scan(path);
        if (next == file.includes.size()) {
            stack.pop_back();
            continue;
        }
        const auto [angled, name] = file.includes[next++];
        const std::string includer = path;
        std::optional<std::pair<std::string, bool>> found = resolve(includer, name, angled);
        std::string spelling;
        if (!found || found->second) {
            spelling = angled ? "<" + name + ">" : "\"" + name + "\"";
        } else if (!found->first.empty() && seen.insert(found->first).second &&
                   scan(found->first).guarded) {
            spelling = "\"" + found->first + "\"";
            stack.emplace_back(found->first, 0);
        }
        if (!spelling.empty() && spellings.insert(spelling).second)
            out.push_back(std::move(spelling));
    }
    return out;
}

std::shared_ptr<const LoadedPch> loadPch(const std::string& pchPath) {
    static std::mutex mu;
    static std::unordered_map<std::string,
                              std::pair<std::pair<int64_t, int64_t>, std::shared_ptr<LoadedPch>>>
        cache;
    const std::string manifestPath = pchPath + ".manifest";
    struct stat st {};
    if (::stat(manifestPath.c_str(), &st) != 0)
        return nullptr;
    const std::pair<int64_t, int64_t> stamp{
        int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, int64_t(st.st_size)};
    std::lock_guard lock(mu);
    auto found = cache.find(pchPath);
    if (found != cache.end() && found->second.first == stamp)
        return found->second.second;
    std::ifstream in(manifestPath, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::optional<PchManifest> manifest = decodePchManifest(bytes.str());
    if (!manifest)
        return nullptr;
    auto loaded = std::make_shared<LoadedPch>();
    loaded->path = pchPath;
    loaded->manifest = std::move(*manifest);
    for (uint32_t i = 0; i < loaded->manifest.files.size(); ++i)
        loaded->fileIndex.emplace(loaded->manifest.files[i].path, i);
    for (const auto& [id, files] : loaded->manifest.identifiers) {
        loaded->identifiers.emplace(id, &files);
        if (std::any_of(files.begin(), files.end(),
                        [](const auto& file) { return file.second & PchManifest::kUndef; }))
            loaded->watched.insert(id);
    }
    for (const PchManifest::Macro& macro : loaded->manifest.macros) {
        loaded->macros[macro.name] = &macro;
        loaded->watched.insert(macro.name);
    }
    for (const PchManifest::Node& node : loaded->manifest.nodes)
        if (!loaded->manifest.files[node.file].guarded) {
            std::vector<uint32_t>& all = loaded->children[node.file];
            for (uint32_t c : node.children)
                all.push_back(loaded->manifest.nodes[c].file);
        }
    for (auto& [file, all] : loaded->children) {
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
    }
    cache[pchPath] = {stamp, loaded};
    return loaded;
}

} // namespace symdex
