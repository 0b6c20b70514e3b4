#include "indexer/header_claims.h"

#include <mutex>
#include <numeric>
#include <shared_mutex>

namespace symdex {

HeaderClaims::HeaderClaims(FileStamps& stamps,
                           const std::unordered_map<std::string, uint64_t>& storedHashes,
                           const std::unordered_map<std::string, size_t>& keptBy, size_t tuCount,
                           bool force)
    : stamps_(stamps), storedHashes_(storedHashes), keptBy_(keptBy), force_(force),
      claimedBy_(tuCount), takeoversBy_(tuCount, 0) {}

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
    // The store's version stands when its contents are current and the TU that extracted them is
    // up to date: that TU would extract the same again. A lower rank still takes it over.
    const std::optional<size_t> kept = keptCurrent(path, *stamp);
    const bool current = kept.has_value();
    auto owner = std::make_shared<std::atomic<size_t>>(current ? *kept : rank);
    std::unique_lock lock(stripe.mu);
    auto [slot, inserted] = stripe.claims.try_emplace(path);
    Claim& claim = slot->second;
    if (inserted) {
        claim = Claim{std::move(owner), !current, false, *stamp};
        if (!current)
            claimedBy_[rank].push_back(path);
    }
    if (canTakeOver(claim, rank)) {
        // The former owner, if it is parsing, reads this and stops extracting the file.
        takeoversBy_[rank] += claim.extract;
        claim.extract = true;
        claim.owner->store(rank, std::memory_order_relaxed);
        claimedBy_[rank].push_back(path);
    }
    return answer(claim, rank);
}

bool HeaderClaims::wouldClaim(const std::string& path, size_t rank) {
    Stripe& stripe = stripeOf(path);
    {
        std::shared_lock lock(stripe.mu);
        auto found = stripe.claims.find(path);
        if (found != stripe.claims.end())
            return canTakeOver(found->second, rank) || answer(found->second, rank).has_value();
    }
    std::optional<FileStamp> stamp = stamps_.hashed(path);
    if (!stamp)
        return false;
    const std::optional<size_t> kept = keptCurrent(path, *stamp);
    return !kept || rank < *kept;
}

std::optional<size_t> HeaderClaims::keptCurrent(const std::string& path,
                                                const FileStamp& stamp) const {
    auto stored = storedHashes_.find(path);
    auto kept = keptBy_.find(path);
    if (force_ || stored == storedHashes_.end() || stored->second == 0 ||
        stored->second != stamp.contentHash || kept == keptBy_.end())
        return std::nullopt;
    return kept->second;
}

void HeaderClaims::release(size_t rank) {
    for (const std::string& path : claimedBy_[rank]) {
        Stripe& stripe = stripeOf(path);
        std::unique_lock lock(stripe.mu);
        auto found = stripe.claims.find(path);
        if (found != stripe.claims.end() && found->second.ownerRank() == rank)
            stripe.claims.erase(found);
    }
    claimedBy_[rank].clear();
}

size_t HeaderClaims::takeovers() const {
    return std::accumulate(takeoversBy_.begin(), takeoversBy_.end(), size_t(0));
}

} // namespace symdex
