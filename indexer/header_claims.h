// The per-run claim table: a file reached by many TUs is extracted by one of them, and by none
// if the store already holds what that one would extract.
//
// Which one is decided by rank, not by timing. Every TU of the compile database has a global rank
// (Indexer: TUs of configurations too small for a PCH first, pch_config.h's pchTiers; then main
// files by size, largest first; then database order), TUs are started in rank
// order, and a header belongs to the lowest-ranked TU that includes it — in this run or, when
// that TU is up to date, in the store (`keptBy`). A TU that reaches a header claimed by a higher
// rank takes it over (the store keeps the lower rank's version: IndexedFile::priority). So a run
// gives the same store whatever the thread count and whatever earlier runs did, and the owner is
// never a TU whose libclang session skipped the header's function bodies: any TU that finished
// parsing them before the owner started has a lower rank, and would own the header instead. A
// claim is exclusive at every moment: the TU that loses a header stops extracting it
// (FileClaim::owner).
//
// The table is striped by path like the store's overlay: a fixed number of reader-writer locks
// (LockClass::ClaimTable in the lock telemetry), each over its own map.
#pragma once

#include "indexer/file_stamps.h"
#include "indexer/tu_parser.h"
#include "store/lock_telemetry.h"

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace symdex {

class HeaderClaims : public FileClaimer {
public:
    /// `storedHashes`: path -> content hash the store holds at the start of the run. `keptBy`:
    /// path -> rank of the up-to-date TU that extracted what the store holds (0 for the main file
    /// of an up-to-date TU: nobody else may extract it); a file without an entry has no owner
    /// left and is extracted by the first TU that reaches it. Both are read-only during the run.
    /// `tuCount`: ranks go from 0 to tuCount - 1. With `force`, every file is extracted once
    /// whatever the store holds.
    HeaderClaims(FileStamps& stamps, const std::unordered_map<std::string, uint64_t>& storedHashes,
                 const std::unordered_map<std::string, size_t>& keptBy, size_t tuCount, bool force);

    /// Gives `path` to the TU of rank `rank` for good: a TU always extracts its own main file.
    void preclaim(const std::string& path, size_t rank);
    std::optional<FileClaim> claim(const std::string& path, size_t rank) override;
    bool wouldClaim(const std::string& path, size_t rank) override;
    void release(size_t rank) override;
    /// Claims taken over from a higher rank so far (each one is a header extracted twice).
    size_t takeovers() const;

private:
    struct Claim {
        /// Written under the stripe's write lock; read by the owning parse without a lock.
        std::shared_ptr<std::atomic<size_t>> owner;
        bool extract = false; ///< false: the store holds what the owner (an up-to-date TU) made
        bool pinned = false;  ///< a main file: never taken over
        FileStamp stamp;

        size_t ownerRank() const { return owner->load(std::memory_order_relaxed); }
    };
    static std::optional<FileClaim> answer(const Claim& claim, size_t rank) {
        if (claim.ownerRank() != rank || !claim.extract)
            return std::nullopt;
        return FileClaim{claim.stamp, claim.owner};
    }
    /// The rank of the up-to-date TU whose version of `path` the store holds, if its contents are
    /// still `stamp`'s: that TU would extract the same again.
    std::optional<size_t> keptCurrent(const std::string& path, const FileStamp& stamp) const;
    static bool canTakeOver(const Claim& claim, size_t rank) {
        return !claim.pinned && rank < claim.ownerRank();
    }

    static constexpr size_t kStripes = 64;
    struct alignas(64) Stripe {
        CountedSharedMutex mu{LockClass::ClaimTable};
        std::unordered_map<std::string, Claim> claims; // Requires mu
    };
    Stripe& stripeOf(const std::string& path) {
        return stripes_[std::hash<std::string>{}(path) % kStripes];
    }

    FileStamps& stamps_;
    const std::unordered_map<std::string, uint64_t>& storedHashes_;
    const std::unordered_map<std::string, size_t>& keptBy_;
    const bool force_;
    std::array<Stripe, kStripes> stripes_;
    /// Paths each rank claimed, for release(); entry r is touched only by the thread parsing r.
    std::vector<std::vector<std::string>> claimedBy_;
    /// Per rank, like claimedBy_: summed by takeovers() after the parses.
    std::vector<size_t> takeoversBy_;
};

} // namespace symdex
