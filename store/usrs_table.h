// Private to store/: finding the `usrs` row a bucket is in (lmdb_layout.h, UsrRun): the last row
// whose key is at or before the bucket, the bucket's run of rows ending where the next row's key
// begins.
#pragma once

#include "store/lmdb.h"
#include "store/lmdb_layout.h"

#include <optional>
#include <string_view>
#include <vector>

namespace symdex {

class UsrTable;

/// The `usrs` row of a bucket: its first bucket, the first bucket of the row after it
/// (kUsrBuckets if none; only if asked for), and its bytes (valid until the transaction ends or the
/// next write). Before every row, `bytes` is nullopt and `first` 0: the row the writer creates
/// there.
struct UsrRunAt {
    uint32_t first = 0;
    uint32_t end = kUsrBuckets;
    std::optional<std::string_view> bytes;
};

/// The row `bucket` is in; nullopt if a key on the way is not a `usrs` key (a damaged store).
/// `end` is looked up only `withEnd` (the writer's need; a reader's lookup is one seek).
std::optional<UsrRunAt> usrRunAt(const lmdb::Txn& txn, MDB_dbi usrs, uint32_t bucket,
                                 bool withEnd = false);

/// Resolves the targets of file `fileId`'s UsrTable `table` that the row holding `bucket` holds
/// (of that bucket or another of the row): hashes[i] (`hashes` has table.targets() entries) is
/// the hash of each such target i. The row; nullopt if there is none or it does not decode.
std::optional<UsrRunAt> resolveTargetsInRun(const lmdb::Txn& txn, MDB_dbi usrs, uint32_t bucket,
                                            uint32_t fileId, const UsrTable& table,
                                            std::vector<uint64_t>& hashes, bool withEnd = false);

} // namespace symdex
