#include "cli/commands.h"

int main(int argc, char** argv) {
    return symdex::cli::runCli(argc, argv);
}
