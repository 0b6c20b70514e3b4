#include "cli/query_format.h"

#include "cli/cli_common.h"
#include "store/encoding.h"

#include <fstream>

namespace symdex::cli {

void addJsonOption(QCommandLineParser& parser) {
    parser.addOption(QCommandLineOption("json", "Print JSON instead of text."));
}

QString positional(const QCommandLineParser& parser, const char* what) {
    const QStringList args = parser.positionalArguments();
    if (args.size() != 1)
        throw UsageError{std::string("expected exactly one ") + what};
    return args.front();
}

QJsonObject symbolJson(const Symbol& s, const std::string& path) {
    QJsonObject o;
    o["name"] = qs(s.name);
    o["qualifiedName"] = qs(s.qualifiedName);
    o["kind"] = qs(kindDisplayName(s.kind, s.flags));
    o["usr"] = qs(s.usr);
    o["path"] = qs(path);
    o["line"] = int(s.location.line);
    o["column"] = int(s.location.column);
    o["definition"] = s.isDefinition();
    if (!s.signature.empty())
        o["signature"] = qs(s.signature);
    if (!s.comment.empty())
        o["comment"] = qs(s.comment);
    o["extent"] = QJsonObject{{"startLine", int(s.extent.begin.line)},
                              {"startColumn", int(s.extent.begin.column)},
                              {"endLine", int(s.extent.end.line)},
                              {"endColumn", int(s.extent.end.column)}};
    return o;
}

std::string location(const std::string& path, Position pos) {
    return displayPath(path) + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

std::string SourceLines::line(const std::string& path, uint32_t number) {
    auto it = files_.find(path);
    if (it == files_.end()) {
        std::vector<std::string> lines;
        std::ifstream in(path);
        for (std::string l; std::getline(in, l);)
            lines.push_back(std::move(l));
        it = files_.emplace(path, std::move(lines)).first;
    }
    if (number == 0 || number > it->second.size())
        return {};
    std::string text = it->second[number - 1];
    size_t start = text.find_first_not_of(" \t");
    return start == std::string::npos ? std::string() : text.substr(start);
}

std::vector<uint64_t> resolve(QueryBackend& store, const QString& arg) {
    const std::string text = arg.toStdString();
    if (text.starts_with("c:"))
        return {hash64(text)};
    return store.resolveName(text);
}

} // namespace symdex::cli
