#include "indexer/shards.h"

#include "indexer/pch_config.h"
#include "store/encoding.h"
#include "store/lmdb.h"
#include "store/symbol_store.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace symdex {

std::optional<ShardSpec> parseShardSpec(std::string_view text) {
    const size_t slash = text.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    auto number = [](std::string_view digits) -> std::optional<uint32_t> {
        uint32_t value = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
            return std::nullopt;
        return value;
    };
    const auto index = number(text.substr(0, slash));
    const auto count = number(text.substr(slash + 1));
    if (!index || !count || *count == 0 || *count > kMaxShards || *index >= *count)
        return std::nullopt;
    return ShardSpec{*index, *count};
}

namespace {

constexpr uint64_t kManifestVersion = 2; // 2: RankKey::tier

void writeRank(Writer& w, const RankKey& rank) {
    w.varint(rank.size);
    w.varint(rank.position);
    w.varint(rank.tier);
}

RankKey readRank(Reader& r) {
    RankKey rank;
    rank.size = r.varint();
    rank.position = uint32_t(r.varint());
    rank.tier = uint8_t(r.varint());
    return rank;
}

/// The assignment of an earlier run, as a merged store records it (kPartitionMetaKey).
struct StoredPartition {
    uint32_t count = 0;
    std::unordered_map<std::string, uint32_t> shardOf;
};

std::string encodeStoredPartition(uint32_t count,
                                  const std::vector<std::pair<std::string, uint32_t>>& tus) {
    std::string out;
    Writer w(out);
    w.varint(kManifestVersion);
    w.varint(count);
    w.varint(tus.size());
    for (const auto& [path, shard] : tus) {
        w.string(path);
        w.varint(shard);
    }
    return out;
}

std::optional<StoredPartition> decodeStoredPartition(std::string_view bytes) {
    Reader r(bytes);
    if (r.varint() != kManifestVersion)
        return std::nullopt;
    StoredPartition partition;
    partition.count = uint32_t(r.varint());
    const uint64_t n = r.varint();
    for (uint64_t i = 0; i < n && !r.failed(); ++i) {
        std::string path(r.string());
        partition.shardOf[path] = uint32_t(r.varint());
    }
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return partition;
}

/// What a merged store records about the merge (kMergeMetaKey): the runs it took.
struct MergeRecord {
    uint64_t databaseHash = 0;
    uint64_t partitionHash = 0;
    std::vector<uint64_t> runIds; ///< by shard number
};

std::string encodeMergeRecord(const MergeRecord& record) {
    std::string out;
    Writer w(out);
    w.varint(kManifestVersion);
    w.fixed64(record.databaseHash);
    w.fixed64(record.partitionHash);
    w.varint(record.runIds.size());
    for (uint64_t id : record.runIds)
        w.fixed64(id);
    return out;
}

std::optional<MergeRecord> decodeMergeRecord(std::string_view bytes) {
    Reader r(bytes);
    if (r.varint() != kManifestVersion)
        return std::nullopt;
    MergeRecord record;
    record.databaseHash = r.fixed64();
    record.partitionHash = r.fixed64();
    const uint64_t n = r.varint();
    for (uint64_t i = 0; i < n && !r.failed(); ++i)
        record.runIds.push_back(r.fixed64());
    if (r.failed() || !r.atEnd())
        return std::nullopt;
    return record;
}

/// Largest cost first, each to the least loaded shard; `loads` may start non-zero.
void placeLargestFirst(const std::vector<size_t>& tus, const std::vector<uint64_t>& cost,
                       std::vector<uint32_t>& shardOf, std::vector<uint64_t>& loads) {
    std::vector<size_t> order = tus;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cost[a] > cost[b]; });
    for (size_t i : order) {
        const auto least = std::min_element(loads.begin(), loads.end());
        shardOf[i] = uint32_t(least - loads.begin());
        *least += cost[i];
    }
}

} // namespace

std::string encodeShardManifest(const ShardManifest& manifest) {
    std::string out;
    Writer w(out);
    w.varint(kManifestVersion);
    w.fixed64(manifest.databaseHash);
    w.varint(manifest.tusInDatabase);
    w.varint(manifest.shard.index);
    w.varint(manifest.shard.count);
    w.fixed64(manifest.partitionHash);
    w.fixed64(manifest.runId);
    w.varint(manifest.tus.size());
    for (const auto& [path, rank] : manifest.tus) {
        w.string(path);
        writeRank(w, rank);
    }
    return out;
}

std::optional<ShardManifest> decodeShardManifest(std::string_view bytes) {
    Reader r(bytes);
    if (r.varint() != kManifestVersion)
        return std::nullopt;
    ShardManifest m;
    m.databaseHash = r.fixed64();
    m.tusInDatabase = uint32_t(r.varint());
    m.shard.index = uint32_t(r.varint());
    m.shard.count = uint32_t(r.varint());
    m.partitionHash = r.fixed64();
    m.runId = r.fixed64();
    const uint64_t n = r.varint();
    for (uint64_t i = 0; i < n && !r.failed(); ++i) {
        std::string path(r.string());
        m.tus.emplace_back(std::move(path), readRank(r));
    }
    if (r.failed() || !r.atEnd() || m.shard.count == 0 || m.shard.index >= m.shard.count)
        return std::nullopt;
    return m;
}

uint64_t databaseHash(const CompileDatabase& db) {
    std::string all;
    for (const CompileCommand& command : db.commands) {
        all += command.file;
        all.push_back('\0');
        appendBigEndian(all, command.hash(), 8);
    }
    return hash64(all);
}

Partition partitionDatabase(const CompileDatabase& db, uint32_t count, const Store* balanceFrom) {
    const size_t n = db.commands.size();
    std::vector<uint64_t> size(n, 0), millis(n, 0);
    std::optional<StoredPartition> previous;
    if (balanceFrom) {
        const StoreSnapshot snapshot = balanceFrom->snapshot();
        std::unordered_map<std::string, uint32_t> times;
        snapshot.forEachTu([&](const std::string& path, const TuRecord& tu) {
            if (tu.parseMillis > 0)
                times.emplace(path, tu.parseMillis);
        });
        for (size_t i = 0; i < n; ++i)
            if (auto found = times.find(db.commands[i].file); found != times.end())
                millis[i] = found->second;
        if (auto bytes = snapshot.metaValue(kPartitionMetaKey))
            previous = decodeStoredPartition(*bytes);
    }
    uint64_t knownMillis = 0, knownBytes = 0;
    for (size_t i = 0; i < n; ++i) {
        std::error_code error;
        const auto bytes = std::filesystem::file_size(db.commands[i].file, error);
        size[i] = error ? 0 : uint64_t(bytes);
        if (millis[i]) {
            knownMillis += millis[i];
            knownBytes += size[i];
        }
    }
    // In microseconds, integers: every machine computes the same assignment. Times without the
    // sizes to scale the others by (every timed main file empty) are not used: bytes and times
    // would be mixed.
    const bool timed = knownMillis && knownBytes;
    std::vector<uint64_t> cost(n, 0);
    for (size_t i = 0; i < n; ++i)
        cost[i] = !timed ? size[i]
                  : millis[i]
                      ? millis[i] * 1000
                      : uint64_t((unsigned __int128)size[i] * knownMillis * 1000 / knownBytes);

    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i)
        all[i] = i;
    Partition partition;
    partition.shardOf.assign(n, 0);
    std::vector<uint64_t> loads(count, 0);
    placeLargestFirst(all, cost, partition.shardOf, loads);
    if (previous && previous->count == count) {
        std::vector<uint32_t> keptShardOf(n, 0);
        std::vector<uint64_t> keptLoads(count, 0);
        std::vector<size_t> placed;
        for (size_t i = 0; i < n; ++i) {
            auto found = previous->shardOf.find(db.commands[i].file);
            if (found != previous->shardOf.end() && found->second < count) {
                keptShardOf[i] = found->second;
                keptLoads[found->second] += cost[i];
            } else {
                placed.push_back(i);
            }
        }
        placeLargestFirst(placed, cost, keptShardOf, keptLoads);
        const uint64_t fresh = *std::max_element(loads.begin(), loads.end());
        const uint64_t kept = *std::max_element(keptLoads.begin(), keptLoads.end());
        if ((unsigned __int128)kept * 4 <= (unsigned __int128)fresh * 5) {
            partition.shardOf = std::move(keptShardOf);
            loads = std::move(keptLoads);
            partition.kept = true;
        }
    }
    std::string all2 = std::to_string(count);
    for (size_t i = 0; i < n; ++i) {
        all2.push_back('\0');
        all2 += db.commands[i].file;
        all2.push_back('\0');
        all2 += std::to_string(partition.shardOf[i]);
    }
    partition.hash = hash64(all2);
    partition.loads.assign(loads.begin(), loads.end());
    return partition;
}

ShardPlan planShard(const CompileDatabase& db, ShardSpec spec, const Store* balanceFrom) {
    ShardPlan plan;
    plan.manifest.databaseHash = databaseHash(db);
    plan.manifest.tusInDatabase = uint32_t(db.commands.size());
    plan.manifest.shard = spec;
    const Partition partition = partitionDatabase(db, spec.count, balanceFrom);
    plan.manifest.partitionHash = partition.hash;
    plan.kept = partition.kept;
    plan.share = db;
    plan.share.commands.clear();
    plan.share.rankTiers.clear();
    const std::vector<uint8_t> tier = pchTiers(db);
    for (size_t i = 0; i < db.commands.size(); ++i) {
        if (partition.shardOf[i] != spec.index)
            continue;
        // The rank the indexer gives it (indexer.cpp, classify): its tier, the size on disk now.
        std::error_code error;
        const auto size = std::filesystem::file_size(db.commands[i].file, error);
        plan.manifest.tus.emplace_back(db.commands[i].file,
                                       RankKey{error ? 0 : uint64_t(size), uint32_t(i), tier[i]});
        plan.share.commands.push_back(db.commands[i]);
        plan.share.rankTiers.push_back(tier[i]);
    }
    return plan;
}

uint64_t newShardRunId() {
    std::random_device random;
    uint64_t id = 0;
    while (id == 0)
        id = (uint64_t(random()) << 32) ^ random();
    return id;
}

void recordShardManifest(Store& store, const ShardManifest& manifest) {
    StoreEdit edit;
    edit.setMeta.emplace_back(kShardMetaKey, encodeShardManifest(manifest));
    store.apply(std::move(edit));
    store.flush();
}

namespace {

/// One shard's store, opened read-only, with what the merge reads of it.
struct Shard {
    std::filesystem::path dir;
    std::unique_ptr<SymbolStore> store;
    std::optional<StoreSnapshot> snapshot;
    ShardManifest manifest;
    std::unordered_map<uint32_t, std::string> pathOf;   ///< file id -> path
    std::unordered_map<uint32_t, std::string> absentOf; ///< absent id -> path
    std::unordered_map<std::string, uint32_t> ownerOf;  ///< path -> owner's file id
    bool changed = true;
};

/// A TU of the whole database: which shard has it, and its record there.
struct GlobalTu {
    size_t shard = 0;
    RankKey rank;
    TuRecord record;
    /// Its record and the files it owns are written: its shard ran since the last merge and its
    /// record differs from the one `out` holds (else neither it nor what it extracted changed).
    bool rewrite = true;
};

/// `record` of `shard` with its file and absent-path ids as `out` numbers them, encoded; nullopt
/// when `out` lacks one of them. Equal to `out`'s encoded record: the TU was not parsed again
/// (or was, with the same inputs and result).
std::optional<std::string> encodedAsIn(const TuRecord& record, const Shard& shard,
                                       const std::unordered_map<std::string, uint32_t>& fileIds,
                                       const std::unordered_map<std::string, uint32_t>& absentIds) {
    TuRecord mapped = record;
    for (uint32_t& id : mapped.fileIds) {
        auto path = shard.pathOf.find(id);
        auto found = path == shard.pathOf.end() ? fileIds.end() : fileIds.find(path->second);
        if (found == fileIds.end())
            return std::nullopt;
        id = found->second;
    }
    auto absent = [&](uint32_t& id) {
        auto path = shard.absentOf.find(id);
        auto found = path == shard.absentOf.end() ? absentIds.end() : absentIds.find(path->second);
        if (found == absentIds.end())
            return false;
        id = found->second;
        return true;
    };
    for (uint32_t& id : mapped.absentIds)
        if (!absent(id))
            return std::nullopt;
    std::sort(mapped.absentIds.begin(), mapped.absentIds.end());
    mapped.absentIds.erase(std::unique(mapped.absentIds.begin(), mapped.absentIds.end()),
                           mapped.absentIds.end());
    for (TuRecord::Alias& alias : mapped.aliases)
        if (!absent(alias.nameId))
            return std::nullopt;
    return encodeTuRecord(mapped);
}

} // namespace

MergeSummary mergeShards(Store& out, const std::vector<std::filesystem::path>& shardDirs) {
    const auto start = std::chrono::steady_clock::now();
    if (shardDirs.empty())
        throw MergeError("no shard stores to merge");
    std::vector<Shard> shards(shardDirs.size());
    for (size_t s = 0; s < shardDirs.size(); ++s) {
        Shard& shard = shards[s];
        shard.dir = shardDirs[s];
        if (!std::filesystem::exists(shard.dir / "data.mdb"))
            throw MergeError("'" + shard.dir.string() + "' holds no store");
        StoreOptions options;
        options.directory = shard.dir;
        options.readOnly = true;
        try {
            shard.store = SymbolStore::open(options);
        } catch (const StoreError& e) {
            if (e.kind() == StoreError::Kind::WrongVersion)
                throw MergeError("shard '" + shard.dir.string() +
                                 "' was written by another version of symdex: " + e.what() +
                                 " (every shard and the merge must run the same symdex: index "
                                 "the shard again with --rebuild --shard K/N)");
            throw MergeError("shard '" + shard.dir.string() + "': " + e.what());
        }
        shard.snapshot.emplace(shard.store->snapshot());
        const std::optional<std::string> bytes = shard.snapshot->metaValue(kShardMetaKey);
        if (!bytes)
            throw MergeError("'" + shard.dir.string() +
                             "' is not a shard's store (symdex index --shard K/N writes one)");
        std::optional<ShardManifest> manifest = decodeShardManifest(*bytes);
        if (!manifest)
            throw MergeError("shard '" + shard.dir.string() +
                             "': its shard record is damaged; index the shard again");
        shard.manifest = std::move(*manifest);
        if (shard.manifest.runId == 0)
            throw MergeError("shard '" + shard.dir.string() + "' (" +
                             std::to_string(shard.manifest.shard.index) + "/" +
                             std::to_string(shard.manifest.shard.count) +
                             "): its last run did not finish; run it again");
    }
    const ShardManifest& first = shards.front().manifest;
    const std::string firstName = "'" + shards.front().dir.string() + "'";
    std::vector<const Shard*> byIndex(first.shard.count, nullptr);
    for (const Shard& shard : shards) {
        const ShardManifest& m = shard.manifest;
        const std::string name = "'" + shard.dir.string() + "'";
        if (m.databaseHash != first.databaseHash || m.tusInDatabase != first.tusInDatabase)
            throw MergeError("shards " + firstName + " and " + name +
                             " indexed different compilation databases (or one database before "
                             "and after it changed); index every shard from the same one");
        if (m.shard.count != first.shard.count)
            throw MergeError("shard " + name + " is one of " + std::to_string(m.shard.count) +
                             ", shard " + firstName + " one of " +
                             std::to_string(first.shard.count));
        if (m.partitionHash != first.partitionHash)
            throw MergeError("shards " + firstName + " and " + name +
                             " split the database differently: balanced from different stores, or "
                             "the tree changed between their runs (main files' sizes); index every "
                             "shard again, from one tree, with the same --balance-from");
        if (const Shard* other = byIndex[m.shard.index])
            throw MergeError("'" + other->dir.string() + "' and " + name + " are both shard " +
                             std::to_string(m.shard.index) + "/" + std::to_string(m.shard.count));
        byIndex[m.shard.index] = &shard;
    }
    for (uint32_t k = 0; k < first.shard.count; ++k)
        if (!byIndex[k])
            throw MergeError("shard " + std::to_string(k) + "/" +
                             std::to_string(first.shard.count) +
                             " is missing: a merge takes every shard's store");

    // Every TU of the database, from the shard that indexed it.
    std::unordered_map<std::string, GlobalTu> tus;
    for (size_t s = 0; s < shards.size(); ++s) {
        Shard& shard = shards[s];
        shard.snapshot->forEachFile(
            [&](uint32_t id, const FileRecord& f) { shard.pathOf.emplace(id, f.path); });
        shard.snapshot->forEachFile([&](uint32_t, const FileRecord& f) {
            if (f.ownerFileId)
                shard.ownerOf.emplace(f.path, f.ownerFileId);
        });
        shard.snapshot->forEachAbsentPath(
            [&](uint32_t id, const std::string& path) { shard.absentOf.emplace(id, path); });
        std::unordered_map<std::string, TuRecord> records;
        shard.snapshot->forEachTu(
            [&](const std::string& path, const TuRecord& tu) { records.emplace(path, tu); });
        for (const auto& [path, rank] : shard.manifest.tus) {
            auto record = records.find(path);
            if (record == records.end())
                throw MergeError("shard '" + shard.dir.string() + "' lists " + path +
                                 " and holds no record of it; index the shard again");
            auto [it, inserted] = tus.try_emplace(path, GlobalTu{s, rank, record->second});
            if (!inserted)
                throw MergeError("shards '" + shards[it->second.shard].dir.string() + "' and '" +
                                 shard.dir.string() + "' both indexed " + path);
        }
    }
    if (tus.size() != first.tusInDatabase)
        throw MergeError("the shards hold " + std::to_string(tus.size()) + " of the database's " +
                         std::to_string(first.tusInDatabase) + " TUs");

    // What `out` holds now, read in one snapshot that ends before anything is written (a
    // snapshot pins the map, which the writer may need to grow): the last merge, who extracted
    // each file, each TU's record.
    std::optional<MergeRecord> last;
    bool mergeTarget = false; // `out` was written by merges only (its record may be unreadable)
    std::unordered_map<uint32_t, std::string> outPathOf;
    std::unordered_map<std::string, uint32_t> outOwnerOf, outIdOf, outAbsentIdOf;
    std::map<std::string, TuRecord> outTus;
    std::unordered_map<std::string, FileRecord> outFiles;
    {
        const StoreSnapshot before = out.snapshot();
        if (before.metaValue(kShardMetaKey))
            throw MergeError("the output store is a shard's store; merge into another directory");
        if (auto bytes = before.metaValue(kMergeMetaKey)) {
            mergeTarget = true;
            last = decodeMergeRecord(*bytes); // empty: `symdex index` ran on it since
        }
        before.forEachFile([&](uint32_t id, const FileRecord& f) {
            outPathOf.emplace(id, f.path);
            outOwnerOf.emplace(f.path, f.ownerFileId);
            outIdOf.emplace(f.path, id);
            outFiles.emplace(f.path, f);
        });
        before.forEachAbsentPath(
            [&](uint32_t id, const std::string& path) { outAbsentIdOf.emplace(path, id); });
        before.forEachTu(
            [&](const std::string& path, const TuRecord& record) { outTus.emplace(path, record); });
    }
    if (!mergeTarget && !outTus.empty())
        throw MergeError("the output store holds an index that is not a merge of shards; "
                         "merge into an empty directory");
    const bool incremental = last && last->databaseHash == first.databaseHash &&
                             last->partitionHash == first.partitionHash &&
                             last->runIds.size() == first.shard.count;
    MergeSummary summary;
    summary.shards = shards.size();
    for (Shard& shard : shards) {
        shard.changed =
            !incremental || last->runIds[shard.manifest.shard.index] != shard.manifest.runId;
        summary.shardsMerged += shard.changed;
    }

    // Each file's owner over every TU (docs/dependencies.md): a main file is its TU's, if it
    // parsed well; a header the first-ranked TU's that parsed well and includes it. A file no
    // such TU reads keeps an empty record, as in a single-machine index.
    std::unordered_map<std::string, const std::string*> owner; // path -> owner's main file
    std::set<std::string> files;
    for (const auto& [path, tu] : tus) {
        const Shard& shard = shards[tu.shard];
        for (uint32_t id : tu.record.fileIds) {
            auto found = shard.pathOf.find(id);
            if (found == shard.pathOf.end())
                throw MergeError("shard '" + shard.dir.string() + "' is damaged: the record of " +
                                 path + " names a file it does not hold");
            files.insert(found->second);
            if (tus.contains(found->second) || !parsedWell(tu.record))
                continue;
            auto [it, inserted] = owner.try_emplace(found->second, &path);
            if (!inserted && tu.rank.before(tus.at(*it->second).rank))
                it->second = &path;
        }
    }
    for (const auto& [path, tu] : tus)
        if (parsedWell(tu.record))
            owner[path] = &tus.find(path)->first;

    // Removed: TUs that left the database, files no TU reads, and the contents of files that
    // have no owner now (their record comes back empty with the TUs that read them).
    StoreEdit removals;
    std::unordered_set<uint32_t> removedIds;
    for (const auto& [path, record] : outTus)
        if (!tus.contains(path))
            removals.removeTus.push_back(path);
    for (const auto& [path, ownerId] : outOwnerOf) {
        const bool unowned = !owner.contains(path);
        if (!files.contains(path) || (unowned && ownerId != 0)) {
            removals.removeFiles.push_back(path); // gone, or its owner's version is stale
            removedIds.insert(outIdOf.at(path));
        }
    }
    // Written again: every TU whose shard ran and whose record changed (ids mapped), and every
    // TU whose stored record names a file removed above (its record would name a lost id).
    for (auto& [path, tu] : tus) {
        const auto held = outTus.find(path);
        if (held == outTus.end()) {
            tu.rewrite = true;
            continue;
        }
        tu.rewrite = !incremental || shards[tu.shard].changed;
        if (tu.rewrite && incremental) {
            const std::optional<std::string> mapped =
                encodedAsIn(tu.record, shards[tu.shard], outIdOf, outAbsentIdOf);
            tu.rewrite = !mapped || *mapped != encodeTuRecord(held->second);
        }
        if (!tu.rewrite)
            for (uint32_t id : held->second.fileIds)
                if (removedIds.contains(id)) {
                    tu.rewrite = true;
                    break;
                }
    }

    // The files each TU writes: those it owns, where it changed or the owner moved. Checked
    // before anything is written, so that a refused merge leaves `out` as it was.
    std::map<std::string, std::vector<std::string>> writes; // owner main file -> files
    for (const auto& [path, main] : owner) {
        const GlobalTu& tu = tus.at(*main);
        bool write = tu.rewrite;
        if (!write) {
            const auto held = outOwnerOf.find(path);
            const auto heldOwner =
                held == outOwnerOf.end() ? outPathOf.end() : outPathOf.find(held->second);
            write = heldOwner == outPathOf.end() || heldOwner->second != *main;
        }
        if (!write)
            continue;
        const Shard& shard = shards[tu.shard];
        auto heldBy = shard.ownerOf.find(path);
        const auto heldPath =
            heldBy == shard.ownerOf.end() ? shard.pathOf.end() : shard.pathOf.find(heldBy->second);
        if (heldPath == shard.pathOf.end() || heldPath->second != *main)
            throw MergeError(
                "shard '" + shard.dir.string() + "' holds " + path + " as extracted by " +
                (heldPath == shard.pathOf.end() ? std::string("no TU") : heldPath->second) +
                ", not by " + *main +
                ", which ranks first among the TUs that include it: the shards "
                "saw different trees (index them again, from one tree)");
        writes[*main].push_back(path);
    }
    // The TUs' tables of absent paths, mapped by path: an id the shard does not hold is damage.
    std::map<std::string, IndexedTu> publications;
    for (const auto& [path, tu] : tus) {
        const Shard& shard = shards[tu.shard];
        if (!tu.rewrite && !writes.contains(path))
            continue;
        IndexedTu& indexed = publications[path];
        indexed.mainFile = path;
        indexed.record = tu.record;
        for (uint32_t id : tu.record.fileIds)
            indexed.includedFiles.push_back(shard.pathOf.at(id));
        indexed.filesDigest = tu.record.filesDigest;
        auto absentPath = [&](uint32_t id) {
            auto found = shard.absentOf.find(id);
            if (found == shard.absentOf.end())
                throw MergeError("shard '" + shard.dir.string() + "' is damaged: the record of " +
                                 path + " names an absent path it does not hold");
            return found->second;
        };
        for (uint32_t id : tu.record.absentIds)
            indexed.absentPaths.push_back(absentPath(id));
        for (const TuRecord::Alias& alias : tu.record.aliases) {
            if (alias.fileIndex >= indexed.includedFiles.size())
                throw MergeError("shard '" + shard.dir.string() + "' is damaged: an alias of " +
                                 path + " names no file it read");
            indexed.aliases.emplace_back(absentPath(alias.nameId),
                                         indexed.includedFiles[alias.fileIndex]);
        }
    }

    summary.tusRemoved = removals.removeTus.size();
    summary.filesRemoved = removals.removeFiles.size();
    if (!removals.removeTus.empty() || !removals.removeFiles.empty())
        out.apply(std::move(removals));
    // Files of TUs not written again whose stamps their shard updated (touched, not changed).
    StoreEdit stamps;
    for (auto& [path, indexed] : publications) {
        const GlobalTu& tu = tus.at(path);
        const Shard& shard = shards[tu.shard];
        if (auto writing = writes.find(path); writing != writes.end())
            for (const std::string& file : writing->second) {
                IndexedFile content;
                content.file = *shard.snapshot->file(file);
                content.symbols = shard.snapshot->fileSymbols(file).value_or(std::vector<Symbol>{});
                content.references =
                    shard.snapshot->fileReferences(file).value_or(std::vector<Reference>{});
                indexed.files.push_back(std::move(content));
                ++summary.filesWritten;
            }
        ++summary.tusWritten;
        out.publish(std::move(indexed));
    }
    for (const auto& [path, main] : owner) {
        if (publications.contains(*main))
            continue; // written whole above
        const Shard& shard = shards[tus.at(*main).shard];
        const std::optional<FileRecord> now = shard.snapshot->file(path);
        const auto held = outFiles.find(path);
        if (now && held != outFiles.end() &&
            (now->mtimeNs != held->second.mtimeNs || now->size != held->second.size ||
             now->ctimeNs != held->second.ctimeNs || now->inode != held->second.inode))
            stamps.touchFiles.push_back(*now); // only the stamps are taken
    }
    if (!stamps.touchFiles.empty())
        out.apply(std::move(stamps));
    out.flush();

    // Absent paths no TU names any more, and what the next merge and shard runs read.
    StoreEdit finish;
    {
        const StoreSnapshot after = out.snapshot();
        std::unordered_set<uint32_t> named;
        after.forEachTu([&](const std::string&, const TuRecord& tu) {
            named.insert(tu.absentIds.begin(), tu.absentIds.end());
            for (const TuRecord::Alias& alias : tu.aliases)
                named.insert(alias.nameId);
        });
        after.forEachAbsentPath([&](uint32_t id, const std::string& path) {
            if (!named.contains(id))
                finish.removeAbsentPaths.push_back(path);
        });
    }
    MergeRecord record{first.databaseHash, first.partitionHash,
                       std::vector<uint64_t>(first.shard.count, 0)};
    std::vector<std::pair<std::string, uint32_t>> assignment;
    for (const Shard& shard : shards) {
        record.runIds[shard.manifest.shard.index] = shard.manifest.runId;
        for (const auto& [path, rank] : shard.manifest.tus)
            assignment.emplace_back(path, shard.manifest.shard.index);
    }
    std::sort(assignment.begin(), assignment.end());
    finish.setMeta.emplace_back(kMergeMetaKey, encodeMergeRecord(record));
    finish.setMeta.emplace_back(kPartitionMetaKey,
                                encodeStoredPartition(first.shard.count, assignment));
    out.apply(std::move(finish));
    out.flush();
    summary.tus = tus.size();
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

} // namespace symdex
