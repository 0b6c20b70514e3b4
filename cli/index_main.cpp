// symdex-index: `symdex index` in a program of its own, which `symdex index` runs (dispatch.cpp).
// It links the indexer and with it libclang and libLLVM, so that symdex does not and its query
// commands start without loading them. Arguments, messages and exit codes are symdex index's.
#include "cli/cli_common.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
    QStringList args{"symdex index"};
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    return symdex::cli::runGuarded("index", [&] { return symdex::cli::runIndex(args); });
}
