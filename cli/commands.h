// The `symdex` command table. Each command parses its own options (QCommandLineParser) and
// returns an ExitCode; runCli maps errors to exit codes in one place.
#pragma once

#include "cli/query_backend.h"

#include <QStringList>

namespace symdex::cli {

/// `symdex index`, in this process: the body of the symdex-index program (index_command.cpp),
/// which links libclang; symdex itself does not link it.
int runIndex(const QStringList& args);
/// Runs symdex-index (beside this binary) with the arguments: `symdex index` in symdex.
int runIndexProgram(const QStringList& args);
/// The query commands ask the backend `open` gives them (tests pass one over their own store).
int runFind(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runDef(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runRefs(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runSymbols(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runCallers(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runCallees(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runBases(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runDerived(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runOverrides(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runShow(const QStringList& args, const OpenBackend& open = openQueryBackend);
int runStats(const QStringList& args);
int runLsp(const QStringList& args);
int runDump(const QStringList& args);
/// `symdex merge`: the shards' stores of `symdex index --shard K/N` into one.
int runMerge(const QStringList& args);
/// Runs symdex-bench (beside this binary) with the arguments: the benchmark is a program of its
/// own, so that symdex does not link the chart's Qt Gui and Svg.
int runBench(const QStringList& args);

/// Entry point of the `symdex` binary.
int runCli(int argc, char** argv);

} // namespace symdex::cli
