#include "indexer/header_claims.h"

namespace symdex {

HeaderClaims::HeaderClaims(FileStamps& stamps,
                           const std::unordered_map<std::string, uint64_t>& storedHashes,
                           size_t tuCount, bool force)
    : stamps_(stamps), storedHashes_(storedHashes), force_(force), claimedBy_(tuCount) {}

void HeaderClaims::preclaim(const std::string& path, size_t tu) {
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    decltype(claims_)::accessor slot;
    claims_.insert(slot, path);
    slot->second = Claim{tu, true, stamp.value_or(FileStamp{})};
    claimedBy_[tu].push_back(path);
}

std::optional<FileStamp> HeaderClaims::claim(const std::string& path, size_t tu) {
    {
        decltype(claims_)::const_accessor found;
        if (claims_.find(found, path))
            return answer(found->second, tu);
    }
    // Not claimed yet: read and hash the file before taking the slot's lock.
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    if (!stamp)
        return std::nullopt; // unreadable (a virtual or vanished file): nothing to extract
    auto stored = storedHashes_.find(path);
    const bool current = !force_ && stored != storedHashes_.end() && stored->second != 0 &&
                         stored->second == stamp->contentHash;
    decltype(claims_)::accessor slot;
    if (!claims_.insert(slot, path))
        return answer(slot->second, tu); // another TU got there first
    slot->second = Claim{tu, !current, *stamp};
    if (!current)
        claimedBy_[tu].push_back(path);
    return answer(slot->second, tu);
}

void HeaderClaims::release(size_t tu) {
    for (const std::string& path : claimedBy_[tu]) {
        decltype(claims_)::accessor slot;
        if (claims_.find(slot, path) && slot->second.owner == tu)
            claims_.erase(slot);
    }
    claimedBy_[tu].clear();
}

} // namespace symdex
