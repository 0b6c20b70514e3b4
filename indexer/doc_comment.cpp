#include "indexer/doc_comment.h"

namespace symdex {

namespace {

std::string_view trim(std::string_view s) {
    const size_t begin = s.find_first_not_of(" \t\r");
    if (begin == std::string_view::npos)
        return {};
    return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

std::string_view lineAt(std::string_view text, const std::vector<size_t>& starts, uint32_t line) {
    if (line == 0 || line > starts.size())
        return {};
    const size_t begin = starts[line - 1];
    const size_t end = line < starts.size() ? starts[line] - 1 : text.size();
    return text.substr(begin, end - begin);
}

/// A comment line's text without its markers: "///", "//!", "//", a block's "/**", "/*!", "/*",
/// "*/", and the asterisks a line starts or ends with as decoration (a block's "*", SQLite's
/// "**", a banner's "*****"): a leading run followed by a space or a single leading star, a
/// trailing run of two or more after a space. So a line of stars alone is blank and ends a
/// paragraph, and `char*`, `src/*`, `**bold**` and gmock's `L = *` keep theirs.
std::string_view stripMarkers(std::string_view s) {
    s = trim(s);
    for (std::string_view marker : {"///<", "//!<", "///", "//!", "//", "/**<", "/*!", "/*"})
        if (s.starts_with(marker)) {
            s.remove_prefix(marker.size());
            break;
        }
    if (s.ends_with("*/"))
        s.remove_suffix(2);
    s = trim(s);
    const size_t lead = s.find_first_not_of('*');
    if (lead == std::string_view::npos)
        return {};
    if (lead == 1 || (lead > 1 && (s[lead] == ' ' || s[lead] == '\t')))
        s = trim(s.substr(lead));
    const size_t last = s.find_last_not_of('*');
    if (last + 2 < s.size() && (s[last] == ' ' || s[last] == '\t'))
        s = trim(s.substr(0, last + 1));
    return s;
}

/// Joins comment lines into their first paragraph, dropping Doxygen's \brief and the \p, \a, \c
/// markers of inline words.
std::string firstParagraph(const std::vector<std::string_view>& lines) {
    std::string out;
    for (std::string_view raw : lines) {
        std::string_view line = stripMarkers(raw);
        if (line.empty()) {
            if (!out.empty())
                break;
            continue;
        }
        for (std::string_view command : {"\\brief ", "@brief "})
            if (line.starts_with(command))
                line.remove_prefix(command.size());
        if (!out.empty())
            out += ' ';
        out += line;
    }
    for (std::string_view command : {"\\p ", "\\a ", "\\c ", "@p "})
        for (size_t at; (at = out.find(command)) != std::string::npos;)
            out.erase(at, command.size());
    return out;
}

} // namespace

std::vector<size_t> lineStarts(std::string_view text) {
    std::vector<size_t> starts{0};
    for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n' && i + 1 < text.size())
            starts.push_back(i + 1);
    return starts;
}

std::string docComment(std::string_view text, const std::vector<size_t>& starts, uint32_t firstLine,
                       uint32_t nameLine) {
    // A trailing comment documents what its line declares: "double x; ///< Across".
    const std::string_view own = lineAt(text, starts, nameLine);
    for (std::string_view marker : {"///<", "//!<", "/**<"})
        if (size_t at = own.find(marker); at != std::string_view::npos)
            return firstParagraph({own.substr(at)});
    // The comment lines right above the declaration.
    std::vector<std::string_view> lines;
    uint32_t line = firstLine;
    std::string_view above = trim(lineAt(text, starts, line - 1));
    if (line > 1 && above.ends_with("*/") && !above.starts_with("//")) {
        // A block comment: back to its "/*", which must begin its line.
        for (uint32_t l = line - 1; l >= 1; --l) {
            const std::string_view t = trim(lineAt(text, starts, l));
            lines.insert(lines.begin(), t);
            if (t.find("/*") != std::string_view::npos)
                return t.starts_with("/*") ? firstParagraph(lines) : std::string();
        }
        return {};
    }
    for (uint32_t l = line - 1; l >= 1; --l) {
        const std::string_view t = trim(lineAt(text, starts, l));
        if (!t.starts_with("//"))
            break;
        lines.insert(lines.begin(), t);
    }
    return firstParagraph(lines);
}

} // namespace symdex
