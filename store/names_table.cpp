#include "store/names_table.h"

namespace symdex {

bool seekNamesBlock(lmdb::Cursor& cursor, std::string_view key, std::string_view& blockKey,
                    std::string_view& block) {
    std::string_view k = key, v;
    if (key.empty())
        return false; // no key is before the empty one, and none is empty
    const bool landed = cursor.seek(MDB_SET_RANGE, k, v);
    if (landed && k == key) {
        blockKey = k;
        block = v;
        return true;
    }
    if (!(landed ? cursor.get(MDB_PREV, k, v) : cursor.get(MDB_LAST, k, v)))
        return false;
    blockKey = k;
    block = v;
    return true;
}

std::optional<std::string_view> findNamesRow(const lmdb::Txn& txn, MDB_dbi names,
                                             std::string_view key) {
    lmdb::Cursor cursor(txn, names);
    std::string_view k, v;
    if (!seekNamesBlock(cursor, key, k, v))
        return std::nullopt;
    NamesBlockReader block;
    if (!block.start(k, v))
        throw CorruptNamesBlock{};
    while (!block.done()) {
        if (!block.next())
            throw CorruptNamesBlock{};
        if (block.key() == key)
            return block.row();
        if (std::string_view(block.key()) > key)
            break;
    }
    return std::nullopt;
}

} // namespace symdex
