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

void writeFile(const std::filesystem::path& path, const std::string& contents);
std::string readFile(const std::filesystem::path& path);

} // namespace symdex::test
