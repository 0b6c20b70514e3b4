// Helpers shared by the tests: temporary directories and fixture trees with a generated
// compile_commands.json.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace symdex::test {

/// A fresh directory under the system temp dir, removed with the object.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }

private:
    std::filesystem::path path_;
};

/// Copies tests/fixtures/NAME into `dir` and writes a compile_commands.json there with one entry
/// per `sources` path (relative to the fixture), compiled with `flags`.
void copyFixture(const std::string& name, const std::filesystem::path& dir);
void writeCompileDb(const std::filesystem::path& dir, const std::vector<std::string>& sources,
                    const std::vector<std::string>& flags);

/// Runs the hidden test case tagged `tag` ("[grow-child]") of this test binary in a child process,
/// with `env` ("NAME=value") added to this process's environment, and returns its exit code (-1
/// if it did not exit normally). For what one process cannot do: LMDB forbids opening one
/// environment twice in a process, and a parse that crashes libclang leaks what it allocated.
/// With `crashesLibclang`, the child's sanitizers ignore that: LeakSanitizer does not check, and
/// ThreadSanitizer does not report libLLVM's crash handler freeing memory in a signal handler.
int runChildTest(const std::string& tag, const std::vector<std::string>& env,
                 bool crashesLibclang = false);

void writeFile(const std::filesystem::path& path, const std::string& contents);
std::string readFile(const std::filesystem::path& path);

} // namespace symdex::test
