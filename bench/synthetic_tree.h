// Synthetic source trees for controlled experiments (`symdex bench --synthetic F,D,H --seed S`):
// F translation units of D declarations each, and H shared headers of D declarations each that
// every TU includes a seeded half of, with a compile_commands.json. Many small TUs (F large, D
// small), header-heavy (H large) or a few huge TUs (F small, D large) from one generator. The
// same spec and seed always write the same bytes, and the generator knows how many symbols a
// correct index of the tree holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace symdex::bench {

struct SyntheticSpec {
    /// Translation units (src/file_N.cpp); at least 1.
    size_t files = 1;
    /// Declarations per file, TUs and headers alike; at least 1.
    size_t declarations = 1;
    /// Shared headers (include/synth/shared_K.h).
    size_t sharedHeaders = 0;
    /// Picks declaration kinds, constants and which headers each TU includes.
    uint64_t seed = 1;
};

/// Parses "FILES,DECLS,SHARED_HEADERS"; nullopt with `error` set when it is not three counts
/// (FILES and DECLS at least 1, each at most a million).
std::optional<SyntheticSpec> parseSyntheticSpec(const std::string& text, uint64_t seed,
                                                std::string* error);

struct SyntheticTree {
    std::filesystem::path root;
    std::filesystem::path database; ///< root/compile_commands.json
    size_t tus = 0;
    size_t headers = 0;
    /// Declarations a complete index stores: namespaces (once per file that opens them),
    /// functions with their parameter, variables, structs with their field and method, enums
    /// with their constants.
    size_t expectedSymbols = 0;
};

/// Writes the tree into `root` (emptied first). Throws std::runtime_error when it cannot write.
SyntheticTree generateSyntheticTree(const SyntheticSpec& spec, const std::filesystem::path& root);

/// The directory name `symdex bench --synthetic` uses for a spec: "synthetic-F-D-H-seed-S".
std::string syntheticTreeName(const SyntheticSpec& spec);

} // namespace symdex::bench
