// The per-run claim table: a file reached by many TUs is extracted by exactly one of them, the
// first to reach it, and by none if the store already holds its current contents. Claims are
// keyed by path; the content hash decides whether the stored copy is current.
#pragma once

#include "indexer/file_stamps.h"
#include "indexer/tu_parser.h"

#include <tbb/concurrent_hash_map.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace symdex {

class HeaderClaims : public FileClaimer {
public:
    /// `storedHashes`: path -> content hash the store holds at the start of the run (read-only
    /// during the run). With `force`, every file is extracted once whatever the store holds.
    HeaderClaims(FileStamps& stamps, const std::unordered_map<std::string, uint64_t>& storedHashes,
                 size_t tuCount, bool force);

    /// Gives `path` to `tu` before any parse starts: a TU always extracts its own main file.
    void preclaim(const std::string& path, size_t tu);
    std::optional<FileStamp> claim(const std::string& path, size_t tu) override;
    void release(size_t tu) override;

private:
    struct Claim {
        size_t owner = 0;
        bool extract = false; ///< false: the store already holds these contents
        FileStamp stamp;
    };
    static std::optional<FileStamp> answer(const Claim& claim, size_t tu) {
        return claim.owner == tu && claim.extract ? std::optional(claim.stamp) : std::nullopt;
    }

    FileStamps& stamps_;
    const std::unordered_map<std::string, uint64_t>& storedHashes_;
    const bool force_;
    tbb::concurrent_hash_map<std::string, Claim> claims_;
    /// Paths each TU claimed, for release(); entry i is touched only by the thread parsing TU i.
    std::vector<std::vector<std::string>> claimedBy_;
};

} // namespace symdex
