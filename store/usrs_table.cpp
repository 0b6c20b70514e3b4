#include "store/usrs_table.h"

#include "store/ref_blocks.h"

namespace symdex {

std::optional<UsrRunAt> usrRunAt(const lmdb::Txn& txn, MDB_dbi usrs, uint32_t bucket,
                                 bool withEnd) {
    lmdb::Cursor cursor(txn, usrs);
    const std::string key = usrRunKey(bucket);
    std::string_view k = key, v;
    UsrRunAt at;
    const bool landed = cursor.seek(MDB_SET_RANGE, k, v);
    if (landed && k == key) {
        at.first = bucket;
        at.bytes = v;
        std::string_view nk, nv;
        if (withEnd && cursor.get(MDB_NEXT, nk, nv)) {
            const std::optional<uint32_t> next = usrRunBucket(nk);
            if (!next)
                return std::nullopt;
            at.end = *next;
        }
        return at;
    }
    if (landed && withEnd) {
        const std::optional<uint32_t> next = usrRunBucket(k);
        if (!next)
            return std::nullopt;
        at.end = *next;
    }
    if (landed ? cursor.get(MDB_PREV, k, v) : cursor.get(MDB_LAST, k, v)) {
        const std::optional<uint32_t> first = usrRunBucket(k);
        if (!first || *first > bucket)
            return std::nullopt;
        at.first = *first;
        at.bytes = v;
    }
    return at;
}

std::optional<UsrRunAt> resolveTargetsInRun(const lmdb::Txn& txn, MDB_dbi usrs, uint32_t bucket,
                                            uint32_t fileId, const UsrTable& table,
                                            std::vector<uint64_t>& hashes, bool withEnd) {
    const std::optional<UsrRunAt> run = usrRunAt(txn, usrs, bucket, withEnd);
    if (!run || !run->bytes ||
        !forEachTargetOfFile(*run->bytes, run->first, fileId, [&](uint32_t i, uint64_t h) {
            if (i < hashes.size() && table.bucket(i) == usrBucketOf(h))
                hashes[i] = h;
        }))
        return std::nullopt;
    return run;
}

} // namespace symdex
