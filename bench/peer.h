// Peers: other ways to do the same work on the same compile database, timed in the same bench
// run at the same thread counts so that symdex's wall can be given as a ratio to each. A peer
// runs as child processes (wait4's rusage covers all their threads) and must prove it indexed
// every TU (its cache, shards or exit codes), or its run is marked failed.
#pragma once

#include "bench/run_record.h"
#include "indexer/compile_db.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace symdex::bench {

struct PeerSetup {
    /// The TUs symdex indexes: the first entry of each distinct file, flags cleaned.
    const CompileDatabase* database = nullptr;
    /// A directory of the peer's own: its copy of the compile database, caches, logs.
    std::filesystem::path workDirectory;
    /// Give up on one run after this long (a peer that hangs must not hang the bench).
    double timeoutSeconds = 3600;
};

class Peer {
public:
    virtual ~Peer() = default;
    /// "floor", "ccls" or "clangd": the config name of its rows.
    virtual std::string name() const = 0;
    /// One cold run with `threads` parallel jobs or threads. Never throws for a failed run: the
    /// record says why it failed.
    virtual RunRecord run(unsigned threads, int round) = 0;
};

/// The peers `makePeer` knows, in report order.
const std::vector<std::string>& knownPeers();

/// Creates the peer `name`. Throws std::runtime_error for an unknown name or when the peer's
/// program is not installed (the message names the Debian package).
std::unique_ptr<Peer> makePeer(const std::string& name, const PeerSetup& setup);

/// Writes `dir`/compile_commands.json holding, of `db`'s source file, the first entry of each TU
/// in `db`: the peers see exactly the TUs symdex indexes, with their original commands. Throws
/// std::runtime_error when the source cannot be read.
void writeDeduplicatedDatabase(const CompileDatabase& db, const std::filesystem::path& dir);

/// A record for a peer run, filled from how its process ended.
RunRecord peerRecord(const std::string& name, unsigned threads, int round, size_t tusExpected);

} // namespace symdex::bench
