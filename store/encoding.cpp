#include "store/encoding.h"

#include <cstring>

namespace symdex {

void Writer::varint(uint64_t v) {
    while (v >= 0x80) {
        out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
}

void Writer::fixed64(uint64_t v) {
    appendBigEndian(out_, v, 8);
}

uint64_t Reader::longVarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (in_.empty()) {
            failed_ = true;
            return 0;
        }
        uint8_t b = static_cast<uint8_t>(in_.front());
        in_.remove_prefix(1);
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    failed_ = true;
    return 0;
}

uint64_t Reader::fixed64() {
    if (in_.size() < 8) {
        failed_ = true;
        in_ = {};
        return 0;
    }
    uint64_t v = readBigEndian(in_, 8);
    in_.remove_prefix(8);
    return v;
}

uint8_t Reader::byte() {
    if (in_.empty()) {
        failed_ = true;
        return 0;
    }
    uint8_t b = static_cast<uint8_t>(in_.front());
    in_.remove_prefix(1);
    return b;
}

std::string_view Reader::string() {
    uint64_t n = varint();
    if (failed_ || n > in_.size()) {
        failed_ = true;
        in_ = {};
        return {};
    }
    std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
}

void appendBigEndian(std::string& out, uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t readBigEndian(std::string_view in, int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i)
        v = (v << 8) | static_cast<uint8_t>(in[i]);
    return v;
}

uint64_t hash64(std::string_view data) {
    constexpr uint64_t prime = 0x100000001b3ULL;
    uint64_t h = 0xcbf29ce484222325ULL ^ data.size();
    size_t i = 0;
    for (; i + 8 <= data.size(); i += 8) {
        uint64_t word = 0; // little-endian load, whatever the host: the hash is persisted
        for (int b = 7; b >= 0; --b)
            word = (word << 8) | static_cast<uint8_t>(data[i + b]);
        h = (h ^ word) * prime;
        h ^= h >> 29;
    }
    for (; i < data.size(); ++i)
        h = (h ^ static_cast<uint8_t>(data[i])) * prime;
    // splitmix64 finaliser: spreads the last bytes over the whole word.
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

bool isAscii(std::string_view data) {
    constexpr uint64_t kHighBits = 0x8080808080808080ull;
    uint64_t high = 0;
    size_t i = 0;
    for (; i + 8 <= data.size(); i += 8) {
        uint64_t word;
        std::memcpy(&word, data.data() + i, 8);
        high |= word;
    }
    for (; i < data.size(); ++i)
        high |= uint8_t(data[i]);
    return !(high & kHighBits);
}

} // namespace symdex
