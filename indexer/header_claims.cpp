#include "indexer/header_claims.h"

#include <numeric>

namespace symdex {

HeaderClaims::HeaderClaims(FileStamps& stamps,
                           const std::unordered_map<std::string, uint64_t>& storedHashes,
                           size_t tuCount, bool force)
    : stamps_(stamps), storedHashes_(storedHashes), force_(force), claimedBy_(tuCount),
      takeoversBy_(tuCount, 0) {}

void HeaderClaims::preclaim(const std::string& path, size_t rank) {
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    decltype(claims_)::accessor slot;
    claims_.insert(slot, path);
    slot->second = Claim{rank, true, true, stamp.value_or(FileStamp{})};
    claimedBy_[rank].push_back(path);
}

std::optional<FileStamp> HeaderClaims::claim(const std::string& path, size_t rank) {
    {
        decltype(claims_)::const_accessor found;
        if (claims_.find(found, path) && !canTakeOver(found->second, rank))
            return answer(found->second, rank);
    }
    // Not claimed yet (or by a higher rank): read and hash the file before taking the slot's lock.
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    if (!stamp)
        return std::nullopt; // unreadable (a virtual or vanished file): nothing to extract
    auto stored = storedHashes_.find(path);
    const bool current = !force_ && stored != storedHashes_.end() && stored->second != 0 &&
                         stored->second == stamp->contentHash;
    decltype(claims_)::accessor slot;
    if (claims_.insert(slot, path)) {
        slot->second = Claim{rank, !current, false, *stamp};
        if (!current)
            claimedBy_[rank].push_back(path);
    } else if (canTakeOver(slot->second, rank)) {
        slot->second.owner = rank;
        claimedBy_[rank].push_back(path);
        ++takeoversBy_[rank];
    }
    return answer(slot->second, rank);
}

void HeaderClaims::release(size_t rank) {
    for (const std::string& path : claimedBy_[rank]) {
        decltype(claims_)::accessor slot;
        if (claims_.find(slot, path) && slot->second.owner == rank)
            claims_.erase(slot);
    }
    claimedBy_[rank].clear();
}

size_t HeaderClaims::takeovers() const {
    return std::accumulate(takeoversBy_.begin(), takeoversBy_.end(), size_t(0));
}

} // namespace symdex
