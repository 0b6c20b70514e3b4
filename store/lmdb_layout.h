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
//   usrs     u16 first bucket (a USR hash's top 16 bits) -> UsrRun: the USRs of the buckets from
//            it to the next key, by hash, each its bucket, its hash's low 48 bits and its
//            UsrRow: sorted {fileId, 'D'/'R', seq, relation},
//            varints (encodeUsrRow). 'D': seq is a row of `symbols`; 'R': the file's references
//            name the USR, seq is its index in the file's UsrTable; relation: some of them are a
//            base-specifier or an override (format 18), so derived classes and overriders are
//            found without decoding the files' other references
//   names    first lower-case name of a block -> NamesBlock (format 22): consecutive names'
//            rows, each key stored as the bytes it does not share with the one before. A row:
//            NameRow: per spelling, its nameId and its declarations
//            {fileId, seq, rank}, varints (encodeNameRow); rank (EntryRank, format 19): where
//            the declaration stands in name search's order, read without decoding its block
//   absent       u32 id / 32 -> AbsentBucket: one zstd frame of the paths of 32 ids (format 29)
//                paths TUs depend on by name (TuRecord::absentIds, aliases)
//   absentPaths  u64 hash64(path) -> u32 ids of the paths of that hash (format 27; the path
//                before)
//   nameText  u32 nameId / 16 -> NameBucket: 16 names (case kept) by nameId % 16   the name
//             index (name_index.h)
//   words     lower-case word -> u32 names holding it
//   postings  token -> {u16 name length | u32 nameId}   (DUPSORT|DUPFIXED: by length, then id)
//
// A file's rows are always replaced whole: re-indexing a file deletes every symbol, reference and
// index entry it had before writing the new ones, in the same transaction.
#pragma once

#include "store/encoding.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

std::string fileIdKey(uint32_t fileId);
std::string rowKey(uint32_t fileId, uint32_t seq);
/// The sequence number of a rowKey().
uint32_t rowSeq(std::string_view rowKey);
/// A USR's bucket is its hash's top kUsrBucketBits bits: what a file's UsrTable keeps of each
/// USR its references name (ref_blocks.h), 2 bytes where the hash is 8.
inline constexpr int kUsrBucketBits = 16;
inline constexpr uint32_t kUsrBuckets = uint32_t(1) << kUsrBucketBits;
inline uint32_t usrBucketOf(uint64_t usrHash) {
    return uint32_t(usrHash >> (64 - kUsrBucketBits));
}
/// A `usrs` row (a run, format 28) holds the USRs of consecutive buckets: its key is its first
/// bucket and it holds every bucket up to the next row's key, so a bucket is never split between
/// rows and the row of a bucket is the last whose key is at or before it (before any row, the
/// buckets belong to a row keyed 0 the writer creates). One LMDB node a bucket (format 26-27)
/// spent 14 bytes of node, key and page slot on about one USR at LevelDB's size.
std::string usrRunKey(uint32_t bucket);
/// The first bucket of the `usrs` row keyed `key`; nullopt if `key` is not one.
std::optional<uint32_t> usrRunBucket(std::string_view key);
/// The writer cuts a row that grows past kUsrRunSplit bytes into rows of about equal size at
/// bucket boundaries (a bucket bigger than that stays whole), and joins one that shrinks under
/// kUsrRunJoin bytes to the row before if both fit in kUsrRunSplit: rows small enough that
/// finding a USR in one reads a few hundred bytes and an LMDB page holds several.
inline constexpr size_t kUsrRunSplit = 512;
inline constexpr size_t kUsrRunJoin = 128;
/// What tells a USR from the others of its bucket: its hash's low 48 bits.
inline uint64_t usrLowBits(uint64_t usrHash) {
    return usrHash & ((uint64_t(1) << 48) - 1);
}
/// One USR of a `usrs` row: its hash and its UsrRow's bytes.
struct UsrRunRow {
    uint64_t hash = 0;
    std::string row;
    friend bool operator==(const UsrRunRow&, const UsrRunRow&) = default;
};
/// A `usrs` value whose key is bucket `first`: its buckets in increasing order, each a varint
/// head (the difference from the bucket before, or from `first`, shifted left by 2, and the
/// number of its USRs less one, or 3 for four or more, followed then by a varint of the number
/// less four), then its USRs by hash, each its usrLowBits() (6 bytes big-endian) and its UsrRow.
/// Every hash's bucket must be at least `first`. A head costs a byte or two a bucket, not a USR:
/// a bucket holds about one USR at LevelDB's size, 8 at 300k names, 60 at 2M.
std::string encodeUsrRun(std::span<const UsrRunRow> rows, uint32_t first);
/// Reads a `usrs` row USR by USR, without copying.
class UsrRunReader {
public:
    UsrRunReader(std::string_view run, uint32_t first) : rest_(run), bucket_(first) {}
    /// Moves to the next USR: false at the end of the row, or if it does not decode (failed()).
    bool next();
    bool failed() const { return failed_; }
    uint64_t hash() const { return hash_; }
    /// The USR's UsrRow.
    std::string_view row() const { return row_; }

private:
    bool fail() {
        failed_ = true;
        return false;
    }
    std::string_view rest_;
    uint64_t bucket_ = 0;
    uint64_t left_ = 0; ///< USRs of the bucket not read yet
    bool started_ = false, failed_ = false;
    uint64_t hash_ = 0;
    std::string_view row_;
};
/// False if `bytes` is not a row keyed `first` (USRs out of order, a bucket past the last, or a
/// UsrRow that does not decode).
bool decodeUsrRun(std::string_view bytes, uint32_t first, std::vector<UsrRunRow>& rows);
/// Where to cut `rows` (sorted by hash; the USRs of a row keyed `first`) so that each part is at
/// most kUsrRunSplit bytes encoded (the first keyed `first`, each other by its first bucket) but
/// where one bucket alone is more, parts about equal, cutting only between buckets: the index
/// each part after the first starts at; empty if the row fits.
std::vector<size_t> usrRunCuts(const std::vector<UsrRunRow>& rows, uint32_t first);
/// The UsrRow of `usrHash` in row `run` keyed `first`: nullopt if the row has none; throws
/// nothing, and gives `damaged` true if the row is malformed.
std::optional<std::string_view> findUsrRow(std::string_view run, uint32_t first, uint64_t usrHash,
                                           bool& damaged);
/// Calls found(index, hash) for each USR of the `usrs` row `run` keyed `first` that file
/// `fileId`'s references name: its entry (fileId, kRefTag, index) says where in the file's
/// UsrTable it is. False if the row is malformed.
template <typename Found>
bool forEachTargetOfFile(std::string_view run, uint32_t first, uint32_t fileId, Found&& found);
/// One entry of a `usrs` row: a declaration, row `seq` of `symbols` (kDeclTag), or a file whose
/// references name the USR, `seq` its index in the file's UsrTable (kRefTag), and `relation`
/// when one of them has kRoleBase or kRoleOverride.
struct UsrEntry {
    uint32_t fileId = 0;
    char tag = 0;
    uint32_t seq = 0;
    bool relation = false;
    friend auto operator<=>(const UsrEntry&, const UsrEntry&) = default;
    /// The same place (`relation` aside): what removing a file's entry matches.
    bool samePlace(const UsrEntry& o) const {
        return fileId == o.fileId && tag == o.tag && seq == o.seq;
    }
};
/// A `usrs` value: the entries of one USR, sorted, as varints (the file id as the difference
/// from the one before; the sequence number shifted left by two, bit 0 set for kRefTag, bit 1
/// for `relation`).
std::string encodeUsrRow(const std::vector<UsrEntry>& entries);
/// False if `bytes` is not a row.
bool decodeUsrRow(std::string_view bytes, std::vector<UsrEntry>& entries);

template <typename Found>
bool forEachTargetOfFile(std::string_view run, uint32_t first, uint32_t fileId, Found&& found) {
    UsrRunReader usrs(run, first);
    while (usrs.next()) {
        Reader r(usrs.row());
        const uint64_t count = r.varint();
        uint64_t file = 0;
        for (uint64_t i = 0; i < count && !r.failed(); ++i) {
            file += r.varint();
            const uint64_t seq = r.varint();
            if (!r.failed() && file == fileId && (seq & 1) && (seq >> 2) <= UINT32_MAX)
                found(uint32_t(seq >> 2), usrs.hash());
        }
        if (r.failed())
            return false;
    }
    return !usrs.failed();
}
/// One declaration of a `names` row: a row (fileId, seq) of `symbols` and its EntryRank, packed
/// (name_index.h).
struct NameEntry {
    uint32_t fileId = 0;
    uint32_t seq = 0;
    uint32_t rank = 0;
    bool samePlace(const NameEntry& o) const { return fileId == o.fileId && seq == o.seq; }
    friend bool operator==(const NameEntry&, const NameEntry&) = default;
};
/// One spelling under a `names` key (names differing in case share the key): the name's id in
/// `nameText` and its declarations, sorted by place.
struct NameVariant {
    uint32_t nameId = 0;
    std::vector<NameEntry> declarations;
    friend bool operator==(const NameVariant&, const NameVariant&) = default;
};
/// A `names` value: its spellings by id, each with its declarations (the file id as the
/// difference from the one before, the sequence number, the rank), as varints.
std::string encodeNameRow(const std::vector<NameVariant>& variants);
/// False if `bytes` is not a row.
bool decodeNameRow(std::string_view bytes, std::vector<NameVariant>& variants);
/// `names` rows are kept in blocks of consecutive keys (format 22): the block's LMDB key is its
/// first name key; a row of its own paid an LMDB node (10 bytes) and its whole key. Rows are
/// written in blocks of about kNamesBlockBytes (about 16 rows).
inline constexpr size_t kNamesBlockBytes = 400;
/// A `names` block: `varint n` (>= 1), the first row (a string: its key is the block's), then per
/// further row `varint shared` (bytes its key shares with the key before), its key's other bytes
/// (a string) and the row (a string); keys strictly increasing.
class NamesBlockReader {
public:
    /// Starts on the block stored under `firstKey`; false if its count is malformed.
    bool start(std::string_view firstKey, std::string_view block);
    /// Whether every row of the block was read.
    bool done() const { return left_ == 0; }
    /// Reads the next row (only while !done()); false if the block is malformed there.
    bool next();
    const std::string& key() const { return key_; }
    std::string_view row() const { return row_; }

private:
    Reader reader_{{}};
    std::string key_;
    std::string_view row_;
    uint64_t left_ = 0;
    bool first_ = true;
};
/// Blocks of `rows` (sorted by key, keys distinct and not empty), each as its key and value.
std::vector<std::pair<std::string, std::string>>
encodeNamesBlocks(const std::vector<std::pair<std::string, std::string>>& rows);

/// Names are kept kNamesPerBucket to a `nameText` row, by id: a row of its own paid an LMDB node
/// and a 4-byte key for a name of about 20 bytes.
inline constexpr uint32_t kNamesPerBucket = 16;
/// The `nameText` key of the bucket of `nameId`.
std::string nameBucketKey(uint32_t nameId);
/// A `nameText` value: slot by slot (nameId % kNamesPerBucket), each a varint length and the
/// name's bytes, 0 for a free slot (no indexed name is empty); no free slot at the end.
std::string encodeNameBucket(const std::vector<std::string>& slots);
/// False if `bytes` is not a bucket.
bool decodeNameBucket(std::string_view bytes, std::vector<std::string_view>& slots);
/// The name of `nameId` in its bucket; nullopt if its slot is free or the bucket malformed.
std::optional<std::string_view> nameInBucket(std::string_view bucket, uint32_t nameId);

/// Absent paths are kept kAbsentPerBucket to an `absent` row, by id, compressed together
/// (format 29): a TU's probes come in runs that share their directories, and a path of its own
/// row paid an LMDB node and a 4-byte key besides its ~60 bytes (LevelDB: 18 pages, now 3).
inline constexpr uint32_t kAbsentPerBucket = 32; ///< its key: the bucket, absentId / 32 (fileIdKey)
/// An `absent` value: one zstd frame (no dictionary) of the slots as a NameBucket lays them out
/// (a varint length and the path, 0 for a free slot, no free slot at the end); "" when every
/// slot is free (the row is deleted).
std::string encodeAbsentBucket(const std::vector<std::string>& slots);
/// The slots of an `absent` value (paths as owned strings); false if it is not one.
bool decodeAbsentBucket(std::string_view bytes, std::vector<std::string>& slots);

/// A name of the index that holds a token: its length and its id. A token's postings are kept
/// in this order, shortest names first.
struct Posting {
    uint32_t length = 0, id = 0;
    friend auto operator<=>(const Posting&, const Posting&) = default;
};
/// A token's postings are in chunks of kPostingsPerChunk to twice that (a chunk that grows past
/// it is split).
inline constexpr size_t kPostingsPerChunk = 128;
/// The `postings` key of a token's chunk: the token, a 0 byte (no token holds one), then the
/// chunk's first posting (u16 length, u32 id): a token's chunks are contiguous and in order.
std::string postingKey(std::string_view token, Posting first);
/// What every `postings` key of `token` starts with.
std::string postingPrefix(std::string_view token);
/// The first posting a postingKey() names.
Posting postingKeyFirst(std::string_view key);
/// A `postings` value: `n` postings, increasing, as varints: the first's length and id; each
/// next one, when its length is the same, (id - the one before - 1) << 1; else
/// (length - the one before) << 1 | 1, then its id.
std::string encodePostingChunk(const std::vector<Posting>& postings);
/// False if `bytes` is not a chunk.
bool decodePostingChunk(std::string_view bytes, std::vector<Posting>& postings);
/// A chunk read a posting at a time: a skip into it decodes up to its target, not the whole
/// chunk (decodePostingChunk() reads through one).
class PostingChunkReader {
public:
    /// Starts on the chunk `bytes`; false if its count is malformed.
    bool start(std::string_view bytes);
    /// Whether every posting of the chunk was read (or none was started).
    bool done() const { return left_ == 0; }
    /// How many postings are left to read.
    size_t left() const { return size_t(left_); }
    /// The next posting; false if the chunk is malformed there. Only while !done().
    bool next(Posting& posting);

private:
    Reader reader_{{}};
    uint64_t left_ = 0, length_ = 0, id_ = 0;
    bool first_ = true;
};
/// How many postings a chunk holds, reading only its count; nullopt if malformed.
std::optional<size_t> postingChunkSize(std::string_view bytes);

/// Most tokens of the index are held by a name or a few: pair tokens (name_index.h's 'P') above
/// all, but also initials and rare words. A row each paid an LMDB node and a key of up to 20
/// bytes for a chunk of a few bytes. So a token whose postings fit one chunk of at most
/// kPostingsPerChunk is kept in a group row with the tokens after it (format 25: pair tokens;
/// format 26: every kind): the row's key is postingPrefix() of its first token (no posting after
/// the 0 byte: a chunk's key has six bytes more), its value each token in order with its chunk
/// (encodePostingGroup). No other row sorts between a group's key and its last token, so rows
/// in key order meet every token in order. A token that outgrows a group gets chunk rows of its
/// own.
/// Whether a `postings` key is a group row's (else it is a chunk's).
inline bool isPostingGroupKey(std::string_view key) {
    return !key.empty() && key.find('\0') == key.size() - 1;
}
/// A group row's value grows to at most this many bytes before it is cut in two: well inside
/// the LMDB node that a 4 KiB page keeps on itself (about 2,000 bytes; a bigger value takes
/// overflow pages of its own).
inline constexpr size_t kPostingGroupBytes = 1024;
/// A group's tokens and their chunks (encodePostingChunk()'s bytes), in order.
using PostingGroup = std::vector<std::pair<std::string, std::string>>;
/// A group row's value: per token, varints of the bytes it shares with the token before (the
/// first token: with the row's key), the rest as a string, then its chunk as a string.
std::string encodePostingGroup(const PostingGroup& group);
/// Reads a group row token by token.
class PostingGroupReader {
public:
    /// Starts on the row `key`, `value`; false if the key is not a group's.
    bool start(std::string_view key, std::string_view value);
    bool done() const { return reader_.atEnd(); }
    /// The next token and its chunk (a view into the row); false if the row is malformed there
    /// (tokens out of order, the first not its key's, a chunk that is not one). Only while
    /// !done(). `token` stays valid until the next call.
    bool next(std::string_view& token, std::string_view& chunk);

private:
    Reader reader_{{}};
    std::string keyToken_, token_;
    bool first_ = true;
};
/// The chunk of `token` in the group row `key`, `value` (a view into it); nullopt if the row
/// does not hold it, and then `damaged` says whether the row is malformed. Reads the row's tokens
/// as bytes they share with the one before, without spelling them out.
std::optional<std::string_view> findInPostingGroup(std::string_view key, std::string_view value,
                                                   std::string_view token, bool& damaged);
/// False if the row is malformed.
bool decodePostingGroup(std::string_view key, std::string_view value, PostingGroup& group);

inline bool PostingChunkReader::start(std::string_view bytes) {
    reader_ = Reader(bytes);
    const uint64_t count = reader_.varint();
    first_ = true;
    left_ = 0;
    if (reader_.failed() || count == 0 || count > bytes.size())
        return false;
    left_ = count;
    return true;
}

inline bool PostingChunkReader::next(Posting& posting) {
    if (first_) {
        first_ = false;
        length_ = reader_.varint();
        id_ = reader_.varint();
    } else {
        const uint64_t step = reader_.varint();
        if (step & 1) {
            const uint64_t delta = step >> 1; // checked before the sum, which could wrap
            if (delta == 0 || delta > 0xffff)
                return false;
            length_ += delta;
            id_ = reader_.varint();
        } else {
            const uint64_t delta = (step >> 1) + 1;
            if (delta > UINT32_MAX)
                return false;
            id_ += delta;
        }
    }
    if (reader_.failed() || length_ > 0xffff || id_ > UINT32_MAX ||
        (--left_ == 0 && !reader_.atEnd()))
        return false;
    posting = {uint32_t(length_), uint32_t(id_)};
    return true;
}

inline constexpr char kDeclTag = 'D';
inline constexpr char kRefTag = 'R';

} // namespace symdex
