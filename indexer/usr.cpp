#include "indexer/usr.h"

#include <array>
#include <cctype>
#include <cstring>

namespace symdex {

namespace {

bool identStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool identChar(char c) {
    return identStart(c) || (c >= '0' && c <= '9');
}

bool isKeyword(std::string_view word) {
    static constexpr std::array<std::string_view, 28> keywords = {
        "bool",     "char",     "char8_t",  "char16_t", "char32_t", "wchar_t", "short",
        "int",      "long",     "signed",   "unsigned", "float",    "double",  "void",
        "auto",     "const",    "volatile", "typename", "template", "sizeof",  "alignof",
        "decltype", "noexcept", "true",     "false",    "nullptr",  "this",    "operator"};
    for (std::string_view keyword : keywords)
        if (word == keyword)
            return true;
    return false;
}

} // namespace

std::string_view stableUsr(const char* usr, std::string& scratch) {
    const char* caret = std::strchr(usr, '^');
    if (!caret)
        return usr;
    const std::string_view text(usr);
    scratch.assign(usr, size_t(caret - usr));
    size_t i = size_t(caret - usr);
    const size_t n = text.size();
    bool inQualifier = false;
    while (i < n) {
        const char c = text[i];
        if (!inQualifier) {
            scratch.push_back(c);
            inQualifier = c == '^';
            ++i;
            continue;
        }
        // The qualifier ends at "::" + ':' before the name.
        if (text.compare(i, 3, ":::") == 0) {
            scratch.append(":::");
            i += 3;
            inQualifier = false;
            continue;
        }
        if (text.compare(i, 15, "type-parameter-") == 0) {
            size_t end = i + 15;
            while (end < n &&
                   (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '-'))
                ++end;
            scratch.append(text.substr(i, end - i));
            i = end;
            continue;
        }
        if (!identStart(c)) {
            scratch.push_back(c);
            ++i;
            continue;
        }
        size_t end = i;
        while (end < n && identChar(text[end]))
            ++end;
        const std::string_view word = text.substr(i, end - i);
        const bool qualified = i >= 2 && text[i - 1] == ':' && text[i - 2] == ':';
        size_t after = end;
        while (after < n && text[after] == ' ')
            ++after;
        const bool qualifies =
            text.compare(after, 2, "::") == 0 && text.compare(after, 3, ":::") != 0;
        if (qualifies) {
            // A namespace or class before a name: dropped with its "::".
            i = after + 2;
            continue;
        }
        if (qualified || (after < n && (text[after] == '<' || text[after] == '(')) ||
            isKeyword(word))
            scratch.append(word);
        else
            scratch.push_back('$');
        i = end;
    }
    return scratch;
}

} // namespace symdex
