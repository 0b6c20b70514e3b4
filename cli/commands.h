// The `symdex` command table. Each command parses its own options (QCommandLineParser) and
// returns an ExitCode; runCli maps errors to exit codes in one place.
#pragma once

#include <QStringList>

namespace symdex::cli {

int runIndex(const QStringList& args);
int runFind(const QStringList& args);
int runDef(const QStringList& args);
int runRefs(const QStringList& args);
int runSymbols(const QStringList& args);
int runStats(const QStringList& args);
int runLsp(const QStringList& args);
int runDump(const QStringList& args);
/// Runs symdex-bench (beside this binary) with the arguments: the benchmark is a program of its
/// own, so that symdex does not link the chart's Qt Gui and Svg.
int runBench(const QStringList& args);

/// Entry point of the `symdex` binary.
int runCli(int argc, char** argv);

} // namespace symdex::cli
