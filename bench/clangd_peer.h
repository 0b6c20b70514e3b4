// clangd's background index as a peer: `clangd` is clangd-19 (Debian's newest, the strongest
// peer), `clangd-16` the one of symdex's own libclang. Debian ships no clangd-indexer, so the
// bench drives `clangd-NN --background-index -j=N` over LSP: initialize, open one empty scratch
// file (clangd loads the compile database, and enqueues every TU, only once a file asks for it),
// and wait for the end of its "backgroundIndexProgress" work-done progress. Shards land in
// PROJECT/.cache/clangd/index, PROJECT being the peer's own copy of the compile database, wiped
// before each run. Background threads run at normal priority, like symdex's.
#pragma once

#include "bench/peer.h"

#include <map>

namespace symdex::bench {

/// The TUs of `tus` without a shard in `indexDirectory`. clangd names a shard after the file's
/// basename and a hash of its path ("db_impl.cc.0123ABCD.idx"), so TUs are matched by basename:
/// as many shards as TUs of that basename.
std::vector<std::string> tusMissingFromClangdShards(const std::vector<std::string>& tus,
                                                    const std::filesystem::path& indexDirectory);

class ClangdPeer final : public Peer {
public:
    /// `name`: "clangd" (clangd-19) or "clangd-16". Throws std::runtime_error when that clangd
    /// is not installed.
    ClangdPeer(const PeerSetup& setup, std::string name);
    std::string name() const override { return name_; }
    /// Wall, user and sys from spawning clangd to the end of its indexing progress with every
    /// shard written (user and sys read from /proc/PID/stat then: the shutdown is left out).
    RunRecord run(unsigned threads, int round) override;

private:
    /// Drives the LSP session until indexing ended with every TU's shard on disk; the failure
    /// reason otherwise. `endSeconds` gets when the last progress ended.
    std::string waitForIndex(class LspConnection& lsp, double* endSeconds);

    std::string name_;
    std::string executable_; ///< clangd-19 or clangd-16
    std::vector<std::string> tus_;
    std::filesystem::path project_;
    std::filesystem::path log_;
    double timeoutSeconds_;
};

} // namespace symdex::bench
