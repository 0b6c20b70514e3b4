#include "store/ref_blocks.h"

#include "store/encoding.h"
#include "store/lmdb_layout.h"
#include "store/zstd_frame.h"

#include <algorithm>
#include <span>
#include <unordered_map>

namespace symdex {

RefBlocks encodeRefBlocks(const std::vector<Reference>& refs) {
    // The table: the USRs the references name, in the order the file first names them (a
    // block names a USR no block before it named with one byte: the next one), then the
    // containers no reference names.
    std::unordered_map<uint64_t, uint32_t> index;
    std::vector<uint64_t> order;
    index.reserve(refs.size());
    for (const Reference& ref : refs)
        if (index.emplace(ref.usrHash, uint32_t(order.size())).second)
            order.push_back(ref.usrHash);
    const uint32_t targets = uint32_t(order.size());
    for (const Reference& ref : refs)
        if (ref.container && index.emplace(ref.container, uint32_t(order.size())).second)
            order.push_back(ref.container);

    RefBlocks out;
    out.targets = targets;
    out.relation.assign(targets, 0);
    out.usrTable = UsrTable::encode(order, targets);

    uint32_t named = 0; // the targets the blocks so far named
    for (size_t begin = 0; begin < refs.size(); begin += kRefsPerBlock) {
        const size_t end = std::min(refs.size(), begin + kRefsPerBlock);
        std::string plain;
        Writer w(plain);
        w.varint(end - begin);
        w.varint(named);
        // Column by column: a column's values are alike (small line steps, a few roles, the
        // same container for a function's references), which zstd finds where rows mixed them.
        int64_t line = 0;
        for (size_t i = begin; i < end; ++i) {
            w.svarint(int64_t(refs[i].location.line) - line);
            line = refs[i].location.line;
        }
        for (size_t i = begin; i < end; ++i)
            w.varint(refs[i].location.column);
        for (size_t i = begin; i < end; ++i)
            w.varint(refs[i].roles);
        for (size_t i = begin; i < end; ++i) {
            const uint32_t target = index.at(refs[i].usrHash);
            if (refs[i].roles & (kRoleBase | kRoleOverride))
                out.relation[target] = 1;
            if (target == named) {
                w.varint(0);
                ++named;
            } else {
                w.varint(uint64_t(target) + 1);
            }
        }
        uint64_t container = 0; // 0: none, else 1 + the index
        for (size_t i = begin; i < end; ++i) {
            const uint64_t next = refs[i].container ? index.at(refs[i].container) + 1 : 0;
            w.varint(next == container ? 0 : next + 1);
            container = next;
        }
        std::string block;
        Writer(block).varint(refs[begin].location.line);
        appendCompressed(block, plain);
        out.blocks.push_back(std::move(block));
    }
    out.usrs = std::move(order);
    return out;
}

std::string UsrTable::encode(const std::vector<uint64_t>& usrs, uint32_t targets) {
    std::string out;
    appendBigEndian(out, targets, 4);
    // The buckets, packed: kUsrBucketBits each, from the first byte's high bit on.
    uint64_t pending = 0; // bits not yet written, in the low `bits` bits
    int bits = 0;
    for (uint32_t i = 0; i < targets; ++i) {
        pending = pending << kUsrBucketBits | (usrs[i] >> (64 - kUsrBucketBits));
        for (bits += kUsrBucketBits; bits >= 8; bits -= 8)
            out.push_back(char(uint8_t(pending >> (bits - 8))));
    }
    if (bits > 0)
        out.push_back(char(uint8_t(pending << (8 - bits))));
    for (size_t i = targets; i < usrs.size(); ++i)
        appendBigEndian(out, usrs[i], 8);
    return out;
}

std::optional<UsrTable> UsrTable::parse(std::string_view bytes) {
    if (bytes.size() < 4)
        return std::nullopt;
    UsrTable table;
    table.bytes_ = bytes;
    table.targets_ = uint32_t(readBigEndian(bytes, 4));
    table.containersAt_ = 4 + (uint64_t(table.targets_) * kUsrBucketBits + 7) / 8;
    if (table.containersAt_ > bytes.size() || (bytes.size() - table.containersAt_) % 8 != 0)
        return std::nullopt;
    table.containers_ = (bytes.size() - table.containersAt_) / 8;
    return table;
}

uint32_t UsrTable::bucket(size_t index) const {
    const size_t bit = index * kUsrBucketBits;
    // The kUsrBucketBits (16) span at most 4 bytes from the one they begin in (the padding reads as
    // zeros).
    uint32_t window = 0;
    for (size_t i = 0; i < 4; ++i) {
        const size_t at = 4 + bit / 8 + i;
        window = window << 8 | (at < containersAt_ ? uint8_t(bytes_[at]) : 0u);
    }
    return (window >> (32 - kUsrBucketBits - bit % 8)) & ((1u << kUsrBucketBits) - 1);
}

uint64_t UsrTable::container(size_t index) const {
    return readBigEndian(bytes_.substr(containersAt_ + 8 * (index - targets_)), 8);
}

namespace {

/// The rows of a block's decompressed bytes.
bool parseRows(std::string_view plain, std::vector<RefRow>& out) {
    Reader r(plain);
    const uint64_t count = r.varint();
    uint64_t next = r.varint(); // the index a target code 0 stands for
    if (r.failed() || count == 0 || count > kRefsPerBlock || next > UINT32_MAX)
        return false;
    const size_t first = out.size();
    out.resize(first + count);
    const std::span<RefRow> rows(out.data() + first, count);
    int64_t line = 0;
    for (RefRow& row : rows) {
        const int64_t delta = r.svarint(); // bounded before the sum, which could overflow
        if (delta > int64_t(UINT32_MAX) || delta < -int64_t(UINT32_MAX))
            return false;
        line += delta;
        if (line < 0 || line > UINT32_MAX)
            return false;
        row.line = uint32_t(line);
    }
    for (RefRow& row : rows) {
        const uint64_t column = r.varint();
        if (column > UINT32_MAX)
            return false;
        row.column = uint32_t(column);
    }
    for (RefRow& row : rows) {
        const uint64_t roles = r.varint();
        if (roles > UINT16_MAX)
            return false;
        row.roles = uint16_t(roles);
    }
    for (RefRow& row : rows) {
        const uint64_t code = r.varint();
        const uint64_t target = code == 0 ? next++ : code - 1;
        if (target > UINT32_MAX)
            return false;
        row.target = uint32_t(target);
    }
    uint64_t container = 0;
    for (RefRow& row : rows) {
        const uint64_t code = r.varint();
        if (code != 0)
            container = code - 1;
        if (container > UINT32_MAX)
            return false;
        row.container = uint32_t(container);
    }
    return !r.failed() && r.atEnd();
}

} // namespace

bool appendRefs(const std::vector<RefRow>& rows, size_t size, uint32_t targets, const UsrAt& usrAt,
                std::vector<Reference>& out, std::optional<uint32_t> only, uint32_t firstLine,
                uint32_t lastLine) {
    for (const RefRow& row : rows) {
        if (row.target >= targets || row.container > size)
            return false;
        if ((only && row.target != *only) || row.line < firstLine || row.line > lastLine)
            continue;
        Reference ref;
        const std::optional<uint64_t> usr = usrAt(row.target);
        const std::optional<uint64_t> container =
            row.container ? usrAt(row.container - 1) : std::optional<uint64_t>(0);
        if (!usr || !container)
            return false;
        ref.usrHash = *usr;
        ref.location = {row.line, row.column};
        ref.roles = row.roles;
        ref.container = *container;
        out.push_back(ref);
    }
    return true;
}

bool decodeRefRows(std::string_view plain, size_t size, uint32_t targets, const UsrAt& usrAt,
                   std::vector<Reference>& out, std::optional<uint32_t> only) {
    std::vector<RefRow> rows;
    return parseRows(plain, rows) && appendRefs(rows, size, targets, usrAt, out, only);
}

std::optional<std::vector<RefRow>> decodeRefBlockRows(std::string_view block) {
    Reader header(block);
    const uint64_t line = header.varint();
    thread_local std::string plain;
    // 128 references of 5 varints of at most 10 bytes, the count and the first new target.
    constexpr size_t kMaxPlain = 20 + kRefsPerBlock * 50;
    std::vector<RefRow> rows;
    if (header.failed() || !decompress(header.rest(), plain, kMaxPlain) ||
        !parseRows(plain, rows) || rows.front().line != line)
        return std::nullopt;
    return rows;
}

bool decodeRefBlock(std::string_view block, size_t size, uint32_t targets, const UsrAt& usrAt,
                    std::vector<Reference>& out, std::optional<uint32_t> only) {
    std::optional<std::vector<RefRow>> rows = decodeRefBlockRows(block);
    return rows && appendRefs(*rows, size, targets, usrAt, out, only);
}

std::optional<uint32_t> refBlockFirstLine(std::string_view block) {
    Reader r(block);
    const uint64_t line = r.varint();
    if (r.failed() || line > UINT32_MAX)
        return std::nullopt;
    return uint32_t(line);
}

} // namespace symdex
