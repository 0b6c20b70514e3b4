#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

extern char** environ;

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

int runChildTest(const std::string& tag, const std::vector<std::string>& env,
                 bool crashesLibclang) {
    std::vector<std::string> vars = env;
    std::string asan = "ASAN_OPTIONS=", tsan = "TSAN_OPTIONS=";
    for (char** e = environ; *e; ++e) {
        if (std::strncmp(*e, "ASAN_OPTIONS=", 13) == 0)
            asan = std::string(*e) + ":";
        else if (std::strncmp(*e, "TSAN_OPTIONS=", 13) == 0)
            tsan = std::string(*e) + ":";
        else
            vars.emplace_back(*e);
    }
    if (crashesLibclang) {
        asan += "detect_leaks=0";
        tsan += "report_signal_unsafe=0";
    }
    vars.push_back(asan);
    vars.push_back(tsan);
    std::vector<char*> envp;
    for (std::string& v : vars)
        envp.push_back(v.data());
    envp.push_back(nullptr);

    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string arg = tag, warn = "--warn", noTests = "NoTests"; // a tag that selects nothing fails
    std::vector<char*> argv{const_cast<char*>(self.c_str()), arg.data(), warn.data(),
                            noTests.data(), nullptr};
    pid_t child = 0;
    if (posix_spawn(&child, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0)
        return -1;
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
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
