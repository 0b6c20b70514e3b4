#include "store/latency_histogram.h"

#include <algorithm>
#include <bit>

namespace symdex {

namespace {

constexpr uint64_t kSub = uint64_t(1) << 7;
// Values below kSub get one exact bucket each; each power of two above gets kSub buckets.
constexpr size_t kBuckets = kSub + (64 - 7) * kSub;

} // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

size_t LatencyHistogram::bucketOf(uint64_t ns) {
    if (ns < kSub)
        return size_t(ns);
    const int exponent = std::bit_width(ns) - 1 - kSubBits; // >= 0
    const uint64_t mantissa = (ns >> exponent) - kSub;      // 0 .. kSub-1
    return size_t(kSub + uint64_t(exponent) * kSub + mantissa);
}

uint64_t LatencyHistogram::upperBound(size_t bucket) {
    if (bucket < kSub)
        return bucket;
    const uint64_t exponent = (bucket - kSub) / kSub;
    const uint64_t mantissa = (bucket - kSub) % kSub;
    return ((kSub + mantissa + 1) << exponent) - 1;
}

void LatencyHistogram::record(uint64_t ns) {
    ++counts_[bucketOf(ns)];
    ++count_;
    max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < counts_.size(); ++i)
        counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::quantileNs(double q) const {
    if (count_ == 0)
        return 0;
    q = std::clamp(q, 0.0, 1.0);
    // The rank of the sample: the smallest r with r >= q * count (at least 1).
    uint64_t rank = uint64_t(q * double(count_));
    if (double(rank) < q * double(count_))
        ++rank;
    rank = std::max<uint64_t>(rank, 1);
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
        seen += counts_[i];
        if (seen >= rank)
            return std::min(upperBound(i), max_);
    }
    return max_;
}

} // namespace symdex
