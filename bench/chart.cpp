#include "bench/chart.h"

#include <QFont>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>

namespace symdex::bench {

namespace {

QColor colorOf(const std::string& config) {
    static const std::map<std::string, QColor> colors = {
        {"per-file", QColor(31, 119, 180)}, {"global", QColor(214, 39, 40)},
        {"floor", QColor(110, 110, 110)},   {"ccls", QColor(44, 160, 44)},
        {"clangd", QColor(148, 103, 189)},  {"clangd-16", QColor(188, 163, 219)}};
    auto it = colors.find(config);
    return it == colors.end() ? QColor(255, 127, 14) : it->second;
}

QFont font(double pixels, bool bold = false) {
    QFont f("DejaVu Sans");
    f.setPixelSize(int(pixels));
    f.setBold(bold);
    return f;
}

/// A power of ten of microseconds as people read it: "100 µs", "10 ms", "1 s".
QString durationLabel(double microseconds) {
    if (microseconds >= 1e6)
        return QString::number(microseconds / 1e6, 'g', 3) + " s";
    if (microseconds >= 1e3)
        return QString::number(microseconds / 1e3, 'g', 3) + " ms";
    return QString::number(microseconds, 'g', 3) + QString::fromUtf8(" \u00b5s");
}

/// A legend entry: a line (solid or dashed) and a label.
struct LegendEntry {
    QString label;
    QColor color;
    Qt::PenStyle style = Qt::SolidLine;
};

/// One panel's plotting area: data coordinates to pixels, axes, ticks and labels.
class Plot {
public:
    Plot(QPainter& painter, const QRectF& panel, const QString& title, const QString& xLabel,
         const QString& yLabel)
        : painter_(painter), panel_(panel), area_(panel.adjusted(96, 44, -20, -58)), title_(title),
          xLabel_(xLabel), yLabel_(yLabel) {}

    void setX(double min, double max) { xMin_ = min, xMax_ = max; }
    /// A logarithmic axis needs min > 0.
    void setY(double min, double max, bool logarithmic) {
        yMin_ = min, yMax_ = max, yLog_ = logarithmic;
    }
    QPointF map(double x, double y) const {
        const double fx = (x - xMin_) / (xMax_ - xMin_);
        const double fy =
            yLog_ ? (std::log10(y) - std::log10(yMin_)) / (std::log10(yMax_) - std::log10(yMin_))
                  : (y - yMin_) / (yMax_ - yMin_);
        return {area_.left() + fx * area_.width(), area_.bottom() - fy * area_.height()};
    }

    /// Frame, grid, ticks (xTicks at the given data positions, with labels), axis titles.
    void drawAxes(const std::vector<std::pair<double, QString>>& xTicks) {
        painter_.setFont(font(18, true));
        painter_.setPen(Qt::black);
        painter_.drawText(QRectF(panel_.left(), panel_.top() + 6, panel_.width(), 28),
                          Qt::AlignHCenter | Qt::AlignVCenter, title_);
        painter_.setFont(font(13));
        for (const auto& [y, label] : yTicks())
            tick(map(xMin_, y), label, false);
        for (const auto& [x, label] : xTicks)
            tick(map(x, yMin_), label, true);
        painter_.setPen(QPen(Qt::black, 1.5));
        painter_.drawRect(area_);
        painter_.setFont(font(15));
        painter_.drawText(QRectF(area_.left(), area_.bottom() + 26, area_.width(), 24),
                          Qt::AlignHCenter, xLabel_);
        painter_.save();
        painter_.translate(panel_.left() + 18, area_.center().y());
        painter_.rotate(-90);
        painter_.drawText(QRectF(-area_.height() / 2, -12, area_.height(), 24), Qt::AlignCenter,
                          yLabel_);
        painter_.restore();
    }

    void drawLegend(const std::vector<LegendEntry>& entries, bool right = false) {
        if (entries.empty())
            return;
        painter_.setFont(font(13));
        const QFontMetricsF metrics(painter_.font());
        double width = 0;
        for (const LegendEntry& e : entries)
            width = std::max(width, metrics.horizontalAdvance(e.label));
        const QRectF box(right ? area_.right() - width - 58 : area_.left() + 10, area_.top() + 10,
                         width + 48, 20.0 * double(entries.size()) + 8);
        painter_.setPen(QPen(QColor(180, 180, 180)));
        painter_.setBrush(QColor(255, 255, 255, 230));
        painter_.drawRect(box);
        painter_.setBrush(Qt::NoBrush);
        for (size_t i = 0; i < entries.size(); ++i) {
            const double y = box.top() + 14 + 20.0 * double(i);
            painter_.setPen(QPen(entries[i].color, 2.5, entries[i].style));
            painter_.drawLine(QPointF(box.left() + 6, y), QPointF(box.left() + 34, y));
            painter_.setPen(Qt::black);
            painter_.drawText(QPointF(box.left() + 40, y + 5), entries[i].label);
        }
    }

    /// A polyline with round markers.
    void drawSeries(const std::vector<QPointF>& data, const QColor& color, Qt::PenStyle style) {
        painter_.setPen(QPen(color, 2.5, style));
        for (size_t i = 1; i < data.size(); ++i)
            painter_.drawLine(map(data[i - 1].x(), data[i - 1].y()), map(data[i].x(), data[i].y()));
        painter_.setPen(QPen(color, 1.5));
        painter_.setBrush(color);
        for (const QPointF& p : data)
            painter_.drawEllipse(map(p.x(), p.y()), 4.5, 4.5);
        painter_.setBrush(Qt::NoBrush);
    }

    void drawRange(double x, double low, double high, const QColor& color) {
        painter_.setPen(QPen(color, 1.5));
        const QPointF a = map(x, low), b = map(x, high);
        painter_.drawLine(a, b);
        painter_.drawLine(a - QPointF(5, 0), a + QPointF(5, 0));
        painter_.drawLine(b - QPointF(5, 0), b + QPointF(5, 0));
    }

private:
    std::vector<std::pair<double, QString>> yTicks() const {
        std::vector<std::pair<double, QString>> ticks;
        if (yLog_) {
            for (double v = std::pow(10, std::floor(std::log10(yMin_))); v <= yMax_ * 1.0001;
                 v *= 10)
                if (v >= yMin_ * 0.9999)
                    ticks.emplace_back(v, durationLabel(v));
            return ticks;
        }
        const double raw = (yMax_ - yMin_) / 5;
        const double magnitude = std::pow(10, std::floor(std::log10(raw)));
        const double step = magnitude * (raw / magnitude < 2 ? 2 : raw / magnitude < 5 ? 5 : 10);
        for (double v = std::ceil(yMin_ / step) * step; v <= yMax_ + step * 1e-6; v += step)
            ticks.emplace_back(v, QString::number(v, 'g', 4));
        return ticks;
    }

    void tick(const QPointF& at, const QString& label, bool onX) {
        painter_.setPen(QPen(QColor(225, 225, 225), 1));
        if (onX)
            painter_.drawLine(QPointF(at.x(), area_.top()), QPointF(at.x(), area_.bottom()));
        else
            painter_.drawLine(QPointF(area_.left(), at.y()), QPointF(area_.right(), at.y()));
        painter_.setPen(Qt::black);
        if (onX)
            painter_.drawText(QRectF(at.x() - 40, at.y() + 4, 80, 20), Qt::AlignHCenter, label);
        else
            painter_.drawText(QRectF(at.x() - 74, at.y() - 10, 68, 20),
                              Qt::AlignRight | Qt::AlignVCenter, label);
    }

    QPainter& painter_;
    QRectF panel_, area_;
    QString title_, xLabel_, yLabel_;
    double xMin_ = 0, xMax_ = 1, yMin_ = 0, yMax_ = 1;
    bool yLog_ = false;
};

/// How far above the highest value a linear axis goes so that a legend of `entries` lines in
/// the top corner stays clear of the data.
double legendHeadroom(size_t entries) {
    return 1.12 + 0.075 * double(entries);
}

/// Configurations with figures, in row order.
std::vector<std::string> configsOf(const std::vector<ResultRow>& rows) {
    std::vector<std::string> configs;
    for (const ResultRow& r : rows)
        if (r.hasFigures() && std::find(configs.begin(), configs.end(), r.config) == configs.end())
            configs.push_back(r.config);
    return configs;
}

std::vector<unsigned> threadCountsOf(const std::vector<ResultRow>& rows) {
    std::vector<unsigned> threads;
    for (const ResultRow& r : rows)
        if (std::find(threads.begin(), threads.end(), r.threads) == threads.end())
            threads.push_back(r.threads);
    std::sort(threads.begin(), threads.end());
    return threads;
}

std::vector<std::pair<double, QString>> threadTicks(const std::vector<unsigned>& threads) {
    std::vector<std::pair<double, QString>> ticks;
    for (unsigned t : threads)
        ticks.emplace_back(double(t), QString::number(t));
    return ticks;
}

void setThreadAxis(Plot& plot, const std::vector<unsigned>& threads) {
    const double low = threads.empty() ? 1 : threads.front();
    const double high = threads.empty() ? 1 : threads.back();
    const double margin = std::max(0.25, (high - low) * 0.06);
    plot.setX(low - margin, high + margin);
}

void paintSpeedup(QPainter& painter, const QRectF& panel, const std::vector<ResultRow>& rows) {
    Plot plot(painter, panel, "Speedup against 1 thread", "threads",
              "speedup (wall at 1 thread / wall)");
    const std::vector<unsigned> threads = threadCountsOf(rows);
    setThreadAxis(plot, threads);
    double top = threads.empty() ? 1 : threads.back();
    for (const ResultRow& r : rows)
        top = std::max(top, r.speedup);
    plot.setY(0, top * legendHeadroom(configsOf(rows).size() + 1), false);
    plot.drawAxes(threadTicks(threads));
    std::vector<LegendEntry> legend{{"ideal (speedup = threads)", Qt::gray, Qt::DashLine}};
    if (!threads.empty())
        plot.drawSeries(
            {QPointF(threads.front(), threads.front()), QPointF(threads.back(), threads.back())},
            Qt::gray, Qt::DashLine);
    for (const std::string& config : configsOf(rows)) {
        std::vector<QPointF> points;
        for (const ResultRow& r : rows)
            if (r.config == config && r.speedup > 0)
                points.emplace_back(r.threads, r.speedup);
        if (points.empty())
            continue;
        plot.drawSeries(points, colorOf(config), Qt::SolidLine);
        legend.push_back({QString::fromStdString(configLabel(config)), colorOf(config)});
    }
    plot.drawLegend(legend);
}

void paintWall(QPainter& painter, const QRectF& panel, const std::vector<ResultRow>& rows) {
    Plot plot(painter, panel, "Cold index wall time (median, min-max)", "threads", "wall seconds");
    const std::vector<unsigned> threads = threadCountsOf(rows);
    setThreadAxis(plot, threads);
    double top = 0;
    for (const ResultRow& r : rows)
        top = std::max(top, r.wall.max);
    plot.setY(0, top > 0 ? top * legendHeadroom(configsOf(rows).size()) : 1, false);
    plot.drawAxes(threadTicks(threads));
    std::vector<LegendEntry> legend;
    for (const std::string& config : configsOf(rows)) {
        std::vector<QPointF> points;
        for (const ResultRow& r : rows)
            if (r.config == config && r.hasFigures()) {
                points.emplace_back(r.threads, r.wall.median);
                plot.drawRange(r.threads, r.wall.min, r.wall.max, colorOf(config));
            }
        plot.drawSeries(points, colorOf(config), Qt::SolidLine);
        legend.push_back({QString::fromStdString(configLabel(config)), colorOf(config)});
    }
    plot.drawLegend(legend, true);
}

void paintLatency(QPainter& painter, const QRectF& panel, const std::vector<ResultRow>& rows,
                  const QString& what, LatencyFigures ResultRow::*indexing,
                  LatencyFigures ResultRow::*idle) {
    const std::vector<unsigned> threads = threadCountsOf(rows);
    const unsigned at = threads.empty() ? 1 : threads.back();
    Plot plot(painter, panel,
              what + " latency at " + QString::number(at) + " thread" + (at == 1 ? "" : "s"),
              "percentile", "client-side latency (log scale)");
    plot.setX(-0.4, double(kPercentileNames.size()) - 0.6);
    double low = 1e12, high = 0;
    std::vector<std::pair<const ResultRow*, bool>> series; // row, idle?
    for (const ResultRow& r : rows)
        if (isSymdexConfig(r.config) && r.threads == at && r.hasFigures())
            for (bool isIdle : {false, true}) {
                series.emplace_back(&r, isIdle);
                const LatencyFigures& l = r.*(isIdle ? idle : indexing);
                for (size_t i = 0; i < kPercentileNames.size(); ++i)
                    if (percentile(l, i) > 0) {
                        low = std::min(low, percentile(l, i));
                        high = std::max(high, percentile(l, i));
                    }
            }
    if (high <= 0)
        low = 1, high = 10;
    // Decades above the data, for the legend in the top corner.
    const double bottom = std::floor(std::log10(low));
    const double decades = std::ceil(std::log10(high)) - bottom;
    plot.setY(std::pow(10, bottom),
              std::pow(10, bottom + decades + std::ceil(std::max(1.0, decades) * 0.4)), true);
    std::vector<std::pair<double, QString>> ticks;
    for (size_t i = 0; i < kPercentileNames.size(); ++i)
        ticks.emplace_back(double(i), kPercentileNames[i]);
    plot.drawAxes(ticks);
    std::vector<LegendEntry> legend;
    for (const auto& [row, isIdle] : series) {
        std::vector<QPointF> points;
        const LatencyFigures& l = row->*(isIdle ? idle : indexing);
        for (size_t i = 0; i < kPercentileNames.size(); ++i)
            if (percentile(l, i) > 0)
                points.emplace_back(double(i), percentile(l, i));
        const Qt::PenStyle style = isIdle ? Qt::DashLine : Qt::SolidLine;
        plot.drawSeries(points, colorOf(row->config), style);
        legend.push_back({QString::fromStdString(configLabel(row->config)) +
                              (isIdle ? ", idle store" : ", while indexing"),
                          colorOf(row->config), style});
    }
    plot.drawLegend(legend);
}

} // namespace

void paintBenchChart(QPainter& painter, const std::vector<ResultRow>& rows,
                     const ChartOptions& options) {
    const double w = options.size.width(), h = options.size.height();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(QRectF(0, 0, w, h), Qt::white);
    painter.setPen(Qt::black);
    painter.setFont(font(20, true));
    painter.drawText(QRectF(0, 8, w, 32), Qt::AlignCenter, options.title);
    const double top = 44, halfW = w / 2, halfH = (h - top) / 2;
    paintSpeedup(painter, QRectF(0, top, halfW, halfH), rows);
    paintWall(painter, QRectF(halfW, top, halfW, halfH), rows);
    paintLatency(painter, QRectF(0, top + halfH, halfW, halfH), rows, "Name lookup",
                 &ResultRow::nameIndexing, &ResultRow::nameIdle);
    paintLatency(painter, QRectF(halfW, top + halfH, halfW, halfH), rows, "Definition lookup",
                 &ResultRow::definitionIndexing, &ResultRow::definitionIdle);
}

void writeBenchCharts(const std::vector<ResultRow>& rows, const ChartOptions& options,
                      const std::filesystem::path& dir) {
    QImage image(options.size, QImage::Format_ARGB32);
    {
        QPainter painter(&image);
        paintBenchChart(painter, rows, options);
    }
    const QString png = QString::fromStdString((dir / "chart.png").string());
    if (!image.save(png, "PNG"))
        throw std::runtime_error("cannot write " + png.toStdString());

    QSvgGenerator svg;
    const QString svgPath = QString::fromStdString((dir / "chart.svg").string());
    svg.setFileName(svgPath);
    svg.setSize(options.size);
    svg.setViewBox(QRect(QPoint(0, 0), options.size));
    svg.setTitle(options.title);
    svg.setDescription("symdex bench: thread scaling and query latency");
    QPainter painter;
    if (!painter.begin(&svg))
        throw std::runtime_error("cannot write " + svgPath.toStdString());
    paintBenchChart(painter, rows, options);
    painter.end();
}

OffscreenGui::OffscreenGui() {
    if (QCoreApplication::instance())
        return;
    if (!std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 0);
    // QGuiApplication keeps references to argc and argv for its whole life.
    static int argc = 1;
    static char name[] = "symdex";
    static char* argv[] = {name, nullptr};
    app_ = std::make_unique<QGuiApplication>(argc, argv);
}

OffscreenGui::~OffscreenGui() = default;

} // namespace symdex::bench
