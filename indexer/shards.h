// Indexing on several machines (issue 14, docs/shards.md): `symdex index --shard K/N` indexes a
// deterministic share of the compile database into a store of its own, and `symdex merge` makes
// of the N shard stores the store one machine would have written. A shard extracts every header
// its TUs include, as their owner in the shard; the merge keeps, for each header, the version its
// global owner extracted: the TU that ranks first (main file size, largest first, then position
// in the database: docs/dependencies.md) among the TUs of every shard that parsed well and
// include it. That TU is also first among its own shard's includers, so its shard holds that
// version. The merge writes through the store's own writer, so every index derived from the
// records (names, USRs, postings) is built as `symdex index` builds it.
#pragma once

#include "indexer/compile_db.h"
#include "store/store.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

/// Shard `index` of `count` (0 <= index < count), as Slurm numbers array tasks.
struct ShardSpec {
    uint32_t index = 0;
    uint32_t count = 1;
};

/// "K/N" with 0 <= K < N <= kMaxShards; nullopt for anything else.
std::optional<ShardSpec> parseShardSpec(std::string_view text);
inline constexpr uint32_t kMaxShards = 100000;

/// A TU's place in the global rank (indexer.cpp, classify): TUs of configurations without a PCH
/// first (pchTiers), then larger main files, then the earlier database entry.
struct RankKey {
    uint64_t size = 0;
    uint32_t position = 0; ///< index among the database's commands
    uint8_t tier = 0;      ///< pchTiers(): 0 for a TU of a configuration too small for a PCH
    bool before(const RankKey& other) const {
        if (tier != other.tier)
            return tier < other.tier;
        return size != other.size ? size > other.size : position < other.position;
    }
    friend bool operator==(const RankKey&, const RankKey&) = default;
};

/// What a shard's store records about its last run (metadata key kShardMetaKey).
struct ShardManifest {
    uint64_t databaseHash = 0;  ///< databaseHash() of the whole database
    uint32_t tusInDatabase = 0; ///< the whole database's TUs
    ShardSpec shard;
    uint64_t partitionHash = 0; ///< Partition::hash: every shard of one index has the same
    /// New for every run, 0 while a run is under way: a merge re-reads a shard whose id changed,
    /// and refuses one whose run did not finish.
    uint64_t runId = 0;
    std::vector<std::pair<std::string, RankKey>> tus; ///< this shard's TUs by main file
};

inline constexpr const char* kShardMetaKey = "shard";
/// In a merged store: what was merged (MergeRecord).
inline constexpr const char* kMergeMetaKey = "merge";
/// In a merged store: which shard indexed each TU (Partition), for the next runs' balance.
inline constexpr const char* kPartitionMetaKey = "partition";

std::string encodeShardManifest(const ShardManifest& manifest);
std::optional<ShardManifest> decodeShardManifest(std::string_view bytes);

/// hash64 of every command's main file and command hash, in database order.
uint64_t databaseHash(const CompileDatabase& db);

/// The shard of every command of a database.
struct Partition {
    std::vector<uint32_t> shardOf; ///< parallel to CompileDatabase::commands
    uint64_t hash = 0;             ///< of the count and the assignment, by main file
    /// The expected cost (milliseconds, or bytes where no time is known) of each shard's TUs.
    std::vector<double> loads;
    bool kept = false; ///< the assignment of `balanceFrom` was kept (see partitionDatabase)
};

/// Splits `db` into `count` shards. A TU costs the parse time `balanceFrom` (a merged store of
/// an earlier run; may be null) recorded for it, else its main file's size scaled by the time
/// per byte of the TUs that have one. Largest cost first, each TU to the least loaded shard
/// (lowest number among equals). If `balanceFrom` records the partition of an earlier run into
/// as many shards, and keeping its assignments (new TUs placed as above) loads no shard more
/// than 25% above what a new partition would, it is kept: a shard's store then keeps its TUs
/// and re-parses only what changed (with 10%, the second and third runs on unchanged LevelDB each
/// split it anew: parse times vary, and a TU parsed against a PCH costs a fraction of one parsed
/// whole; docs/shards.md). Deterministic: every shard computes the same.
Partition partitionDatabase(const CompileDatabase& db, uint32_t count, const Store* balanceFrom);

/// What shard `spec` of `db` indexes: its share of the database (the commands in database order)
/// and the manifest its store records (runId 0: set it when the run has finished).
struct ShardPlan {
    CompileDatabase share;
    ShardManifest manifest;
    bool kept = false; ///< Partition::kept
};
ShardPlan planShard(const CompileDatabase& db, ShardSpec spec, const Store* balanceFrom);

/// A new run id, never 0.
uint64_t newShardRunId();

/// Writes `manifest` into a shard's store and waits until it is committed: with run id 0 before
/// the shard's run (a merge then refuses the shard), with newShardRunId() after it.
void recordShardManifest(Store& store, const ShardManifest& manifest);

/// A merge that cannot be done (a shard missing, of another database, unfinished, damaged):
/// the message names the shard's directory and says what to do.
class MergeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MergeSummary {
    size_t shards = 0;
    size_t shardsMerged = 0; ///< shards whose run changed since the last merge into this store
    size_t tus = 0;          ///< TUs in the merged store
    size_t tusWritten = 0;
    size_t tusRemoved = 0;
    size_t filesWritten = 0; ///< files whose contents were copied from a shard
    size_t filesRemoved = 0;
    double seconds = 0;
};

/// Merges the stores in `shardDirs` (every shard of one partition) into `out`. An `out` that
/// holds an earlier merge of the same database and partition takes only what the shards that
/// ran since changed: their TUs, the files their TUs own, and the files whose owner moved.
/// Anything else in `out` is replaced. Throws MergeError.
MergeSummary mergeShards(Store& out, const std::vector<std::filesystem::path>& shardDirs);

} // namespace symdex
