// `symdex index` and `symdex bench` hand over to programs beside this binary: symdex-index links
// the indexer, and with it libclang and libLLVM (loading them took about 20 ms and 60 MB of every
// command: docs/design.md), and symdex-bench links Qt Gui and Svg for the chart. So symdex loads
// neither, and its query commands start at once. By execv rather than as a child: the program
// keeps this process's id, terminal, signal dispositions and exit status, so a SIGINT or SIGTERM
// during `symdex index`, its progress bar, its output and its exit codes are what they were when
// it ran in this binary.
#include "cli/cli_common.h"
#include "cli/commands.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <vector>

namespace symdex::cli {

namespace {

/// Replaces this process with `program` (a file beside this binary) run with args[1...]; returns
/// only by throwing, when it cannot be run.
[[noreturn]] void runBeside(const char* program, const QStringList& args) {
    const std::filesystem::path path =
        std::filesystem::read_symlink("/proc/self/exe").parent_path() / program;
    std::vector<std::string> words{path.string()};
    for (qsizetype i = 1; i < args.size(); ++i)
        words.push_back(args[i].toLocal8Bit().toStdString());
    std::vector<char*> argv;
    for (std::string& word : words)
        argv.push_back(word.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    ::execv(path.c_str(), argv.data());
    throw UsageError{"cannot run " + path.string() + ": " + std::strerror(errno) + " (" +
                     args.value(0).toStdString() + " needs " + program + " beside symdex)"};
}

} // namespace

int runIndexProgram(const QStringList& args) {
    runBeside("symdex-index", args);
}

int runBench(const QStringList& args) {
    runBeside("symdex-bench", args);
}

} // namespace symdex::cli
