// One daemon per store: `daemon.lock` in the store directory, held with flock(2) for the
// daemon's lifetime and holding its pid and socket path. The kernel drops the lock when the
// process dies, so a stale file never blocks a new daemon; clients read the socket path from it.
// Both sides of that file live here, so the daemon that writes it and the clients that find the
// daemon through it (findDaemon) share one format.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>

namespace symdex::protocol {

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
    InstanceLock(InstanceLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
        other.fd_ = -1;
    }
    InstanceLock& operator=(InstanceLock&& other) noexcept {
        std::swap(fd_, other.fd_);
        std::swap(path_, other.path_);
        return *this;
    }
    ~InstanceLock();

    /// Whether the lock file's path still names the file this lock holds. A lock on a file that
    /// was deleted or replaced keeps out nobody: a new daemon would lock the new file. False and
    /// *why ("'PATH' was deleted" / "... is another file now") when it does not.
    bool stillInPlace(std::string* why) const;

private:
    InstanceLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    int fd_;
    std::string path_; ///< the lock file
};

/// The daemon serving `storeDirectory`, if one runs (its lock is held). nullopt when none does,
/// or when one is starting and has not written its socket path yet.
std::optional<DaemonInfo> findDaemon(const std::filesystem::path& storeDirectory);

} // namespace symdex::protocol
