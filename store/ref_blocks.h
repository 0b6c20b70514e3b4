// How the store keeps a file's references (format 11; columns and first-named order since
// format 21): not one row per reference, but
//
//   - the file's USR table: the distinct USR hashes its references name, in the order the file
//     first names them, then those that are only containers; each a fixed 8 bytes big-endian,
//     so the index of a reference's USR is where to read its hash; and
//   - the references in source order, in blocks of kRefsPerBlock, column by column: the lines
//     as differences from the one before, the columns, the roles, the USRs (0: the next one no
//     block named before, else 1 + its index) and the containers (0: the one before's, else
//     1 + 0 for none or 1 + its index); each block zstd-compressed, its first line kept outside
//     for the binary search by line.
//
// A reference then costs 1-2 bytes compressed (LevelDB and the generated trees:
// docs/store-format.md) instead of a 21-byte row under an 8-byte key plus a 9-byte `usrs` entry.
// The `usrs` index holds one entry per USR and file instead of one per reference: "references
// to X" reads X's entries, then the blocks of each file they name, keeping the references to X.
#pragma once

#include "store/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

inline constexpr size_t kRefsPerBlock = 128;

/// A file's references, encoded for the store.
struct RefBlocks {
    std::string usrTable;            ///< u32 targets, then 8 bytes per USR hash
    std::vector<std::string> blocks; ///< kRefsPerBlock references each (the last may be shorter)
    uint32_t targets = 0;            ///< the first `targets` USRs of the table are named by refs
    /// [index] of each target: 1 if a reference to it is a base-specifier or an override
    /// (kRoleBase, kRoleOverride), which the `usrs` index marks (lmdb_layout.h).
    std::vector<char> relation;
};

/// Encodes `refs` (in source order) as a USR table and blocks.
RefBlocks encodeRefBlocks(const std::vector<Reference>& refs);

/// A file's USR table as stored, read in place.
class UsrTable {
public:
    /// nullopt if `bytes` is not a table.
    static std::optional<UsrTable> parse(std::string_view bytes);
    size_t size() const { return (bytes_.size() - 4) / 8; }
    /// The USRs the file's references name (the first part of the table).
    uint32_t targets() const { return targets_; }
    uint64_t at(size_t index) const;

private:
    std::string_view bytes_;
    uint32_t targets_ = 0;
};

/// A reference as its block keeps it: its USR and its container as indexes of the file's table
/// (container 0: none, else 1 + the index), so that a block's rows depend on its bytes alone
/// and can be kept decoded (store/block_cache.h).
struct RefRow {
    uint32_t line = 0;
    uint32_t column = 0;
    uint32_t target = 0;
    uint32_t container = 0;
    uint16_t roles = 0;
};

/// The rows of one block; nullopt if it is malformed.
std::optional<std::vector<RefRow>> decodeRefBlockRows(std::string_view block);
/// Appends the references of `rows` to `out`, their indexes resolved in `table`; false if one
/// lies outside it. With `only`, keeps only the references to that table index; and only those
/// on lines [firstLine, lastLine].
bool appendRefs(const std::vector<RefRow>& rows, const UsrTable& table, std::vector<Reference>& out,
                std::optional<uint32_t> only = std::nullopt, uint32_t firstLine = 0,
                uint32_t lastLine = UINT32_MAX);

/// Appends the references of one block to `out`; false if the block is malformed or names an
/// index outside `table`. With `only`, keeps only the references to that table index.
bool decodeRefBlock(std::string_view block, const UsrTable& table, std::vector<Reference>& out,
                    std::optional<uint32_t> only = std::nullopt);
/// The same for a block's references as they are before compression (the fuzzer's way in).
bool decodeRefRows(std::string_view plain, const UsrTable& table, std::vector<Reference>& out,
                   std::optional<uint32_t> only = std::nullopt);
/// The line of a block's first reference, kept outside the compressed bytes.
std::optional<uint32_t> refBlockFirstLine(std::string_view block);

} // namespace symdex
