// `symdex bench`: hands over to the symdex-bench program beside this binary (bench/), which
// links what the benchmark needs (Qt Gui and Svg for the chart) so that symdex does not.
#include "cli/cli_common.h"
#include "cli/commands.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <vector>

namespace symdex::cli {

int runBench(const QStringList& args) {
    const std::filesystem::path program =
        std::filesystem::read_symlink("/proc/self/exe").parent_path() / "symdex-bench";
    std::vector<std::string> words{program.string()};
    for (qsizetype i = 1; i < args.size(); ++i)
        words.push_back(args[i].toLocal8Bit().toStdString());
    std::vector<char*> argv;
    for (std::string& word : words)
        argv.push_back(word.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    ::execv(program.c_str(), argv.data());
    throw UsageError{"cannot run " + program.string() + ": " + std::strerror(errno) +
                     " (symdex bench needs symdex-bench beside symdex)"};
}

} // namespace symdex::cli
