// Private to store/: reading the `names` table, whose rows are kept in blocks of consecutive keys
// (lmdb_layout.h, NamesBlockReader): the row under a key, the rows from a key on, and the block
// a key falls in (the writer's unit of change).
#pragma once

#include "store/lmdb.h"
#include "store/lmdb_layout.h"

#include <optional>
#include <string_view>

namespace symdex {

/// Thrown (by the functions below) on a block that does not decode; callers report the store
/// as damaged.
struct CorruptNamesBlock {};

/// Positions `cursor` on the block `key` falls in: the last whose first key is at or before
/// `key`; false if there is none (`key` is before every block, or the table is empty).
bool seekNamesBlock(lmdb::Cursor& cursor, std::string_view key, std::string_view& blockKey,
                    std::string_view& block);

/// The row under `key`; nullopt if there is none. The view is valid until the txn ends.
std::optional<std::string_view> findNamesRow(const lmdb::Txn& txn, MDB_dbi names,
                                             std::string_view key);

/// Calls fn(key, row) for each row whose key starts with `prefix`, in key order, while fn
/// returns true. The key is valid during the call.
template <typename Fn>
void forEachNamesRow(const lmdb::Txn& txn, MDB_dbi names, std::string_view prefix, Fn&& fn) {
    lmdb::Cursor cursor(txn, names);
    std::string_view k = prefix, v;
    bool more = seekNamesBlock(cursor, prefix, k, v) ||
                (prefix.empty() ? cursor.get(MDB_FIRST, k, v) : cursor.seek(MDB_SET_RANGE, k, v));
    for (; more; more = cursor.get(MDB_NEXT, k, v)) {
        NamesBlockReader block;
        if (!block.start(k, v))
            throw CorruptNamesBlock{};
        while (!block.done()) {
            if (!block.next())
                throw CorruptNamesBlock{};
            if (block.key() < prefix)
                continue;
            if (!std::string_view(block.key()).starts_with(prefix) || !fn(block.key(), block.row()))
                return;
        }
    }
}

} // namespace symdex
