#include "store/lmdb_layout.h"

#include "store/encoding.h"

#include <algorithm>

namespace symdex {

std::string fileIdKey(uint32_t fileId) {
    std::string key;
    appendBigEndian(key, fileId, 4);
    return key;
}

std::string rowKey(uint32_t fileId, uint32_t seq) {
    std::string key;
    key.reserve(8);
    appendBigEndian(key, fileId, 4);
    appendBigEndian(key, seq, 4);
    return key;
}

uint32_t rowSeq(std::string_view rowKey) {
    return uint32_t(readBigEndian(rowKey.substr(4, 4), 4));
}

std::string usrKey(uint64_t usrHash) {
    std::string key;
    appendBigEndian(key, usrHash, 8);
    return key;
}

std::string nameValue(uint64_t usrHash, uint32_t id, uint32_t seq) {
    std::string v;
    v.reserve(16);
    appendBigEndian(v, usrHash, 8);
    appendBigEndian(v, id, 4);
    appendBigEndian(v, seq, 4);
    return v;
}

std::string encodeUsrRow(const std::vector<UsrEntry>& entries) {
    std::string out;
    Writer w(out);
    w.varint(entries.size());
    uint32_t fileId = 0;
    for (const UsrEntry& entry : entries) {
        w.varint(entry.fileId - fileId);
        fileId = entry.fileId;
        w.varint(uint64_t(entry.seq) << 1 | (entry.tag == kRefTag ? 1 : 0));
    }
    return out;
}

bool decodeUsrRow(std::string_view bytes, std::vector<UsrEntry>& entries) {
    Reader r(bytes);
    const uint64_t count = r.varint();
    if (r.failed() || count > bytes.size())
        return false;
    entries.clear();
    entries.reserve(count);
    uint64_t fileId = 0;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t delta = r.varint(); // checked before the sum, which could wrap
        fileId += delta;
        const uint64_t seq = r.varint();
        if (r.failed() || delta > UINT32_MAX || fileId > UINT32_MAX || (seq >> 1) > UINT32_MAX)
            return false;
        entries.push_back({uint32_t(fileId), seq & 1 ? kRefTag : kDeclTag, uint32_t(seq >> 1)});
    }
    return r.atEnd();
}

std::string postingValue(size_t nameLength, uint32_t nameId) {
    std::string v;
    v.reserve(kPostingBytes);
    appendBigEndian(v, std::min<size_t>(nameLength, 0xffff), 2);
    appendBigEndian(v, nameId, 4);
    return v;
}

} // namespace symdex
