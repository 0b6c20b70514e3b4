// The chart of symdex bench renders: a PNG with something drawn on it and an SVG whose text
// carries the panels' titles, axis labels and legend.
#include "bench/chart.h"
#include "test_util.h"

#include <QImage>
#include <QPainter>
#include <catch2/catch.hpp>

using namespace symdex::bench;
using symdex::test::TempDir;

namespace {

ResultRow row(const std::string& config, unsigned threads, double wall, double speedup) {
    ResultRow r;
    r.config = config;
    r.threads = threads;
    r.runs = 1;
    r.wall = {wall, wall * 0.9, wall * 1.1};
    r.speedup = speedup;
    if (config == "per-file" || config == "global") {
        r.nameIndexing = {100, 50, 90, 200, 400, 900};
        r.nameIdle = {100, 20, 30, 50, 80, 120};
        r.definitionIndexing = {100, 70, 120, 250, 500, 1000};
        r.definitionIdle = {100, 25, 35, 60, 90, 150};
    }
    return r;
}

std::vector<ResultRow> sampleRows() {
    return {row("per-file", 1, 28, 1), row("per-file", 2, 14, 2), row("global", 1, 30, 1),
            row("global", 2, 25, 1.2), row("floor", 1, 45, 1),    row("floor", 2, 27, 1.66)};
}

} // namespace

TEST_CASE("chart: PNG and SVG with labelled axes, legend and titles", "[bench][chart]") {
    OffscreenGui gui;
    TempDir dir;
    ChartOptions options;
    options.title = "symdex bench: test corpus";
    writeBenchCharts(sampleRows(), options, dir.path());

    QImage png(QString::fromStdString((dir.path() / "chart.png").string()));
    REQUIRE_FALSE(png.isNull());
    CHECK(png.size() == options.size);
    // Not a blank page: count pixels that are neither white nor transparent.
    size_t drawn = 0;
    for (int y = 0; y < png.height(); y += 2)
        for (int x = 0; x < png.width(); x += 2)
            drawn += png.pixel(x, y) != qRgb(255, 255, 255);
    CHECK(drawn > size_t(png.width() * png.height() / 4 / 50));

    const std::string svg = symdex::test::readFile(dir.path() / "chart.svg");
    for (const char* text :
         {"symdex bench: test corpus", "Speedup against 1 thread", "ideal (speedup = threads)",
          "threads", "wall seconds", "symdex per-file", "symdex global", "floor",
          "Name lookup latency at 2 threads", "Definition lookup latency at 2 threads",
          "symdex per-file, while indexing", "symdex global, idle store", "p999", "percentile"}) {
        INFO(text);
        CHECK(svg.find(text) != std::string::npos);
    }
}

TEST_CASE("chart: rows without figures or latency still draw", "[bench][chart]") {
    OffscreenGui gui;
    ResultRow failed;
    failed.config = "ccls";
    failed.threads = 1;
    failed.failedRuns = 1;
    QImage image(QSize(800, 600), QImage::Format_ARGB32);
    QPainter painter(&image);
    ChartOptions options;
    options.size = image.size();
    paintBenchChart(painter, {failed}, options);
    painter.end();
    CHECK(image.pixel(5, 5) == qRgb(255, 255, 255));
}
