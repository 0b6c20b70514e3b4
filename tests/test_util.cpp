#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace symdex::test {

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "symdex-test-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
        throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

void copyFixture(const std::string& name, const std::filesystem::path& dir) {
    std::filesystem::copy(std::filesystem::path(SYMDEX_FIXTURES_DIR) / name, dir,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
}

void writeCompileDb(const std::filesystem::path& dir, const std::vector<std::string>& sources,
                    const std::vector<std::string>& flags) {
    QJsonArray entries;
    for (const std::string& source : sources) {
        QJsonArray args{"c++"};
        for (const std::string& flag : flags)
            args.append(QString::fromStdString(flag));
        args.append("-c");
        args.append(QString::fromStdString(source));
        args.append("-o");
        args.append(QString::fromStdString(source + ".o"));
        entries.append(QJsonObject{{"directory", QString::fromStdString(dir.string())},
                                   {"file", QString::fromStdString(source)},
                                   {"arguments", args}});
    }
    writeFile(dir / "compile_commands.json", QJsonDocument(entries).toJson().toStdString());
}

void writeFile(const std::filesystem::path& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << contents;
    if (!out)
        throw std::runtime_error("cannot write " + path.string());
}

std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace symdex::test
