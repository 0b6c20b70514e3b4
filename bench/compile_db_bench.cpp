// compile_db_bench: how long loadCompileDatabase takes on big generated databases.
//
//   compile_db_bench [--kind missing|repeated|both] [N ...]     (default: both 5000 10000 20000
//   400000)
//
// Every database has N entries in the "command" form, as CMake writes them; every other entry
// warns: with "missing" its source file does not exist, with "repeated" it names the file of the
// entry before it again. The other half name distinct existing (empty) files under a temporary
// directory, so the load also pays for realpath and the file checks. Prints one line per database:
// entries, warnings, size, load seconds (wall and CPU) and wall microseconds per entry: a linear
// loader keeps the last figure flat as N grows.
#include "indexer/compile_db.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace symdex;
namespace fs = std::filesystem;

namespace {

constexpr size_t kFilesPerDirectory = 1000;

std::string sourcePath(size_t i) {
    return "src/d" + std::to_string(i / kFilesPerDirectory) + "/f" + std::to_string(i) + ".cc";
}

/// Creates `count` empty sources under `root` (those not there yet).
void createSources(const fs::path& root, size_t from, size_t count) {
    for (size_t i = from; i < count; ++i) {
        if (i % kFilesPerDirectory == 0)
            fs::create_directories(root / fs::path(sourcePath(i)).parent_path());
        std::ofstream(root / sourcePath(i));
    }
}

std::string entry(const fs::path& root, const std::string& file) {
    return "{\"directory\": \"" + root.string() + "\", \"command\": \"/usr/bin/c++ -Iinclude " +
           "-I../third_party -DNDEBUG -O2 -std=c++20 -o obj/" + file + ".o -c " + file +
           "\", \"file\": \"" + file + "\"}";
}

/// The database text: entry i warns when i is odd. Returns the number of existing files used.
std::string databaseText(const fs::path& root, size_t entries, bool repeated, size_t* filesUsed) {
    std::string json = "[\n";
    size_t nextFile = 0;
    for (size_t i = 0; i < entries; ++i) {
        std::string file;
        if (i % 2 == 0)
            file = sourcePath(nextFile++);
        else if (repeated)
            file = sourcePath(nextFile - 1);
        else
            file = "missing/m" + std::to_string(i) + ".cc";
        json += entry(root, file);
        json += i + 1 < entries ? ",\n" : "\n";
    }
    json += "]\n";
    *filesUsed = nextFile;
    return json;
}

/// User plus system time of this process.
double cpuSeconds() {
    rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> kinds = {"missing", "repeated"};
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--kind") && i + 1 < argc) {
            std::string kind = argv[++i];
            if (kind != "both")
                kinds = {kind};
        } else if (std::atoll(argv[i]) > 0) {
            sizes.push_back(size_t(std::atoll(argv[i])));
        } else {
            std::fprintf(stderr,
                         "usage: compile_db_bench [--kind missing|repeated|both] [N ...]\n");
            return 2;
        }
    }
    for (const std::string& kind : kinds)
        if (kind != "missing" && kind != "repeated") {
            std::fprintf(stderr, "compile_db_bench: unknown kind '%s'\n", kind.c_str());
            return 2;
        }
    if (sizes.empty())
        sizes = {5000, 10000, 20000, 400000};

    std::string pattern = (fs::temp_directory_path() / "compile_db_bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        std::perror("compile_db_bench: mkdtemp");
        return 1;
    }
    const fs::path root = pattern;
    size_t created = 0;
    std::printf("%-9s %9s %9s %9s %8s %8s %10s\n", "kind", "entries", "warnings", "MB", "load s",
                "cpu s", "us/entry");
    int status = 0;
    for (size_t entries : sizes) {
        for (const std::string& kind : kinds) {
            size_t filesUsed = 0;
            const std::string json = databaseText(root, entries, kind == "repeated", &filesUsed);
            std::fflush(stdout);
            if (filesUsed > created) {
                const auto start = std::chrono::steady_clock::now();
                createSources(root, created, filesUsed);
                std::fprintf(stderr, "(created %zu sources in %.1f s)\n", filesUsed - created,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                                 .count());
                created = filesUsed;
            }
            const fs::path dbPath = root / "compile_commands.json";
            std::ofstream(dbPath, std::ios::binary) << json;

            std::string error;
            const double cpuBefore = cpuSeconds();
            const auto start = std::chrono::steady_clock::now();
            std::optional<CompileDatabase> db = loadCompileDatabase(dbPath.string(), &error);
            const double wall =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const double cpu = cpuSeconds() - cpuBefore;
            if (!db) {
                std::fprintf(stderr, "compile_db_bench: %s\n", error.c_str());
                status = 1;
                continue;
            }
            std::printf("%-9s %9zu %9zu %9.1f %8.2f %8.2f %10.2f\n", kind.c_str(), entries,
                        db->warnings.size(), double(json.size()) / 1e6, wall, cpu,
                        wall * 1e6 / double(entries));
            std::fflush(stdout);
        }
    }
    std::error_code ec;
    fs::remove_all(root, ec);
    return status;
}
