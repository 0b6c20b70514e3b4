#include "daemon/runtime_paths.h"

#include "store/encoding.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex::daemon {

bool ensurePrivateDirectory(const std::filesystem::path& dir, std::string* error) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        *error = "cannot create socket directory '" + dir.string() + "': " + std::strerror(errno);
        return false;
    }
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) {
        *error = "cannot stat socket directory '" + dir.string() + "': " + std::strerror(errno);
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        *error = "socket directory '" + dir.string() + "' is not a directory (or is a symlink)";
        return false;
    }
    if (st.st_uid != ::geteuid()) {
        *error = "socket directory '" + dir.string() + "' is owned by uid " +
                 std::to_string(st.st_uid) + ", not by this user (uid " +
                 std::to_string(::geteuid()) + "); refusing to use it";
        return false;
    }
    if (st.st_mode & 077) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
        *error = "socket directory '" + dir.string() + "' has mode " + mode +
                 "; it must be 0700 (chmod 700 '" + dir.string() + "')";
        return false;
    }
    return true;
}

std::filesystem::path socketDirectory() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    if (runtime && runtime[0] == '/')
        return std::filesystem::path(runtime) / "symdex";
    return std::filesystem::path("/tmp") / ("symdex-" + std::to_string(::geteuid()));
}

std::filesystem::path defaultSocketPath(const std::filesystem::path& storeDirectory) {
    char name[32];
    std::snprintf(name, sizeof name, "%016llx.sock",
                  static_cast<unsigned long long>(hash64(storeDirectory.string())));
    return socketDirectory() / name;
}

} // namespace symdex::daemon
