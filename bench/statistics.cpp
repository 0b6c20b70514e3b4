#include "bench/statistics.h"

#include <algorithm>
#include <cmath>

namespace symdex::bench {

Spread spreadOf(std::vector<double> values) {
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {median, values.front(), values.back()};
}

double nearestRankPercentile(std::vector<double> values, double q) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const size_t rank = size_t(std::ceil(q / 100 * double(values.size())));
    return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double cpuUtilisation(double userSeconds, double sysSeconds, double wallSeconds, unsigned threads) {
    return ratio(userSeconds + sysSeconds, wallSeconds * threads);
}

double speedup(double baselineWallSeconds, double wallSeconds) {
    return baselineWallSeconds > 0 ? ratio(baselineWallSeconds, wallSeconds) : 0;
}

double parallelEfficiency(double speedup, unsigned threads) {
    return ratio(speedup, threads);
}

double ratio(double numerator, double denominator) {
    return denominator > 0 ? numerator / denominator : 0;
}

} // namespace symdex::bench
