// Shared by the CLI's commands: exit codes, option parsing helpers, locating the store, and
// printing paths and JSON.
#pragma once

#include "indexer/compile_db.h"
#include "store/symbol_store.h"

#include <QCommandLineParser>
#include <QJsonDocument>
#include <QStringList>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace symdex::cli {

/// The CLI's exit codes, the same for every command.
enum ExitCode : int {
    kExitOk = 0,
    kExitNotFound = 1, ///< the query ran and found nothing
    kExitUsage = 2,    ///< bad usage or input (a damaged store too): message on stderr
    kExitFailed = 3,   ///< the command ran, and part of its work failed (a benchmark run)
    kExitInternal = 4, ///< a bug: an exception no layer turned into a message for the user
};

/// A command's usage error or input error; main() prints it and exits kExitUsage.
struct UsageError {
    std::string message;
};

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const QStringList& args);
};

/// Runs a command, mapping what it throws to an exit code with a message "symdex NAME: ..." on
/// stderr: UsageError and StoreError are the user's input (kExitUsage); anything else is an
/// internal error (kExitInternal).
int runGuarded(const char* name, const std::function<int()>& run);

/// Parses `args` (args[0] is "symdex COMMAND") with `parser`, which gets --help added; prints help
/// and returns false-with-exit-0 when asked. Throws UsageError on a bad option.
/// Returns true when the command should go on.
bool parseCommandLine(QCommandLineParser& parser, const QStringList& args, const char* summary);

/// The store directory: --store if given, else the nearest `.symdex` in the current directory or
/// one of its parents, else `.symdex` in the current directory.
std::filesystem::path storeDirectory(const QCommandLineParser& parser);
void addStoreOption(QCommandLineParser& parser);

/// -p BUILD: the compilation database.
void addDatabaseOption(QCommandLineParser& parser);
/// Loads the database -p names (default ./, then ./build), printing its first warnings to stderr.
/// Throws UsageError when it cannot be read.
CompileDatabase loadDatabase(const QCommandLineParser& parser);
/// A --threads value, 1..1024.
unsigned parseThreadCount(const QString& value);
/// A --lock-mode value.
LockMode parseLockModeOption(const QString& value);
/// An --index-priority value: true for "low", false for "normal", `byDefault` when empty.
bool parseIndexPriorityOption(const QString& value, bool byDefault);
/// A --tu-timeout value in seconds (0: no limit).
std::chrono::milliseconds parseTuTimeout(const QString& value);

/// `path` relative to the current directory when it lies below it, else as is.
std::string displayPath(const std::string& path);

/// Writes `doc` (indented) to stdout.
void printJson(const QJsonDocument& doc);

/// "12,345"
std::string withThousands(uint64_t n);

} // namespace symdex::cli
