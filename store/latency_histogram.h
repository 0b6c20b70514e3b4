// A latency histogram with bounded relative error (log-linear buckets, like HdrHistogram):
// percentiles come from counts, not from averages or kept samples. One histogram per client
// thread; merge them to report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace symdex {

class LatencyHistogram {
public:
    LatencyHistogram();

    /// Records one latency in nanoseconds. Not thread-safe: one histogram per thread.
    void record(uint64_t ns);
    void merge(const LatencyHistogram& other);

    uint64_t count() const { return count_; }
    uint64_t maxNs() const { return max_; }
    /// The latency at or below which `q` (0..1] of the samples fall, within 1/128 relative error
    /// (the upper bound of the sample's bucket, never above the maximum). 0 when empty.
    uint64_t quantileNs(double q) const;

private:
    static constexpr int kSubBits = 7; // 128 sub-buckets per power of two: < 0.8% error
    static size_t bucketOf(uint64_t ns);
    static uint64_t upperBound(size_t bucket);

    std::vector<uint64_t> counts_;
    uint64_t count_ = 0;
    uint64_t max_ = 0;
};

} // namespace symdex
