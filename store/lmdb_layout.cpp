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

std::string usrValue(uint32_t id, char tag, uint32_t seq) {
    std::string v;
    v.reserve(9);
    appendBigEndian(v, id, 4);
    v.push_back(tag);
    appendBigEndian(v, seq, 4);
    return v;
}

std::string postingValue(size_t nameLength, uint32_t nameId) {
    std::string v;
    v.reserve(kPostingBytes);
    appendBigEndian(v, std::min<size_t>(nameLength, 0xffff), 2);
    appendBigEndian(v, nameId, 4);
    return v;
}

} // namespace symdex
