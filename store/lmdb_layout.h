// Private to store/: how SymbolStore lays its records out in LMDB — the named databases, and the
// one place their keys and index values are built.
//
// Layout (all integer keys big-endian; see docs/store-format.md for the record encodings):
//   meta     "format" -> u32 version                       checked at open
//   files    u32 fileId -> FileRecord
//   paths    path -> u32 fileId
//   tus      u32 fileId of the main file -> TuRecord
//   symbols  u32 fileId | u32 block -> SymbolBlock     a file's declarations, in source order,
//            zstd-compressed 16 a block (symbol_blocks.h)
//   refs     u32 fileId | u32 block -> RefBlock        a file's references, in source order
//   refUsrs  u32 fileId -> UsrTable                    the USRs they name (ref_blocks.h)
//   usrs     u64 usrHash -> UsrRow: sorted {fileId, 'D'/'R', seq}, varints (encodeUsrRow)
//            'D': seq is a row of `symbols`; 'R': the file's references name the USR, seq is its
//            index in the file's UsrTable
//   names    lower-case name -> {u64 usrHash | u32 fileId | u32 seq}  (DUPSORT|DUPFIXED)
//   absent       u32 id -> path        paths TUs depend on by name (TuRecord::absentIds, aliases)
//   absentPaths  path -> u32 id
//   nameIds   name (case kept) -> {u32 nameId | u32 declarations}   the name index (name_index.h)
//   nameText  u32 nameId -> name
//   words     lower-case word -> u32 names holding it
//   postings  token -> {u16 name length | u32 nameId}   (DUPSORT|DUPFIXED: by length, then id)
//
// A file's rows are always replaced whole: re-indexing a file deletes every symbol, reference and
// index entry it had before writing the new ones, in the same transaction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

std::string fileIdKey(uint32_t fileId);
std::string rowKey(uint32_t fileId, uint32_t seq);
/// The sequence number of a rowKey().
uint32_t rowSeq(std::string_view rowKey);
std::string usrKey(uint64_t usrHash);
/// A `names` value: the symbol's USR hash and its row.
std::string nameValue(uint64_t usrHash, uint32_t fileId, uint32_t seq);
/// One entry of a `usrs` row: a declaration, row `seq` of `symbols` (kDeclTag), or a file whose
/// references name the USR, `seq` its index in the file's UsrTable (kRefTag).
struct UsrEntry {
    uint32_t fileId = 0;
    char tag = 0;
    uint32_t seq = 0;
    friend auto operator<=>(const UsrEntry&, const UsrEntry&) = default;
};
/// A `usrs` value: the entries of one USR, sorted, as varints (the file id as the difference
/// from the one before; the sequence number shifted left, the low bit set for kRefTag).
std::string encodeUsrRow(const std::vector<UsrEntry>& entries);
/// False if `bytes` is not a row.
bool decodeUsrRow(std::string_view bytes, std::vector<UsrEntry>& entries);
/// A `postings` value: the name's length, then its id, so a token's names come shortest first.
std::string postingValue(size_t nameLength, uint32_t nameId);
inline constexpr size_t kPostingBytes = 6;

inline constexpr char kDeclTag = 'D';
inline constexpr char kRefTag = 'R';

} // namespace symdex
