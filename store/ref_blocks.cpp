#include "store/ref_blocks.h"

#include "store/encoding.h"
#include "store/zstd_frame.h"

#include <algorithm>
#include <unordered_map>

namespace symdex {

RefBlocks encodeRefBlocks(const std::vector<Reference>& refs) {
    std::vector<uint64_t> targets, containers;
    targets.reserve(refs.size());
    for (const Reference& ref : refs) {
        targets.push_back(ref.usrHash);
        if (ref.container)
            containers.push_back(ref.container);
    }
    auto sortUnique = [](std::vector<uint64_t>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    sortUnique(targets);
    sortUnique(containers);
    std::erase_if(containers, [&](uint64_t usr) {
        return std::binary_search(targets.begin(), targets.end(), usr);
    });

    RefBlocks out;
    out.targets = uint32_t(targets.size());
    out.relation.assign(targets.size(), 0);
    std::unordered_map<uint64_t, uint32_t> index;
    index.reserve(targets.size() + containers.size());
    appendBigEndian(out.usrTable, targets.size(), 4);
    for (const auto* part : {&targets, &containers})
        for (uint64_t usr : *part) {
            index.emplace(usr, uint32_t(index.size()));
            appendBigEndian(out.usrTable, usr, 8);
        }

    for (size_t begin = 0; begin < refs.size(); begin += kRefsPerBlock) {
        const size_t end = std::min(refs.size(), begin + kRefsPerBlock);
        std::string plain;
        Writer w(plain);
        w.varint(end - begin);
        int64_t line = 0;
        for (size_t i = begin; i < end; ++i) {
            const Reference& ref = refs[i];
            w.svarint(int64_t(ref.location.line) - line);
            line = ref.location.line;
            w.varint(ref.location.column);
            w.varint(ref.roles);
            const uint32_t target = index.at(ref.usrHash);
            if (ref.roles & (kRoleBase | kRoleOverride))
                out.relation[target] = 1;
            w.varint(target);
            w.varint(ref.container ? index.at(ref.container) + 1 : 0);
        }
        std::string block;
        Writer(block).varint(refs[begin].location.line);
        appendCompressed(block, plain);
        out.blocks.push_back(std::move(block));
    }
    return out;
}

std::optional<UsrTable> UsrTable::parse(std::string_view bytes) {
    if (bytes.size() < 4 || (bytes.size() - 4) % 8 != 0)
        return std::nullopt;
    UsrTable table;
    table.bytes_ = bytes;
    table.targets_ = uint32_t(readBigEndian(bytes, 4));
    if (table.targets_ > table.size())
        return std::nullopt;
    return table;
}

uint64_t UsrTable::at(size_t index) const {
    return readBigEndian(bytes_.substr(4 + 8 * index), 8);
}

std::optional<uint32_t> UsrTable::findTarget(uint64_t usrHash) const {
    size_t lo = 0, hi = targets_;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const uint64_t at = this->at(mid);
        if (at == usrHash)
            return uint32_t(mid);
        if (at < usrHash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return std::nullopt;
}

namespace {

/// The rows of a block's decompressed bytes.
bool parseRows(std::string_view plain, std::vector<RefRow>& out) {
    Reader r(plain);
    const uint64_t count = r.varint();
    if (count == 0 || count > kRefsPerBlock)
        return false;
    out.reserve(out.size() + count);
    int64_t line = 0;
    for (uint64_t i = 0; i < count; ++i) {
        const int64_t delta = r.svarint(); // bounded before the sum, which could overflow
        if (delta > int64_t(UINT32_MAX) || delta < -int64_t(UINT32_MAX))
            return false;
        line += delta;
        const uint64_t column = r.varint();
        const uint64_t roles = r.varint();
        const uint64_t usr = r.varint();
        const uint64_t container = r.varint();
        if (r.failed() || line < 0 || line > UINT32_MAX || column > UINT32_MAX ||
            roles > UINT16_MAX || usr > UINT32_MAX || container > UINT32_MAX)
            return false;
        out.push_back({uint32_t(line), uint32_t(column), uint32_t(usr), uint32_t(container),
                       uint16_t(roles)});
    }
    return r.atEnd();
}

} // namespace

bool appendRefs(const std::vector<RefRow>& rows, const UsrTable& table, std::vector<Reference>& out,
                std::optional<uint32_t> only, uint32_t firstLine, uint32_t lastLine) {
    const size_t size = table.size();
    for (const RefRow& row : rows) {
        if (row.target >= table.targets() || row.container > size)
            return false;
        if ((only && row.target != *only) || row.line < firstLine || row.line > lastLine)
            continue;
        Reference ref;
        ref.usrHash = table.at(row.target);
        ref.location = {row.line, row.column};
        ref.roles = row.roles;
        ref.container = row.container ? table.at(row.container - 1) : 0;
        out.push_back(ref);
    }
    return true;
}

bool decodeRefRows(std::string_view plain, const UsrTable& table, std::vector<Reference>& out,
                   std::optional<uint32_t> only) {
    std::vector<RefRow> rows;
    return parseRows(plain, rows) && appendRefs(rows, table, out, only);
}

std::optional<std::vector<RefRow>> decodeRefBlockRows(std::string_view block) {
    Reader header(block);
    const uint64_t line = header.varint();
    thread_local std::string plain;
    // 128 references of 5 varints of at most 10 bytes, and the count.
    constexpr size_t kMaxPlain = 10 + kRefsPerBlock * 50;
    std::vector<RefRow> rows;
    if (header.failed() || !decompress(header.rest(), plain, kMaxPlain) ||
        !parseRows(plain, rows) || rows.front().line != line)
        return std::nullopt;
    return rows;
}

bool decodeRefBlock(std::string_view block, const UsrTable& table, std::vector<Reference>& out,
                    std::optional<uint32_t> only) {
    std::optional<std::vector<RefRow>> rows = decodeRefBlockRows(block);
    return rows && appendRefs(*rows, table, out, only);
}

std::optional<uint32_t> refBlockFirstLine(std::string_view block) {
    Reader r(block);
    const uint64_t line = r.varint();
    if (r.failed() || line > UINT32_MAX)
        return std::nullopt;
    return uint32_t(line);
}

} // namespace symdex
