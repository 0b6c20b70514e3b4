// symdex bench's arithmetic and output shapes: statistics, aggregation of runs into rows (speedup,
// efficiency, failed runs, peer ratios), results.csv / runs.csv / results.json.
#include "bench/aggregate.h"
#include "bench/report.h"
#include "bench/statistics.h"

#include <QJsonArray>
#include <catch2/catch.hpp>

#include <sstream>

using namespace symdex::bench;

namespace {

RunRecord symdexRun(const std::string& mode, unsigned threads, int round, double wall,
                    double user) {
    RunRecord r;
    r.config = mode;
    r.threads = threads;
    r.round = round;
    r.ok = true;
    r.wallSeconds = wall;
    r.userSeconds = user;
    r.sysSeconds = 0.5;
    r.tusExpected = r.tusIndexed = 10;
    SymdexFigures f;
    f.symbols = 1000;
    f.parseWallSeconds = wall;
    f.lockAcquisitions = 200;
    f.lockContended = 20;
    f.lockWaitSeconds = 0.1 * threads;
    f.nameIndexing.p99 = 40 * threads;
    f.nameIdle.p99 = 10;
    r.symdex = f;
    return r;
}

RunRecord peerRun(const std::string& name, unsigned threads, double wall) {
    RunRecord r;
    r.config = name;
    r.threads = threads;
    r.ok = true;
    r.wallSeconds = wall;
    r.userSeconds = wall * threads;
    r.tusExpected = r.tusIndexed = 10;
    return r;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

/// Fields of a CSV line, commas inside double quotes not counted.
size_t fieldCount(const std::string& csvLine) {
    size_t fields = 1;
    bool quoted = false;
    for (char c : csvLine) {
        if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            ++fields;
    }
    return fields;
}

} // namespace

TEST_CASE("spreadOf: median of odd and even counts, min and max", "[bench][statistics]") {
    const Spread odd = spreadOf({5, 1, 3});
    CHECK(odd.median == 3);
    CHECK(odd.min == 1);
    CHECK(odd.max == 5);
    const Spread even = spreadOf({4, 1, 3, 10});
    CHECK(even.median == 3.5);
    CHECK(even.min == 1);
    CHECK(even.max == 10);
    const Spread none = spreadOf({});
    CHECK(none.median == 0);
    CHECK(none.max == 0);
}

TEST_CASE("scaling figures: CPU utilisation, speedup, efficiency", "[bench][statistics]") {
    // duchainify, seed 004 (docs/design.md): 4 threads, 13m55s wall, 5m40s user, 58s sys.
    CHECK(cpuUtilisation(340.48, 58.11, 835.28, 4) == Approx(0.1193).epsilon(0.001));
    CHECK(cpuUtilisation(1, 1, 0, 2) == 0);
    CHECK(speedup(20, 10) == 2);
    CHECK(speedup(0, 10) == 0);
    CHECK(speedup(20, 0) == 0);
    CHECK(parallelEfficiency(1.5, 2) == 0.75);
    CHECK(ratio(1, 0) == 0);
}

TEST_CASE("aggregateRuns: medians over repeats, speedup against the same config at 1 thread",
          "[bench][aggregate]") {
    const std::vector<RunRecord> runs = {
        symdexRun("per-file", 1, 1, 20, 19), symdexRun("per-file", 2, 1, 10, 19),
        symdexRun("per-file", 1, 2, 22, 21), symdexRun("per-file", 2, 2, 12, 20),
        symdexRun("per-file", 1, 3, 30, 20), symdexRun("per-file", 2, 3, 11, 22),
    };
    const std::vector<ResultRow> rows = aggregateRuns(runs);
    REQUIRE(rows.size() == 2);
    const ResultRow& one = rows[0];
    const ResultRow& two = rows[1];
    CHECK(one.threads == 1);
    CHECK(one.runs == 3);
    CHECK(one.wall.median == 22);
    CHECK(one.wall.min == 20);
    CHECK(one.wall.max == 30);
    CHECK(two.wall.median == 11);
    CHECK(two.speedup == 2);
    CHECK(two.efficiency == 1);
    CHECK(one.speedup == 1);
    CHECK(two.cpuUtilisation == Approx((20 + 0.5) / (11.0 * 2)));
    CHECK(two.tusPerSecond == Approx(10 / 11.0));
    CHECK(two.symbolsPerSecond == Approx(1000 / 11.0));
    CHECK(two.contendedShare == Approx(0.1));
    CHECK(two.waitShare == Approx(0.2 / (11 * 2)));
    CHECK(two.nameIndexing.p99 == 80);
    CHECK(two.nameIdle.p99 == 10);
}

TEST_CASE("aggregateRuns: failed runs are counted and left out of the figures",
          "[bench][aggregate]") {
    RunRecord failed = symdexRun("global", 1, 2, 1, 1);
    failed.ok = false;
    failed.failure = "parsed 9 of 10 TUs";
    const std::vector<ResultRow> rows = aggregateRuns(
        {symdexRun("global", 1, 1, 20, 19), failed, symdexRun("global", 1, 3, 24, 19)});
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].runs == 2);
    CHECK(rows[0].failedRuns == 1);
    CHECK(rows[0].failure == "parsed 9 of 10 TUs");
    CHECK(rows[0].wall.median == 22);
    CHECK(rows[0].wall.min == 20);

    RunRecord alone = peerRun("ccls", 1, 5);
    alone.ok = false;
    alone.failure = "3 TUs have no cache file";
    const std::vector<ResultRow> none = aggregateRuns({alone});
    REQUIRE(none.size() == 1);
    CHECK_FALSE(none[0].hasFigures());
    CHECK(none[0].speedup == 0);
}

TEST_CASE("aggregateRuns: symdex wall as a ratio to each peer at the same thread count",
          "[bench][aggregate]") {
    const std::vector<ResultRow> rows = aggregateRuns(
        {symdexRun("per-file", 1, 1, 30, 29), peerRun("floor", 1, 50), peerRun("clangd", 1, 40),
         symdexRun("per-file", 2, 1, 15, 29), peerRun("floor", 2, 30), peerRun("clangd", 2, 25)});
    const ResultRow* two = findRow(rows, "per-file", 2);
    REQUIRE(two);
    CHECK(two->wallRatioToPeer.at("floor") == Approx(0.5));
    CHECK(two->wallRatioToPeer.at("clangd") == Approx(0.6));
    CHECK(two->wallRatioToPeer.count("ccls") == 0);
    const ResultRow* floor = findRow(rows, "floor", 2);
    REQUIRE(floor);
    CHECK(floor->wallRatioToPeer.empty());
    CHECK(floor->speedup == Approx(50.0 / 30));
    CHECK(floor->symbolsPerSecond == 0);
}

TEST_CASE("results.csv: a header and one line per row, every line as wide as the header",
          "[bench][report]") {
    RunRecord failed = peerRun("ccls", 1, 5);
    failed.ok = false;
    failed.failure = "ccls: exit status 1, see log";
    const std::vector<ResultRow> rows =
        aggregateRuns({symdexRun("per-file", 1, 1, 30, 29), peerRun("floor", 1, 50), failed});
    const std::vector<std::string> csv = lines(formatResultsCsv(rows));
    REQUIRE(csv.size() == 4);
    CHECK(csv[0].rfind("config,threads,runs,failed_runs,wall_s,wall_min_s,wall_max_s,", 0) == 0);
    CHECK(csv[0].find(",cpu_utilisation,speedup,efficiency,tus_per_s,") != std::string::npos);
    CHECK(csv[0].find(",lock_contended_share,lock_wait_share,") != std::string::npos);
    CHECK(csv[0].find(",name_indexing_p999_us,") != std::string::npos);
    CHECK(csv[0].find(",definition_idle_max_us,") != std::string::npos);
    CHECK(csv[0].find(",wall_ratio_to_floor,wall_ratio_to_ccls,wall_ratio_to_clangd,wall_ratio_to_"
                      "clangd-16,failure") != std::string::npos);
    for (size_t i = 1; i < csv.size(); ++i)
        CHECK(fieldCount(csv[i]) == fieldCount(csv[0]));
    CHECK(csv[1].rfind("per-file,1,1,0,30,30,30,", 0) == 0);
    CHECK(csv[1].find(",0.6,,,") != std::string::npos); // ratio to floor; ccls and clangd absent
    CHECK(csv[3].rfind("ccls,1,0,1,", 0) == 0);
    CHECK(csv[3].find(",\"ccls: exit status 1, see log\"") != std::string::npos);
}

TEST_CASE("runs.csv and results.json hold every run and row", "[bench][report]") {
    std::vector<RunRecord> runs = {symdexRun("per-file", 1, 1, 30, 29),
                                   symdexRun("per-file", 2, 1, 16, 30), peerRun("floor", 1, 40)};
    runs[1].failure = "a, quoted \"reason\"";
    runs[1].ok = false;
    const std::vector<std::string> csv = lines(formatRunsCsv(runs));
    REQUIRE(csv.size() == 4);
    CHECK(csv[0] == "config,threads,round,ok,wall_s,user_s,sys_s,peak_rss_mib,tus_expected,"
                    "tus_indexed,failure");
    CHECK(csv[2].find(",\"a, quoted \"\"reason\"\"\"") != std::string::npos);

    ReportContext context;
    context.database = "build/compile_commands.json";
    context.tus = 10;
    context.peers = {"floor"};
    const std::vector<ResultRow> rows = aggregateRuns(runs);
    const QJsonObject json = resultsJson(runs, rows, context);
    CHECK(json["tus"].toInt() == 10);
    REQUIRE(json["runs"].toArray().size() == 3);
    const QJsonObject firstRun = json["runs"].toArray()[0].toObject();
    CHECK(firstRun["config"].toString() == "per-file");
    CHECK(firstRun["symdex"].toObject()["symbols"].toInt() == 1000);
    CHECK(json["runs"].toArray()[1].toObject()["failure"].toString() == "a, quoted \"reason\"");
    REQUIRE(json["rows"].toArray().size() == 3);
    const QJsonObject floorRow = json["rows"].toArray()[2].toObject();
    CHECK(floorRow["config"].toString() == "floor");
    CHECK(floorRow["wall_s"].toDouble() == 40);
    CHECK_FALSE(floorRow.contains("symbols_per_s")); // a peer has no symdex figures
    const QJsonObject perFile = json["rows"].toArray()[0].toObject();
    CHECK(perFile["wall_ratio_to_floor"].toDouble() == Approx(0.75));
    CHECK(perFile["name_idle_p99_us"].toDouble() == 10);
}

TEST_CASE("the tables show every configuration, failures and the peer ratio columns",
          "[bench][report]") {
    RunRecord failed = peerRun("clangd", 2, 5);
    failed.ok = false;
    failed.failure = "clangd: timed out";
    const std::vector<ResultRow> rows =
        aggregateRuns({symdexRun("per-file", 1, 1, 30, 29), symdexRun("global", 1, 1, 35, 29),
                       peerRun("floor", 1, 50), failed});
    ReportContext context;
    context.database = "db.json";
    context.tus = 10;
    context.peers = {"floor", "clangd"};
    const std::string text = formatTables(rows, context);
    INFO(text);
    CHECK(text.find("symdex per-file    1  30.00 [30.00-30.00]") != std::string::npos);
    CHECK(text.find("symdex global") != std::string::npos);
    CHECK(text.find("/floor") != std::string::npos);
    CHECK(text.find("0.60x") != std::string::npos);
    CHECK(text.find("FAILED 1 of 1 runs: clangd: timed out") != std::string::npos);
    CHECK(text.find("lock acquisitions") != std::string::npos);
    CHECK(text.find("indexing p999") != std::string::npos);
}
