#include "bench/statistics.h"

#include <algorithm>

namespace symdex::bench {

Spread spreadOf(std::vector<double> values) {
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {median, values.front(), values.back()};
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
