// `symdex bench` end to end, as a user runs it: the symdex binary on a small synthetic tree, two
// thread counts and both lock modes, one round. Asserts what it produced, never how fast.
#include "bench/child_process.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <catch2/catch.hpp>

#include <sstream>

using namespace symdex;
using symdex::test::TempDir;

TEST_CASE("symdex bench on a synthetic tree: table, CSV, JSON and chart, every run verified",
          "[bench][e2e]") {
    TempDir dir;
    const std::filesystem::path out = dir.path() / "bench";
    std::string stdoutText;
    bench::ChildProcess::Options options;
    options.stderrPath = dir.path() / "stderr.txt";
    const bench::ChildExit exit = bench::runToCompletion(
        {SYMDEX_BINARY, "bench", "--synthetic", "6,8,2", "--seed", "5", "--threads", "1,2",
         "--repeat", "1", "--query-rate", "2000", "--idle-queries", "100", "--out", out.string()},
        options, &stdoutText);
    INFO(test::readFile(dir.path() / "stderr.txt"));
    INFO(stdoutText);
    REQUIRE(exit.succeeded());

    CHECK(stdoutText.find("symdex bench: 6 TUs") != std::string::npos);
    CHECK(stdoutText.find("symdex per-file    1") != std::string::npos);
    CHECK(stdoutText.find("symdex global      2") != std::string::npos);
    CHECK(stdoutText.find("FAILED") == std::string::npos);

    std::istringstream csv(test::readFile(out / "results.csv"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(csv, line);)
        lines.push_back(line);
    REQUIRE(lines.size() == 5);
    CHECK(lines[1].rfind("per-file,1,1,0,", 0) == 0);
    CHECK(lines[2].rfind("global,1,1,0,", 0) == 0);
    CHECK(lines[3].rfind("per-file,2,1,0,", 0) == 0);
    CHECK(lines[4].rfind("global,2,1,0,", 0) == 0);

    const QJsonObject json =
        QJsonDocument::fromJson(QByteArray::fromStdString(test::readFile(out / "results.json")))
            .object();
    const QJsonArray runs = json["runs"].toArray();
    REQUIRE(runs.size() == 4);
    for (const QJsonValue& run : runs) {
        const QJsonObject r = run.toObject();
        CHECK(r["ok"].toBool());
        CHECK(r["tus_indexed"].toInt() == 6);
        CHECK(r["wall_s"].toDouble() > 0);
        CHECK(
            r["symdex"].toObject()["latency_idle"].toObject()["name"].toObject()["count"].toInt() ==
            50);
    }
    const QJsonObject perFileTwo = json["rows"].toArray()[2].toObject();
    CHECK(perFileTwo["threads"].toInt() == 2);
    CHECK(perFileTwo["speedup"].toDouble() > 0);
    CHECK(perFileTwo.contains("lock_acquisitions"));

    // The reference store holds the symbols the generator promised: the runs were checked
    // against it.
    StoreOptions storeOptions;
    storeOptions.directory = out / "reference-store";
    storeOptions.readOnly = true;
    const std::string tree = test::readFile(out / "synthetic-6-8-2-seed-5" / "src" / "file_0.cpp");
    CHECK(tree.find("--synthetic 6,8,2 --seed 5") != std::string::npos);
    CHECK(SymbolStore::open(storeOptions)->stats().tus == 6);

    CHECK(std::filesystem::file_size(out / "chart.png") > 10000);
    CHECK(test::readFile(out / "chart.svg").find("Speedup against 1 thread") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out / "run-store"));
}

TEST_CASE("symdex bench refuses bad options before running anything", "[bench][e2e]") {
    TempDir dir;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--synthetic", "0,1,1"},
          std::vector<std::string>{"--synthetic", "2,2,0", "--peers", "ctags"},
          std::vector<std::string>{"--synthetic", "2,2,0", "--threads", "0"},
          std::vector<std::string>{"--synthetic", "2,2,0", "--repeat", "0"},
          std::vector<std::string>{"--synthetic", "2,2,0", "-p", dir.path().string()}}) {
        std::vector<std::string> argv{SYMDEX_BINARY, "bench", "--out", dir / "out"};
        argv.insert(argv.end(), args.begin(), args.end());
        const bench::ChildExit exit = bench::runToCompletion(argv, {}, nullptr);
        INFO(args[1]);
        CHECK(exit.describe() == "exit status 2");
    }
    CHECK_FALSE(std::filesystem::exists(dir.path() / "out" / "results.csv"));
}
