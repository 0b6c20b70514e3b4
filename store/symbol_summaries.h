// SymbolSummaries: what a workspace/symbol answer shows of each declaration of a snapshot, kept
// in memory so that a name search answers without decompressing a block per answer. At 300k
// names a search decoded one block of 16 declarations for each name it answered: ~57K
// instructions a name, half of a substring search's (docs/measurements.md); clangd's Dex holds
// every symbol's answer in memory. Here a declaration costs 32 bytes (its USR's hash, place,
// kind, flags, the case of its name and an interned qualifier), and only in a daemon, which
// makes them off the request path (SymbolStore::prepareSummaries).
//
// Kept per block of declarations, as BlockCache keeps decoded blocks, and used only for the
// bytes it was made from: a reader of the one snapshot every block was read from takes them as
// they are (ofSnapshot); any other hashes the block's compressed bytes in its own snapshot
// (hash64 and their length) and takes the summaries only if both are the ones summarized. A
// block a later commit rewrote, or a snapshot older than the summaries, is decoded as before.
// What is kept depends on the bytes alone.
#pragma once

#include "store/lmdb_layout.h"
#include "store/name_index.h"
#include "store/records.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symdex {

/// One declaration as a brief answer shows it: a Symbol without its USR string, extent,
/// signature and comment. The name is not stored: it is the name key's letters (the `names`
/// table's key the search reads it under) in the case `upper` records.
struct SymbolSummary {
    uint64_t usrHash = 0;
    uint64_t upper = 0; ///< bit i set: the name's character i is an upper-case letter
    uint32_t line = 0;
    uint32_t qualifier = 0; ///< SymbolSummaries::qualifier(): the qualified name before the name
    uint16_t column = 0;
    SymbolKind kind = SymbolKind::Unknown;
    uint8_t flags = 0;
    uint32_t file = 0; ///< the id of the file whose declaration it is
};
static_assert(sizeof(SymbolSummary) == 32);

class SymbolSummaries {
public:
    SymbolSummaries() = default;
    // Not copied: fileIds_ holds views of files_'s paths.
    SymbolSummaries(const SymbolSummaries&) = delete;
    SymbolSummaries& operator=(const SymbolSummaries&) = delete;

    /// The summaries of the rows of block `block` of file `file`, when kept for exactly `bytes`
    /// (the block's compressed bytes in the reader's snapshot); else an empty span. A row that
    /// cannot be summarized (a name longer than 64 characters, one with a byte >= 0x80, a
    /// column past 65,535, a qualified name that does not end with the name) makes its whole
    /// block unsummarized.
    struct Rows {
        const SymbolSummary* begin = nullptr;
        size_t size = 0;
    };
    Rows find(uint32_t file, uint32_t block, std::string_view bytes) const;
    /// The same, for a reader of the one snapshot every block was read from (ofSnapshot()):
    /// its bytes are those summarized, unless absent.
    Rows find(uint32_t file, uint32_t block) const;
    /// Whether every block was summarized from the snapshot with LMDB transaction id `txnId` of
    /// the store's environment `environment` (SymbolStore::Impl::environmentGeneration): no
    /// commit came during the pass. Such a snapshot's blocks are all here or unsummarized.
    bool ofSnapshot(uint64_t environment, uint64_t txnId) const {
        return txnId_ != 0 && environment_ == environment && txnId_ == txnId;
    }

    /// The Symbol `row` summarizes, named under `key` (nameKey() of its name): usr, extent,
    /// signature and comment empty.
    Symbol symbol(const SymbolSummary& row, std::string_view key) const;

    /// The qualified name's part before the name ("leveldb::DB::" of "leveldb::DB::Open").
    const std::string& qualifier(uint32_t id) const { return qualifiers_[id]; }

    /// The path of file `id` in the snapshot the files were read from (Builder::addFile; only
    /// for a reader of that snapshot: ofSnapshot()), null if it had none such.
    const std::string* path(uint32_t id) const {
        return id < files_.size() && files_[id].known ? &files_[id].path : nullptr;
    }
    /// The name the name index knows as `id` (View::indexedName), in the snapshot the files
    /// were read from (only for a reader of that snapshot: ofSnapshot()); nullopt if none.
    std::optional<std::string_view> indexedName(uint32_t id) const;
    /// Calls fn(row) for the summary of each declaration under the `names` key of the name the
    /// index knows as `id` (View::indexedName), in the order the `names` row lists them, in the
    /// snapshot the names were read from (only for a reader of that snapshot: ofSnapshot()).
    /// False, calling nothing, when they are not kept: a key with several spellings (they share
    /// its row), or one with a declaration whose block is not summarized. At 2M names the row's
    /// look-up (an LMDB seek and a block of keys decoded) was ~7K instructions of each answer's
    /// ~25K.
    template <typename Fn> bool forEachDeclarationOfName(uint32_t id, Fn&& fn) const {
        if (id >= nameRowsAt_.size() || nameRowsAt_[id] == kNotKept)
            return false;
        for (size_t at = nameRowsAt_[id];; ++at) {
            const uint32_t entry = nameRows_[at];
            fn(rows_[entry & ~kLastOfName]);
            if (entry & kLastOfName)
                return true;
        }
    }
    /// The summary's qualified name length and flags as the `names` row ranks it
    /// (EntryRank::of), for the name under `key`.
    EntryRank rankOf(const SymbolSummary& row, std::string_view key) const {
        return {bool(row.flags & kSpecialization), !(row.flags & kDefinition),
                uint32_t(qualifiers_[row.qualifier].size() + key.size())};
    }
    /// Whether the bytes indexed of `path` were ASCII only (FileRecord::asciiOnly of an indexed
    /// file), as that snapshot's record says; nullopt when it has no indexed file so named.
    std::optional<bool> asciiOnly(std::string_view path) const {
        const auto it = fileIds_.find(path);
        if (it == fileIds_.end() || !files_[it->second].indexed)
            return std::nullopt;
        return files_[it->second].ascii;
    }

    /// How many names forEachDeclarationOfName() gives.
    size_t namesKept() const { return namesKept_; }
    size_t blocks() const { return blocks_.size(); }
    size_t rows() const { return rows_.size(); }
    /// What the summaries take in memory, approximately.
    size_t bytes() const;

    /// Summaries of a snapshot's blocks, made from those of an earlier one: a block whose bytes
    /// are the same is copied, the others decoded.
    class Builder {
    public:
        explicit Builder(std::shared_ptr<const SymbolSummaries> previous);
        /// Block `block` of file `file`, whose compressed bytes are `bytes`; `decode()` gives
        /// its declarations, in row order, when the previous summaries do not hold it (or
        /// nullopt for a block that does not decode: left out, and decoded by each search).
        void add(uint32_t file, uint32_t block, std::string_view bytes,
                 const std::function<std::optional<std::vector<Symbol>>()>& decode);
        /// The snapshot the blocks added next are read from; called before them, once per
        /// read transaction.
        void readFrom(uint64_t environment, uint64_t txnId);
        /// File `id`'s record, read in the snapshot of the first readFrom(): its path and
        /// whether its indexed bytes were ASCII.
        void addFile(uint32_t id, const FileRecord& record);
        /// A row of the `nameText` table (bucket `bucket`: the names of ids bucket *
        /// kNamesPerBucket on), read as the files are; in the order of the buckets.
        void addNameBucket(uint32_t bucket, std::string_view bytes);
        /// Room for that many buckets and bytes of names, ahead of addNameBucket().
        void reserveNames(size_t buckets, size_t bytes);
        /// Whether every block and name so far was read from one snapshot.
        bool oneSnapshot() const { return oneSnapshot_; }
        /// A row of the `names` table, in the snapshot of the blocks (after them all, with
        /// oneSnapshot()): its spellings by id, each with its declarations.
        void addNamesRow(const std::vector<NameVariant>& variants);
        /// Blocks copied from the previous summaries, and decoded.
        size_t copied() const { return copied_; }
        size_t decoded() const { return decoded_; }
        std::shared_ptr<const SymbolSummaries> finish();

    private:
        uint32_t qualifierId(std::string_view qualifier);

        std::shared_ptr<const SymbolSummaries> previous_;
        std::shared_ptr<SymbolSummaries> next_;
        std::unordered_map<std::string_view, uint32_t> qualifierIds_; // into next_->qualifiers_
        std::vector<uint32_t> remap_; // previous qualifier id -> next's (UINT32_MAX: not yet)
        size_t copied_ = 0;
        size_t decoded_ = 0;
        bool oneSnapshot_ = true;
    };

private:
    struct Block {
        uint64_t hash = 0;  ///< hash64 of the compressed bytes
        uint32_t size = 0;  ///< their length
        uint32_t first = 0; ///< index of the first row in rows_
        uint32_t count = 0;
    };
    static uint64_t keyOf(uint32_t file, uint32_t block) { return uint64_t(file) << 32 | block; }

    uint64_t environment_ = 0;
    uint64_t txnId_ = 0; ///< 0: the blocks were read from several snapshots
    std::unordered_map<uint64_t, Block> blocks_;
    std::vector<SymbolSummary> rows_;
    std::deque<std::string> qualifiers_; // a deque: the builder's views of them stay valid
    struct File {
        std::string path;
        bool known = false;   ///< the snapshot has a record of this id
        bool indexed = false; ///< the record is of bytes indexed (contentHash != 0)
        bool ascii = false;   ///< FileRecord::asciiOnly, if indexed
    };
    std::vector<File> files_;                                ///< by file id
    std::unordered_map<std::string_view, uint32_t> fileIds_; ///< path -> id, into files_
    /// The name index's names, those of its `nameText` rows (a candidate's name was an LMDB
    /// lookup, 2.2K instructions, of a search's ~8K a candidate): name `id` is
    /// names_[id ? nameEnds_[id - 1] : 0, nameEnds_[id]), none when that is empty.
    std::string names_;
    std::vector<uint32_t> nameEnds_;
    /// declarationsOfName(): name `id`'s are the indexes in rows_ from nameRows_[nameRowsAt_[id]]
    /// up to the first with kLastOfName set, none kept where nameRowsAt_ is kNotKept (or past
    /// its end). 4 bytes a declaration and 4 a name: 27 MiB at 2M names and 4.6M declarations.
    std::vector<uint32_t> nameRowsAt_;
    std::vector<uint32_t> nameRows_;
    size_t namesKept_ = 0;
    static constexpr uint32_t kNotKept = UINT32_MAX;
    static constexpr uint32_t kLastOfName = uint32_t(1) << 31;
};

} // namespace symdex
