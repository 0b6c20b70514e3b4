#include "cli/commands.h"

#include "cli/cli_common.h"
#include "symdex_version.h"

#include <cstdio>
#include <cstring>

namespace symdex::cli {

namespace {

const Command kCommands[] = {
    {"index", "index a compilation database into the store", runIndexProgram},
    {"find", "find symbols by name (exact, prefix, substring)",
     [](const QStringList& args) { return runFind(args); }},
    {"def", "where a symbol is defined", [](const QStringList& args) { return runDef(args); }},
    {"refs", "every reference to a symbol", [](const QStringList& args) { return runRefs(args); }},
    {"symbols", "the outline of a file", [](const QStringList& args) { return runSymbols(args); }},
    {"show", "a symbol's kind, signature, comment, definition and relations",
     [](const QStringList& args) { return runShow(args); }},
    {"callers", "the calls of a function, with their callers",
     [](const QStringList& args) { return runCallers(args); }},
    {"callees", "the calls a function makes",
     [](const QStringList& args) { return runCallees(args); }},
    {"bases", "a class's base classes", [](const QStringList& args) { return runBases(args); }},
    {"derived", "the classes derived from a class",
     [](const QStringList& args) { return runDerived(args); }},
    {"overrides", "the methods overriding a method (--up: that it overrides)",
     [](const QStringList& args) { return runOverrides(args); }},
    {"stats", "what the store holds", runStats},
    {"lsp", "language server on stdio for editors (bridges to symdexd)", runLsp},
    {"dump", "everything in the store, canonically ordered (to diff stores)", runDump},
    {"merge", "merge the stores of the shards of an index (index --shard K/N)", runMerge},
    {"bench", "thread-scaling benchmark: time, CPU, locks, query latency", runBench},
};

void printUsage(FILE* out) {
    std::fprintf(out, "usage: symdex COMMAND [options]\n\ncommands:\n");
    for (const Command& c : kCommands)
        if (c.summary)
            std::fprintf(out, "  %-8s %s\n", c.name, c.summary);
    std::fprintf(out, "\n'symdex COMMAND --help' describes a command's options.\n"
                      "'symdex --version' prints the version.\n"
                      "Exit codes: 0 success, 1 nothing found, 2 usage or input error, 3 part of\n"
                      "the work failed (a benchmark run), 4 internal error.\n");
}

} // namespace

int runCli(int argc, char** argv) {
    if (argc < 2) {
        printUsage(stderr);
        return kExitUsage;
    }
    const char* name = argv[1];
    if (!std::strcmp(name, "--version") || !std::strcmp(name, "-V") ||
        !std::strcmp(name, "version")) {
        // symdex itself loads no libclang (symdex-index and symdex-worker do): the version it was
        // built against, which they load.
        std::printf("symdex %s (libclang %s)\n", SYMDEX_VERSION, SYMDEX_LIBCLANG_VERSION);
        return kExitOk;
    }
    if (!std::strcmp(name, "-h") || !std::strcmp(name, "--help") || !std::strcmp(name, "help")) {
        if (argc > 2 && std::strcmp(name, "help") == 0) {
            // `symdex help CMD` is `symdex CMD --help`.
            char* forward[] = {argv[0], argv[2], const_cast<char*>("--help")};
            return runCli(3, forward);
        }
        printUsage(stdout);
        return kExitOk;
    }
    for (const Command& c : kCommands) {
        if (std::strcmp(c.name, name) != 0)
            continue;
        QStringList args{QString("symdex ") + c.name};
        for (int i = 2; i < argc; ++i)
            args << QString::fromLocal8Bit(argv[i]);
        return runGuarded(c.name, [&] { return c.run(args); });
    }
    std::fprintf(stderr, "symdex: unknown command '%s'\n\n", name);
    printUsage(stderr);
    return kExitUsage;
}

} // namespace symdex::cli
