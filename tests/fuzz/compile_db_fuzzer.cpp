// Fuzzes the compile-database loader with the input as the text of a compile_commands.json, and
// the path and command-line helpers with it as a path and as a command line. The loader looks at
// the file system (stat, realpath) but never writes to it.
//
// Checked beyond "no crash, no sanitizer report": every message names the database (and an entry
// names its line and column), every command has an absolute file, and absolutePath() agrees with
// std::filesystem's lexical normalisation.
#include "indexer/compile_db.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace symdex;

namespace {

constexpr const char* kJsonPath = "/fuzz/compile_commands.json";

void require(bool condition, const char* what, const std::string& detail) {
    if (!condition) {
        std::fprintf(stderr, "compile_db_fuzzer: %s: '%s'\n", what, detail.c_str());
        std::abort();
    }
}

/// absolutePath() as std::filesystem spells it.
std::string referenceAbsolutePath(const std::string& path, const std::string& base) {
    std::filesystem::path p(path);
    if (p.is_relative())
        p = std::filesystem::path(base) / p;
    std::string normal = p.lexically_normal().string();
    if (normal.size() > 1 && normal.back() == '/')
        normal.pop_back();
    return normal;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::string error;
    std::optional<CompileDatabase> db = parseCompileDatabase(text, kJsonPath, &error);
    const std::string prefix = std::string(kJsonPath) + ":";
    if (!db) {
        require(error.starts_with(prefix), "an error that does not name the database", error);
    } else {
        for (const std::string& warning : db->warnings)
            require(warning.starts_with(prefix) && warning.find(": entry ") != std::string::npos,
                    "a warning that does not name the database and entry", warning);
        for (const CompileCommand& command : db->commands) {
            require(command.file.starts_with('/'), "a relative source path", command.file);
            require(!command.arguments.empty(), "a command without a compiler", command.file);
        }
    }

    // The input as a path, against a normal base and against one that is not.
    for (const std::string base : {"/work/build", "/work/./x/../build/"}) {
        require(absolutePath(text, base) == referenceAbsolutePath(text, base),
                "absolutePath() differs from lexically_normal()", text);
    }
    const std::vector<std::string> argv = splitCommandLine(text);
    parseArguments(argv, "/work/a.cc", "/work");
    return 0;
}
