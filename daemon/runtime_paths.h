// Where a daemon's socket lives: $XDG_RUNTIME_DIR/symdex/ (fallback /tmp/symdex-UID/), a
// directory only its user may enter (0700, owned by the user), so no other user can connect to
// the socket or plant one in its place.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace symdex::daemon {

/// Creates `dir` (mode 0700) if missing, and checks it is a real directory owned by the calling
/// user with no permissions for group or others. On failure sets *error (naming the directory,
/// its owner or its mode) and returns false.
bool ensurePrivateDirectory(const std::filesystem::path& dir, std::string* error);

/// $XDG_RUNTIME_DIR/symdex when XDG_RUNTIME_DIR is set and absolute, else /tmp/symdex-UID.
std::filesystem::path socketDirectory();

/// The default socket of the daemon serving `storeDirectory`: one per store, named after a hash
/// of the store's absolute path.
std::filesystem::path defaultSocketPath(const std::filesystem::path& storeDirectory);

} // namespace symdex::daemon
