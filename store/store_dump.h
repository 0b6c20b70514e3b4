// A canonical text dump of everything a store holds: files (with content hashes), their symbols
// and references, and the TU records. Two stores hold the same index exactly when their dumps
// are equal; used by tests and by `symdex dump` to compare runs (thread counts, lock modes).
#pragma once

#include "store/store.h"

#include <filesystem>
#include <ostream>

namespace symdex {

/// Writes the dump; paths are printed relative to `root` when they lie below it.
void dumpStore(const Store& store, std::ostream& out, const std::filesystem::path& root = {});

} // namespace symdex
