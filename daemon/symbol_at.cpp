#include "daemon/symbol_at.h"

#include <cctype>

namespace symdex::daemon {

namespace {

bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80; // UTF-8 identifiers
}

/// "operator+", "operator()", "operator new": spelled at a use without the name.
bool isOperatorName(const std::string& name) {
    return name.starts_with("operator") && (name.size() == 8 || !isIdentifierChar(name[8]));
}

struct Candidate {
    CursorTarget target;
    bool strict = false;     ///< the cursor is inside the name, not just past it
    bool destructor = false; ///< the name is "~Class"
    bool named = true;       ///< the store knows the symbol's name (it declares it)
    bool call = false;       ///< a reference that calls (kRoleCall)
};

/// Whether `c`, a destructor's name, holds `other`, its class's name after the '~'.
bool holdsClassName(const Candidate& c, const Candidate& other) {
    return c.destructor && other.target.start.line == c.target.start.line &&
           other.target.start.column == c.target.start.column + 1 &&
           other.target.length + 1 == c.target.length;
}

/// Whether `a` should be preferred to `b`.
bool better(const Candidate& a, const Candidate& b) {
    if (a.strict != b.strict)
        return a.strict;
    // "~Shape": the destructor, not the class its name repeats (clangd's answer too).
    if (holdsClassName(a, b))
        return true;
    if (holdsClassName(b, a))
        return false;
    if (a.target.length != b.target.length)
        return a.target.length < b.target.length;
    // The same span: a symbol the store declares before one it only saw used (a macro's
    // expansion also uses what the store has no declaration of, at the macro's name).
    if (a.named != b.named)
        return a.named;
    if (a.target.isDeclaration != b.target.isDeclaration)
        return a.target.isDeclaration;
    // `Slice(p, n)`: the class the source names, not the constructor it calls, as clangd.
    return !a.call && b.call;
}

} // namespace

std::optional<Position> onParenthesisBefore(std::string_view line, Position cursor) {
    if (cursor.column < 2 || cursor.column - 2 >= line.size() || line[cursor.column - 2] != '(')
        return std::nullopt;
    return Position{cursor.line, cursor.column - 1};
}

uint32_t identifierLength(std::string_view line, uint32_t offset) {
    size_t i = offset;
    if (i < line.size() && line[i] == '~')
        ++i;
    while (i < line.size() && isIdentifierChar(line[i]))
        ++i;
    return i > offset + (offset < line.size() && line[offset] == '~') ? uint32_t(i - offset) : 0;
}

std::optional<CursorTarget> symbolAt(const std::vector<Symbol>& symbols,
                                     const std::vector<Reference>& references, Position cursor,
                                     const NameLookup& nameOf, std::string_view lineText) {
    std::optional<Candidate> best;
    auto consider = [&](uint64_t usrHash, Position start, uint32_t length, bool isDeclaration,
                        bool destructor, bool named = true, bool call = false) {
        if (start.line != cursor.line || length == 0 || cursor.column < start.column ||
            cursor.column > start.column + length)
            return;
        Candidate c{{usrHash, start, length, isDeclaration},
                    cursor.column < start.column + length,
                    destructor,
                    named,
                    call};
        if (!best || better(c, *best))
            best = c;
    };
    for (const Symbol& s : symbols) {
        // A declaration a macro's expansion makes is not what the cursor is on at the macro's
        // name (gtest's ASSERT_* declare a local `gtest_ar` there; clangd goes to the macro).
        // A specialization's name carries its arguments ("Box<int>", spelled "Box").
        if (!lineText.empty() && s.location.line == cursor.line) {
            const std::string_view spelling = lineText.substr(
                s.location.column - 1, identifierLength(lineText, s.location.column - 1));
            const bool spelled =
                isOperatorName(s.name)
                    ? spelling == "operator"
                    : s.name == spelling || (!spelling.empty() && s.name.starts_with(spelling) &&
                                             s.name[spelling.size()] == '<');
            if (!spelled)
                continue;
        }
        consider(s.usrHash(), s.location, uint32_t(s.name.size()), true, s.name.starts_with('~'));
    }
    for (const Reference& r : references) {
        // Only references starting on the cursor's line, at or before it, can cover it: look up
        // names for those alone.
        if (r.location.line != cursor.line || r.location.column > cursor.column ||
            !isWrittenUse(r.roles))
            continue;
        // The spelling at the start must reach the cursor too (when the line is known): skip
        // the name lookup, a store query, for references that end before it.
        const uint32_t spelled = identifierLength(lineText, r.location.column - 1);
        if (!lineText.empty() && r.location.column + spelled < cursor.column)
            continue;
        std::optional<std::string> name = nameOf(r.usrHash);
        const uint32_t length = name && !name->empty() ? uint32_t(name->size()) : spelled;
        // A reference where the source spells another identifier, or none, is not what the
        // cursor is on: the constructor a variable's declaration calls (libclang reports it at
        // the variable's name), an implicit conversion at a string literal, what a macro
        // expands to at the macro's name. An operator is spelled by its symbol (`+`, `[`), or
        // as `operator` in an explicit call; one at an identifier is a macro's expansion (the
        // `operator=` of gtest's EXPECT_* at the macro's name) or an implicit conversion.
        if (name && !name->empty() && !lineText.empty()) {
            const std::string_view spelling = lineText.substr(r.location.column - 1, spelled);
            if (isOperatorName(*name) ? spelled != 0 && spelling != "operator" : spelling != *name)
                continue;
        }
        consider(r.usrHash, r.location, length, false, name && name->starts_with('~'),
                 name && !name->empty(), (r.roles & kRoleCall) != 0);
    }
    // Right after a call's `(`, on no name (a literal argument, `&x`, `*p`): the call, as clangd
    // takes the `(` there, so its callee (the name just before the parenthesis).
    if (!best && cursor.column - 1 < lineText.size() &&
        !isIdentifierChar(lineText[cursor.column - 1]))
        if (std::optional<Position> paren = onParenthesisBefore(lineText, cursor))
            return symbolAt(symbols, references, *paren, nameOf, lineText);
    if (!best)
        return std::nullopt;
    return best->target;
}

} // namespace symdex::daemon
