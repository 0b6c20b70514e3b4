// One daemon per store: `daemon.lock` in the store directory, held with flock(2) for the
// daemon's lifetime and holding its pid and socket path. The kernel drops the lock when the
// process dies, so a stale file never blocks a new daemon; clients read the socket path from it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>

namespace symdex::daemon {

/// What a running daemon wrote into its lock file.
struct DaemonInfo {
    pid_t pid = 0;
    std::string socketPath;
};

class InstanceLock {
public:
    /// Takes the lock of `storeDirectory` (created if missing) and records this process and
    /// `socketPath`. Fails with a message naming the running daemon's pid and socket.
    static std::optional<InstanceLock> acquire(const std::filesystem::path& storeDirectory,
                                               const std::string& socketPath, std::string* error);
    InstanceLock(InstanceLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    InstanceLock& operator=(InstanceLock&& other) noexcept {
        std::swap(fd_, other.fd_);
        return *this;
    }
    ~InstanceLock();

private:
    explicit InstanceLock(int fd) : fd_(fd) {}
    int fd_;
};

/// The daemon serving `storeDirectory`, if one runs (its lock is held). nullopt when none does,
/// or when one is starting and has not written its socket path yet.
std::optional<DaemonInfo> findDaemon(const std::filesystem::path& storeDirectory);

} // namespace symdex::daemon
