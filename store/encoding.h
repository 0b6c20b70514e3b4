// Byte encoding shared by every record: LEB128 varints and length-prefixed strings for values,
// fixed-width big-endian integers for keys (so LMDB's bytewise key order is numeric order), and
// the 64-bit hash used for USRs and file contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace symdex {

/// How many bytes Writer::varint() writes for `value`.
inline size_t varintSize(uint64_t value) {
    size_t size = 1;
    for (; value >= 0x80; value >>= 7)
        ++size;
    return size;
}

/// Appends values to a byte string.
class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}
    void varint(uint64_t v);
    void svarint(int64_t v) {
        varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    }
    void fixed64(uint64_t v);
    void byte(uint8_t v) { out_.push_back(static_cast<char>(v)); }
    void string(std::string_view s) {
        varint(s.size());
        out_.append(s);
    }

private:
    std::string& out_;
};

/// Reads values written by Writer. Reading past the end sets failed() and yields zeros, so a
/// decoder checks once at the end instead of after every field.
class Reader {
public:
    explicit Reader(std::string_view in) : in_(in) {}
    /// Most varints of the store are one byte (deltas, counts, columns): that case inline.
    uint64_t varint() {
        // One and two bytes inline: posting chunks are read a varint at a time, most of them
        // ids of a few thousand apart.
        if (!in_.empty()) {
            const uint8_t first = static_cast<uint8_t>(in_[0]);
            if (!(first & 0x80)) {
                in_.remove_prefix(1);
                return first;
            }
            if (in_.size() >= 2 && !(static_cast<uint8_t>(in_[1]) & 0x80)) {
                const uint64_t v = (first & 0x7fu) | uint64_t(static_cast<uint8_t>(in_[1])) << 7;
                in_.remove_prefix(2);
                return v;
            }
        }
        return longVarint();
    }
    int64_t svarint() {
        uint64_t v = varint();
        return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
    }
    uint64_t fixed64();
    uint8_t byte();
    std::string_view string();
    bool failed() const { return failed_; }
    bool atEnd() const { return in_.empty(); }
    /// The bytes not read yet.
    std::string_view rest() const { return in_; }

private:
    uint64_t longVarint();
    std::string_view in_;
    bool failed_ = false;
};

/// Appends `v` as `width` big-endian bytes.
void appendBigEndian(std::string& out, uint64_t v, int width);
/// Reads `width` big-endian bytes from the start of `in` (which must be long enough).
uint64_t readBigEndian(std::string_view in, int width);

/// A 64-bit hash (FNV-1a over 8-byte words with a final avalanche). Stable across runs and
/// platforms: it is persisted in the store, so changing it changes the store format.
uint64_t hash64(std::string_view data);

/// Whether `data` holds no byte >= 0x80 (tested eight bytes at a time).
bool isAscii(std::string_view data);

} // namespace symdex
