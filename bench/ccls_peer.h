// ccls as a peer: `ccls --index=ROOT` indexes a project and exits, with `index.threads` indexer
// threads and a fresh cache directory per run. Debian's ccls is built on LLVM 14 (symdex and the
// floor use 16): part of any difference is the compiler version.
#pragma once

#include "bench/peer.h"

#include <set>

namespace symdex::bench {

/// The name of ccls's cache file for a source file (binary format): the absolute path with '/'
/// and ':' turned into '@', and ".blob".
std::string cclsCacheFileName(const std::string& sourcePath);

/// The TUs of `tus` with no cache file anywhere under `cacheDirectory`.
std::vector<std::string> tusMissingFromCclsCache(const std::vector<std::string>& tus,
                                                 const std::filesystem::path& cacheDirectory);

class CclsPeer final : public Peer {
public:
    /// Throws std::runtime_error when ccls is not installed.
    explicit CclsPeer(const PeerSetup& setup);
    std::string name() const override { return "ccls"; }
    /// A cold index; the run counts only if every TU has a cache file afterwards.
    RunRecord run(unsigned threads, int round) override;

private:
    std::vector<std::string> tus_;
    std::filesystem::path project_; ///< holds the deduplicated compile_commands.json
    std::filesystem::path cache_;
    std::filesystem::path log_;
    double timeoutSeconds_;
};

} // namespace symdex::bench
