// The parse-only floor: `clang++-16 -fsyntax-only` (or clang-16 for C) once per TU, N jobs at a
// time, timed as a whole: what parsing alone costs a compiler, with nothing indexed or stored.
// The same TUs and flags symdex parses (bench/floor.sh does the same from the shell).
#pragma once

#include "bench/peer.h"

namespace symdex::bench {

/// The floor's argv for one TU: the driver clang++-16 when the original compiler's name has
/// "++" in it (c++, g++, clang++), else clang-16; -fsyntax-only; the cleaned flags; the file.
std::vector<std::string> floorCommand(const CompileCommand& command);

class FloorPeer final : public Peer {
public:
    /// Throws std::runtime_error when clang-16 is not installed.
    explicit FloorPeer(const PeerSetup& setup);
    std::string name() const override { return "floor"; }
    /// Every TU parsed, `threads` compiler processes at a time; a TU whose compiler does not exit
    /// with status 0 makes the run fail (its parse stopped short or never ran).
    RunRecord run(unsigned threads, int round) override;

private:
    struct Job {
        std::vector<std::string> argv;
        std::filesystem::path directory;
    };
    std::vector<Job> jobs_;
    std::filesystem::path log_;
};

} // namespace symdex::bench
