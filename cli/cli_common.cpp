#include "cli/cli_common.h"

#include "indexer/option_values.h"
#include "store/lmdb.h"

#include <cstdio>
#include <exception>

namespace symdex::cli {

int runGuarded(const char* name, const std::function<int()>& run) {
    try {
        return run();
    } catch (const UsageError& e) {
        std::fprintf(stderr, "symdex %s: %s\n", name, e.message.c_str());
        return kExitUsage;
    } catch (const StoreError& e) {
        std::fprintf(stderr, "symdex %s: %s\n", name, e.what());
        return kExitUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "symdex %s: internal error: %s\n", name, e.what());
        return kExitInternal;
    }
}

bool parseCommandLine(QCommandLineParser& parser, const QStringList& args, const char* summary) {
    parser.setApplicationDescription(QString::fromUtf8(summary));
    QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOption(help);
    if (!parser.parse(args))
        throw UsageError{parser.errorText().toStdString() +
                         " (see: " + args.value(0).toStdString() + " --help)"};
    if (parser.isSet(help)) {
        std::fputs(
            parser.helpText().replace("<executable_name>", args.value(0)).toStdString().c_str(),
            stdout);
        return false;
    }
    return true;
}

void addStoreOption(QCommandLineParser& parser) {
    parser.addOption(QCommandLineOption(
        "store",
        "Symbol store directory (default: the nearest .symdex above the current directory).",
        "DIR"));
}

std::filesystem::path storeDirectory(const QCommandLineParser& parser) {
    if (parser.isSet("store"))
        return std::filesystem::absolute(parser.value("store").toStdString()).lexically_normal();
    std::error_code ec;
    const std::filesystem::path cwd = std::filesystem::current_path();
    for (std::filesystem::path dir = cwd;; dir = dir.parent_path()) {
        if (std::filesystem::is_directory(dir / ".symdex", ec))
            return dir / ".symdex";
        if (dir == dir.parent_path())
            break;
    }
    return cwd / ".symdex";
}

void addDatabaseOption(QCommandLineParser& parser) {
    parser.addOption(QCommandLineOption("p",
                                        "Build directory holding compile_commands.json, or the "
                                        "file itself (default: ./, then ./build).",
                                        "BUILD"));
}

CompileDatabase loadDatabase(const QCommandLineParser& parser) {
    std::string location = parser.value("p").toStdString();
    if (location.empty()) {
        std::error_code ec;
        location = std::filesystem::exists("compile_commands.json", ec) ? "." : "build";
    }
    std::string error;
    std::optional<CompileDatabase> db = loadCompileDatabase(location, &error);
    if (!db)
        throw UsageError{error};
    // A database listing a file many times (one test binary each) would bury the rest.
    constexpr size_t kShownWarnings = 5;
    for (size_t i = 0; i < db->warnings.size() && i < kShownWarnings; ++i)
        std::fprintf(stderr, "warning: %s\n", db->warnings[i].c_str());
    if (db->warnings.size() > kShownWarnings)
        std::fprintf(stderr, "warning: ... and %zu more like these\n",
                     db->warnings.size() - kShownWarnings);
    return std::move(*db);
}

unsigned parseThreadCount(const QString& value) {
    bool ok = false;
    int threads = value.toInt(&ok);
    if (!ok || threads < 1 || threads > 1024)
        throw UsageError{"--threads needs a number from 1 to 1024, not '" + value.toStdString() +
                         "'"};
    return unsigned(threads);
}

LockMode parseLockModeOption(const QString& value) {
    std::optional<LockMode> mode = parseLockMode(value.toStdString());
    if (!mode)
        throw UsageError{"--lock-mode must be per-file or global, not '" + value.toStdString() +
                         "'"};
    return *mode;
}

bool parseIndexPriorityOption(const QString& value, bool byDefault) {
    if (value.isEmpty())
        return byDefault;
    std::optional<bool> low = parseIndexPriority(value.toStdString());
    if (!low)
        throw UsageError{"--index-priority must be low or normal, not '" + value.toStdString() +
                         "'"};
    return *low;
}

std::chrono::milliseconds parseTuTimeout(const QString& value) {
    std::optional<std::chrono::milliseconds> timeout = symdex::parseTuTimeout(value.toStdString());
    if (!timeout)
        throw UsageError{"--tu-timeout needs whole seconds from 0 (no limit) to 86400, not '" +
                         value.toStdString() + "'"};
    return *timeout;
}

std::string displayPath(const std::string& path) {
    static const std::string cwd = std::filesystem::current_path().string() + "/";
    if (path.size() > cwd.size() && path.compare(0, cwd.size(), cwd) == 0)
        return path.substr(cwd.size());
    return path;
}

void printJson(const QJsonDocument& doc) {
    const QByteArray bytes = doc.toJson(QJsonDocument::Indented);
    std::fwrite(bytes.data(), 1, size_t(bytes.size()), stdout);
}

std::string withThousands(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

} // namespace symdex::cli
