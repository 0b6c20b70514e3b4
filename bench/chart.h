// The chart of a bench run, drawn with QPainter once and written twice: chart.png (QImage) and
// chart.svg (QSvgGenerator). Four panels: speedup against threads per configuration with the
// ideal line; wall time against threads (symdex and the peers, min-max bars); and the
// client-side latency percentiles of name and of definition lookups per lock mode, while
// indexing and against the idle store, at the highest thread count.
#pragma once

#include "bench/aggregate.h"

#include <QSize>
#include <QString>

#include <filesystem>
#include <memory>

class QGuiApplication;
class QPainter;

namespace symdex::bench {

struct ChartOptions {
    /// Pixels of the PNG; the SVG has the same layout in the same units.
    QSize size{1400, 1000};
    /// The line above the panels (corpus, repeats).
    QString title;
};

/// Draws the whole chart into `painter`, whose device is `options.size` large.
void paintBenchChart(QPainter& painter, const std::vector<ResultRow>& rows,
                     const ChartOptions& options);

/// Writes `dir`/chart.png and `dir`/chart.svg. Needs a QGuiApplication (OffscreenGui): text is
/// laid out with the platform's fonts. Throws std::runtime_error when a file cannot be written.
void writeBenchCharts(const std::vector<ResultRow>& rows, const ChartOptions& options,
                      const std::filesystem::path& dir);

/// A QGuiApplication for as long as the object lives, created unless one exists already, on the
/// offscreen platform unless QT_QPA_PLATFORM names another (the bench runs headless). Create it
/// on the main thread.
class OffscreenGui {
public:
    OffscreenGui();
    ~OffscreenGui();
    OffscreenGui(const OffscreenGui&) = delete;
    OffscreenGui& operator=(const OffscreenGui&) = delete;

private:
    std::unique_ptr<QGuiApplication> app_;
};

} // namespace symdex::bench
