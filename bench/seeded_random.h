// The random numbers of the generated trees (synthetic_tree, scale_tree): splitmix64, tiny, and
// the same numbers on every platform and standard library (the standard distributions are not),
// so that a seed names the same tree everywhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace symdex::bench {

class SeededRandom {
public:
    explicit SeededRandom(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// 0 .. bound-1 (bound > 0); the modulo bias is irrelevant here.
    size_t below(size_t bound) { return size_t(next() % bound); }

private:
    uint64_t state_;
};

} // namespace symdex::bench
