// The symdex-bench program's entry point (bench_command.cpp).
#pragma once

namespace symdex::bench {

/// `symdex-bench [options]` is `symdex bench`; `symdex-bench bench-run ...` is one measured run,
/// in a child process of the first.
int runBenchProgram(int argc, char** argv);

} // namespace symdex::bench
