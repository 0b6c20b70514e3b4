#include "indexer/header_claims.h"

#include <mutex>
#include <numeric>
#include <set>
#include <shared_mutex>

namespace symdex {

HeaderClaims::HeaderClaims(FileStamps& stamps,
                           const std::unordered_map<std::string, uint64_t>& storedHashes,
                           size_t tuCount, bool force)
    : stamps_(stamps), storedHashes_(storedHashes), force_(force), claimedBy_(tuCount),
      takeoversBy_(tuCount, 0), releasedBy_(tuCount) {}

void HeaderClaims::preclaim(const std::string& path, size_t rank) {
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    Stripe& stripe = stripeOf(path);
    std::unique_lock lock(stripe.mu);
    stripe.claims[path] =
        Claim{std::make_shared<std::atomic<size_t>>(rank), true, true, stamp.value_or(FileStamp{})};
    claimedBy_[rank].push_back(path);
}

std::optional<FileClaim> HeaderClaims::claim(const std::string& path, size_t rank) {
    Stripe& stripe = stripeOf(path);
    {
        std::shared_lock lock(stripe.mu);
        auto found = stripe.claims.find(path);
        if (found != stripe.claims.end() && !canTakeOver(found->second, rank))
            return answer(found->second, rank);
    }
    // Not claimed yet (or by a higher rank): read and hash the file before taking the write lock.
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    if (!stamp)
        return std::nullopt; // unreadable (a virtual or vanished file): nothing to extract
    auto stored = storedHashes_.find(path);
    const bool current = !force_ && stored != storedHashes_.end() && stored->second != 0 &&
                         stored->second == stamp->contentHash;
    auto owner = std::make_shared<std::atomic<size_t>>(rank); // allocated outside the lock
    std::unique_lock lock(stripe.mu);
    auto [slot, inserted] = stripe.claims.try_emplace(path);
    Claim& claim = slot->second;
    if (inserted) {
        claim = Claim{std::move(owner), !current, false, *stamp};
        if (!current)
            claimedBy_[rank].push_back(path);
    } else if (canTakeOver(claim, rank)) {
        // The former owner reads this and stops extracting the file.
        claim.owner->store(rank, std::memory_order_relaxed);
        claimedBy_[rank].push_back(path);
        ++takeoversBy_[rank];
    }
    return answer(claim, rank);
}

void HeaderClaims::release(size_t rank) {
    for (const std::string& path : claimedBy_[rank]) {
        Stripe& stripe = stripeOf(path);
        std::unique_lock lock(stripe.mu);
        auto found = stripe.claims.find(path);
        if (found != stripe.claims.end() && found->second.ownerRank() == rank) {
            stripe.claims.erase(found);
            releasedBy_[rank].push_back(path);
        }
    }
    claimedBy_[rank].clear();
}

std::vector<std::string> HeaderClaims::orphans() {
    std::set<std::string> out;
    for (const std::vector<std::string>& paths : releasedBy_)
        for (const std::string& path : paths) {
            Stripe& stripe = stripeOf(path);
            std::shared_lock lock(stripe.mu);
            if (!stripe.claims.contains(path))
                out.insert(path);
        }
    return {out.begin(), out.end()};
}

size_t HeaderClaims::takeovers() const {
    return std::accumulate(takeoversBy_.begin(), takeoversBy_.end(), size_t(0));
}

} // namespace symdex
