// What the query commands share: how a NAME|USR argument is resolved and how symbols and
// locations are printed, as text lines (`path:line:col: ...`) or JSON.
#pragma once

#include "cli/query_backend.h"

#include <QCommandLineParser>
#include <QJsonObject>

#include <string>
#include <unordered_map>
#include <vector>

namespace symdex::cli {

inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

void addJsonOption(QCommandLineParser& parser);
/// The one positional argument; a UsageError naming `what` otherwise.
QString positional(const QCommandLineParser& parser, const char* what);
/// The symbols a NAME|USR argument stands for.
std::vector<uint64_t> resolve(QueryBackend& store, const QString& arg);
QJsonObject symbolJson(const Symbol& s, const std::string& path);
/// "path:line:col", the path relative to the working directory when under it.
std::string location(const std::string& path, Position pos);

/// Source lines for reference listings, each file read once.
class SourceLines {
public:
    /// Line `number` (1-based) of `path` without its indentation; "" if there is none.
    std::string line(const std::string& path, uint32_t number);

private:
    std::unordered_map<std::string, std::vector<std::string>> files_;
};

} // namespace symdex::cli
