// How the store keeps a file's references (format 11; columns and first-named order since
// format 21): not one row per reference, but
//
//   - the file's USR table: the distinct USRs its references name, in the order the file first
//     names them, then those that are only containers. A named USR is kept as its `usrs`
//     bucket only (16 bits, packed; format 24, 18 bits before format 26): the bucket's USR whose
//     entries say "file F names it, at index i" is the one, so its hash is read there, with every
//     other of the file's USRs in the bucket. A container only is kept as its hash (8 bytes); and
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
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

inline constexpr size_t kRefsPerBlock = 128;

/// A file's references, encoded for the store.
struct RefBlocks {
    std::string usrTable;            ///< UsrTable's bytes
    std::vector<uint64_t> usrs;      ///< the table's USR hashes, by index
    std::vector<std::string> blocks; ///< kRefsPerBlock references each (the last may be shorter)
    uint32_t targets = 0;            ///< the first `targets` USRs of the table are named by refs
    /// [index] of each target: 1 if a reference to it is a base-specifier or an override
    /// (kRoleBase, kRoleOverride), which the `usrs` index marks (lmdb_layout.h).
    std::vector<char> relation;
};

/// Encodes `refs` (in source order) as a USR table and blocks.
RefBlocks encodeRefBlocks(const std::vector<Reference>& refs);

/// A file's USR table as stored, read in place: `u32 targets` (big-endian), the targets' `usrs`
/// buckets (kUsrBucketBits each, packed from the high bit of the first byte, the last byte
/// padded with zeros), then 8 bytes big-endian per container's hash.
class UsrTable {
public:
    /// nullopt if `bytes` is not a table.
    static std::optional<UsrTable> parse(std::string_view bytes);
    /// The bytes of a table of `usrs` (hashes), the first `targets` of them named by references.
    static std::string encode(const std::vector<uint64_t>& usrs, uint32_t targets);
    size_t size() const { return size_t(targets_) + containers_; }
    /// The USRs the file's references name (the first part of the table).
    uint32_t targets() const { return targets_; }
    /// The `usrs` bucket (the hash's top kUsrBucketBits bits) of target `index` (< targets()).
    uint32_t bucket(size_t index) const;
    /// The hash of `index`, a container only (targets() <= index < size()).
    uint64_t container(size_t index) const;

private:
    std::string_view bytes_;
    uint32_t targets_ = 0;
    size_t containers_ = 0;
    size_t containersAt_ = 0; ///< where in bytes_ the containers' hashes begin
};

/// The hash of the USR at an index of a file's table; nullopt if the store cannot say (damage).
using UsrAt = std::function<std::optional<uint64_t>(uint32_t index)>;

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
/// Appends the references of `rows` to `out`, their indexes resolved by `usrAt` in a table of
/// `size` USRs whose first `targets` the references name; false if one lies outside it or does
/// not resolve. With `only`, keeps only the references to that table index; and only those on
/// lines [firstLine, lastLine].
bool appendRefs(const std::vector<RefRow>& rows, size_t size, uint32_t targets, const UsrAt& usrAt,
                std::vector<Reference>& out, std::optional<uint32_t> only = std::nullopt,
                uint32_t firstLine = 0, uint32_t lastLine = UINT32_MAX);

/// Appends the references of one block to `out`; false if the block is malformed or names an
/// index outside the table. With `only`, keeps only the references to that table index.
bool decodeRefBlock(std::string_view block, size_t size, uint32_t targets, const UsrAt& usrAt,
                    std::vector<Reference>& out, std::optional<uint32_t> only = std::nullopt);
/// The same for a block's references as they are before compression (the fuzzer's way in).
bool decodeRefRows(std::string_view plain, size_t size, uint32_t targets, const UsrAt& usrAt,
                   std::vector<Reference>& out, std::optional<uint32_t> only = std::nullopt);
/// The line of a block's first reference, kept outside the compressed bytes.
std::optional<uint32_t> refBlockFirstLine(std::string_view block);

} // namespace symdex
