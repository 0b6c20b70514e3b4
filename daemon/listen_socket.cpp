#include "daemon/listen_socket.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace symdex::daemon {

namespace {

/// A file descriptor closed at scope exit.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

std::string errnoText() {
    return std::strerror(errno);
}

bool socketAddress(const std::string& path, sockaddr_un* addr, std::string* error) {
    *addr = {};
    addr->sun_family = AF_UNIX;
    if (path.size() >= sizeof addr->sun_path) {
        *error = "socket path '" + path + "' is too long (at most " +
                 std::to_string(sizeof addr->sun_path - 1) + " bytes)";
        return false;
    }
    std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
    return true;
}

/// Makes `path` free for bind(): absent, or a stale socket of this user, which is removed.
/// Requires the lock on the socket's directory.
bool claimPath(const std::string& path, const sockaddr_un& addr, std::string* error) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT)
            return true;
        *error = "cannot stat '" + path + "': " + errnoText();
        return false;
    }
    if (!S_ISSOCK(st.st_mode)) {
        *error = "'" + path +
                 "' exists and is not a socket; refusing to replace it (remove it yourself or "
                 "choose another --socket)";
        return false;
    }
    if (st.st_uid != ::geteuid()) {
        *error = "socket '" + path + "' is owned by uid " + std::to_string(st.st_uid) +
                 ", not by this user; refusing to replace it";
        return false;
    }
    Fd probe{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (probe.fd < 0) {
        *error = "socket: " + errnoText();
        return false;
    }
    if (::connect(probe.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
        // The listener's credentials as of its listen(): whoever it is, it is alive.
        ucred peer{};
        socklen_t length = sizeof peer;
        std::string who = "another process";
        if (::getsockopt(probe.fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && peer.pid > 0)
            who += " (pid " + std::to_string(peer.pid) + ")";
        *error =
            who + " is listening on the socket '" + path + "'; stop it or choose another --socket";
        return false;
    }
    if (errno != ECONNREFUSED) {
        *error = "cannot tell whether anyone listens on the socket '" + path + "': " + errnoText();
        return false;
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        *error = "cannot remove the stale socket '" + path + "': " + errnoText();
        return false;
    }
    return true;
}

} // namespace

std::optional<ListenSocket> ListenSocket::open(const std::string& path, int backlog,
                                               std::string* error) {
    sockaddr_un addr;
    if (!socketAddress(path, &addr, error))
        return std::nullopt;
    const std::string dir = std::filesystem::path(path).parent_path().string();
    Fd dirLock{::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dirLock.fd < 0 || ::flock(dirLock.fd, LOCK_EX) != 0) {
        *error = "cannot lock the socket directory '" + dir + "': " + errnoText();
        return std::nullopt;
    }
    if (!claimPath(path, addr, error))
        return std::nullopt;

    ListenSocket s;
    s.fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s.fd_ < 0) {
        *error = "socket: " + errnoText();
        return std::nullopt;
    }
    if (::bind(s.fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        *error = "cannot bind '" + path + "': " + errnoText();
        return std::nullopt;
    }
    s.path_ = path; // from here on the file is ours: the destructor removes it
    struct stat st;
    // 0600 before listen(): until then a connect is refused, whatever the umask made the mode.
    if (::chmod(path.c_str(), 0600) != 0 || ::lstat(path.c_str(), &st) != 0) {
        *error = "cannot chmod '" + path + "': " + errnoText();
        return std::nullopt;
    }
    s.device_ = st.st_dev;
    s.inode_ = st.st_ino;
    if (::listen(s.fd_, backlog) != 0) {
        *error = "cannot listen on '" + path + "': " + errnoText();
        return std::nullopt;
    }
    return s;
}

ListenSocket::~ListenSocket() {
    if (fd_ < 0)
        return;
    // Unlink before close: while this socket still accepts, a starting daemon sees it alive and
    // leaves it alone, so the path removed here cannot be a successor's.
    struct stat st;
    if (!path_.empty() && ::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
        st.st_dev == device_ && st.st_ino == inode_)
        ::unlink(path_.c_str());
    ::close(fd_);
}

} // namespace symdex::daemon
