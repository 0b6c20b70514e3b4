#include "protocol/instance_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex::protocol {

namespace {

std::filesystem::path lockPath(const std::filesystem::path& storeDirectory) {
    return storeDirectory / "daemon.lock";
}

std::optional<DaemonInfo> readInfo(int fd) {
    char buf[4096];
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return std::nullopt;
    std::istringstream in(std::string(buf, size_t(n)));
    DaemonInfo info;
    std::string pid;
    if (!std::getline(in, pid) || !std::getline(in, info.socketPath) || info.socketPath.empty())
        return std::nullopt;
    info.pid = pid_t(std::atol(pid.c_str()));
    return info;
}

} // namespace

std::optional<InstanceLock> InstanceLock::acquire(const std::filesystem::path& storeDirectory,
                                                  const std::string& socketPath,
                                                  std::string* error) {
    std::error_code ec;
    std::filesystem::create_directories(storeDirectory, ec);
    const std::string path = lockPath(storeDirectory).string();
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        *error = "cannot create '" + path + "': " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        std::optional<DaemonInfo> other = readInfo(fd);
        ::close(fd);
        *error = "another symdexd already serves the store '" + storeDirectory.string() + "'";
        if (other)
            *error += " (pid " + std::to_string(other->pid) + ", socket " + other->socketPath + ")";
        *error += "; stop it first (kill -TERM PID) or use another --store";
        return std::nullopt;
    }
    const std::string contents = std::to_string(::getpid()) + "\n" + socketPath + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, contents.data(), contents.size(), 0) != ssize_t(contents.size())) {
        *error = "cannot write '" + path + "': " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
    }
    return InstanceLock(fd, path);
}

InstanceLock::~InstanceLock() {
    if (fd_ < 0)
        return;
    // Empty the file before unlocking: a client must never read a dead daemon's socket path
    // from a file nobody holds.
    [[maybe_unused]] int rc = ::ftruncate(fd_, 0);
    ::close(fd_);
}

bool InstanceLock::stillInPlace(std::string* why) const {
    struct stat held, named;
    if (::fstat(fd_, &held) != 0) {
        *why = "cannot stat the lock '" + path_ + "': " + std::strerror(errno);
        return false;
    }
    if (::stat(path_.c_str(), &named) != 0) {
        *why = "'" + path_ + "' " + (errno == ENOENT ? "was deleted" : std::strerror(errno));
        return false;
    }
    if (held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
        *why = "'" + path_ + "' is another file now";
        return false;
    }
    return true;
}

std::optional<DaemonInfo> findDaemon(const std::filesystem::path& storeDirectory) {
    const std::string path = lockPath(storeDirectory).string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    std::optional<DaemonInfo> info;
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
        info = readInfo(fd); // held: a daemon runs
    ::close(fd);
    return info;
}

} // namespace symdex::protocol
