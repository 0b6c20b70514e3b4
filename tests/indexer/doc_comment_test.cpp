// docComment: the comment documenting a declaration, from the source text alone.
#include "indexer/doc_comment.h"

#include <catch2/catch.hpp>

using namespace symdex;

namespace {

std::string commentAt(std::string_view text, uint32_t firstLine, uint32_t nameLine = 0) {
    return docComment(text, lineStarts(text), firstLine, nameLine ? nameLine : firstLine);
}

} // namespace

TEST_CASE("doc comments: the lines or block right above, or a trailing one", "[index][comments]") {
    const std::string text = "int a; // not a's documentation for b\n" // 1
                             "int b;\n"                                // 2
                             "\n"                                      // 3
                             "/// Scales \\p value by two.\n"          // 4
                             "///\n"                                   // 5
                             "/// Second paragraph.\n"                 // 6
                             "int scale(int value);\n"                 // 7
                             "// A plain comment\n"                    // 8
                             "// on two lines.\n"                      // 9
                             "class Circle {\n"                        // 10
                             "    double x; ///< Across.\n"            // 11
                             "};\n"                                    // 12
                             "/** How many\n"                          // 13
                             " *  circles. */\n"                       // 14
                             "extern int counter;\n"                   // 15
                             "\n"                                      // 16
                             "// Detached by a blank line.\n"          // 17
                             "\n"                                      // 18
                             "int detached;\n"                         // 19
                             "x = 1; /* code before */\n"              // 20
                             "int afterCode;\n";                       // 21
    CHECK(commentAt(text, 2).empty()); // a trailing comment of the line above is not b's
    CHECK(commentAt(text, 7) == "Scales value by two.");
    CHECK(commentAt(text, 10) == "A plain comment on two lines.");
    CHECK(commentAt(text, 11) == "Across.");
    CHECK(commentAt(text, 15) == "How many circles.");
    CHECK(commentAt(text, 19).empty());
    CHECK(commentAt(text, 21).empty()); // a block that does not begin its line is code's
    CHECK(commentAt(text, 1).empty());  // nothing above the first line
    // A declaration whose extent starts above its name's line: the comment above the extent.
    CHECK(commentAt(text, 10, 11) == "Across."); // the trailing one on the name's line first
}

TEST_CASE("doc comments: a block's decoration of several asterisks is not text",
          "[index][comments]") {
    // SQLite's style: every line of the block starts with "**", a line of "**" alone ends a
    // paragraph (sqlite3.h's comments run to 20 KB; the first paragraph is their title).
    const std::string text = "/*\n"                                   // 1
                             "** CAPI3REF: Configuration Options\n"   // 2
                             "** KEYWORDS: {configuration option}\n"  // 3
                             "**\n"                                   // 4
                             "** These constants are the options.\n"  // 5
                             "*/\n"                                   // 6
                             "#define SQLITE_CONFIG_SINGLETHREAD 1\n" // 7
                             "/*****************************\n"       // 8
                             " ***** A banner's title *****\n"        // 9
                             " *****************************/\n"      // 10
                             "int bannered;\n"                        // 11
                             "/* 2 ** 3 is not decoration */\n"       // 12
                             "int power;\n";                          // 13
    CHECK(commentAt(text, 7) == "CAPI3REF: Configuration Options KEYWORDS: {configuration option}");
    CHECK(commentAt(text, 11) == "A banner's title");
    CHECK(commentAt(text, 13) == "2 ** 3 is not decoration");
}

TEST_CASE("doc comments: stars that are text stay", "[index][comments]") {
    auto one = [](std::string line) { return commentAt(line + "\nint x;\n", 2); };
    CHECK(one("/** Returns a char* */") == "Returns a char*");
    CHECK(one("/// @return a const char**") == "@return a const char**");
    CHECK(one("/** Matches src/* */") == "Matches src/*");
    CHECK(one("/** Returns **true** */") == "Returns **true**");
    CHECK(one("/// **Note** the lock is held") == "**Note** the lock is held");
    CHECK(one("/** **Deprecated** use y */") == "**Deprecated** use y");
    CHECK(one("// ***** Title *****") == "Title");
    CHECK(one("// L = *") == "L = *"); // gmock's lock annotation
    CHECK(one("/**Tight.*/") == "Tight.");
}
