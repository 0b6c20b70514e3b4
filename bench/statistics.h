// The arithmetic of the report: median with min and max over repeats, and the derived scaling
// figures (CPU utilisation, speedup, parallel efficiency). Kept apart so tests can pin them down.
#pragma once

#include <vector>

namespace symdex::bench {

/// Median with the range it came from. All zero for no values.
struct Spread {
    double median = 0, min = 0, max = 0;
};

/// The median (mean of the middle two for an even count), min and max of `values`.
Spread spreadOf(std::vector<double> values);

/// The nearest-rank percentile `q` (0-100) of `values`: the smallest value with at least q% of them
/// at or below it. 0 for no values.
double nearestRankPercentile(std::vector<double> values, double q);

/// (user + sys) / (wall x threads): 1.0 means every thread was busy for the whole wall time.
/// 0 when wall or threads is 0.
double cpuUtilisation(double userSeconds, double sysSeconds, double wallSeconds, unsigned threads);

/// How many times faster than the baseline: baselineWall / wall (0 when either is 0).
double speedup(double baselineWallSeconds, double wallSeconds);

/// Speedup per thread: 1.0 is perfect scaling.
double parallelEfficiency(double speedup, unsigned threads);

/// numerator / denominator, 0 when the denominator is 0.
double ratio(double numerator, double denominator);

} // namespace symdex::bench
