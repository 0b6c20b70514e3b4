// How the store keeps a file's declarations (format 11): in blocks of kSymbolsPerBlock
// consecutive rows (encodeSymbol's bytes), each block compressed with zstd. A declaration's
// strings — USR, qualified name, signature, comment — repeat their neighbours' (the same
// namespace and class, the same types), which a block compresses nearly 4x where a row alone
// does not.
//
// A row keeps its address (file id, sequence number): it is in block seq / kSymbolsPerBlock. The
// block's count and its first row's line stay outside the compressed bytes, so that "declarations
// on lines a-b" binary-searches a file's blocks without decompressing them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symdex {

class ZstdDictionary;

inline constexpr size_t kSymbolsPerBlock = 16;

/// A block of `rows` (1 to kSymbolsPerBlock encoded symbols, in source order); `firstLine` is the
/// line of the first. Compressed against `dictionary`: the store's own (format 23), else the one
/// built in.
std::string encodeSymbolBlock(const std::vector<std::string_view>& rows, uint32_t firstLine,
                              const ZstdDictionary* dictionary = nullptr);

/// The line of a block's first row, read without decompressing.
std::optional<uint32_t> symbolBlockFirstLine(std::string_view block);

/// The id of the dictionary a block is compressed against (0 if the block is malformed).
uint32_t symbolBlockDictionaryId(std::string_view block);

/// `block`, compressed against the built-in dictionary, compressed against `storeDictionary`
/// instead (the same rows, count and first line); nullopt if it does not decompress.
std::optional<std::string> recompressSymbolBlock(std::string_view block,
                                                 const ZstdDictionary& storeDictionary);

/// A block's rows, decompressed; nullopt if the block is malformed.
class SymbolBlock {
public:
    /// Decodes a block compressed against the built-in dictionary or `storeDictionary`: its
    /// first `rows` rows (a row's strings may repeat those of the rows before it, not after), or
    /// all of them.
    static std::optional<SymbolBlock> decode(std::string_view block,
                                             const ZstdDictionary* storeDictionary = nullptr,
                                             size_t rows = kSymbolsPerBlock);
    /// A block's bytes as compressed (its rows, their qualified names, USRs and signatures
    /// coded, each row after its varint length: dictionary training's sample); nullopt if they
    /// do not decompress.
    static std::optional<std::string> decompressed(std::string_view block,
                                                   const ZstdDictionary* storeDictionary = nullptr);
    /// The rows decoded: all of the block's (count()), or the first ones asked for.
    size_t size() const { return rows_.size(); }
    /// The rows the block holds.
    size_t count() const { return count_; }
    bool complete() const { return rows_.size() == count_; }
    /// The encoded symbol at `index` < size() (decodeSymbol() reads it).
    std::string_view row(size_t index) const {
        return std::string_view(bytes_).substr(rows_[index].first, rows_[index].second);
    }

private:
    std::string bytes_; ///< the rows decoded, their strings expanded, one after another
    std::vector<std::pair<size_t, size_t>> rows_; ///< offset and size of each row in bytes_
    size_t count_ = 0;
};

} // namespace symdex
