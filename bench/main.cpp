#include "bench/bench_command.h"

int main(int argc, char** argv) {
    return symdex::bench::runBenchProgram(argc, argv);
}
