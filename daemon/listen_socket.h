// The daemon's listening socket, and the rules for claiming its path: a socket another process
// listens on is never taken over (it may be another daemon, serving another store), a file that
// is not a socket is never deleted, and only a stale socket of this user (nobody accepts on it:
// its daemon died) is replaced. At close the path is removed only while it is still the socket
// bound here.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>

namespace symdex::daemon {

class ListenSocket {
public:
    /// Claims `path` and listens on it with `backlog`, mode 0600, non-blocking. Holds a lock on
    /// the socket's directory (flock) from the probe to listen(), so two daemons starting at once
    /// cannot both find the path stale. Fails with a message naming the path and, when a process
    /// listens there, its pid.
    static std::optional<ListenSocket> open(const std::string& path, int backlog,
                                            std::string* error);
    ListenSocket(ListenSocket&& other) noexcept { *this = std::move(other); }
    ListenSocket& operator=(ListenSocket&& other) noexcept {
        std::swap(fd_, other.fd_);
        std::swap(path_, other.path_);
        std::swap(device_, other.device_);
        std::swap(inode_, other.inode_);
        return *this;
    }
    /// Removes the path if it is still this socket, then closes it.
    ~ListenSocket();

    int fd() const { return fd_; }

private:
    ListenSocket() = default;

    int fd_ = -1;
    std::string path_;
    dev_t device_ = 0; ///< the socket file bound, to recognise it at close
    ino_t inode_ = 0;
};

} // namespace symdex::daemon
