#include "indexer/file_stamps.h"

#include "store/encoding.h"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex {

namespace {

FileStamp stampOf(const struct stat& st) {
    FileStamp stamp;
    stamp.mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    stamp.ctimeNs = int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    stamp.size = uint64_t(st.st_size);
    stamp.inode = uint64_t(st.st_ino);
    return stamp;
}

std::optional<FileStamp> statFile(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt;
    return stampOf(st);
}

} // namespace

std::optional<FileStamp> stampFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return std::nullopt;
    }
    std::string contents;
    contents.resize(size_t(st.st_size));
    size_t done = 0;
    while (done < contents.size()) {
        ssize_t n = ::read(fd, contents.data() + done, contents.size() - done);
        if (n <= 0)
            break;
        done += size_t(n);
    }
    ::close(fd);
    contents.resize(done);
    FileStamp stamp = stampOf(st);
    stamp.size = done;
    stamp.contentHash = hash64(contents);
    stamp.asciiOnly = isAscii(contents);
    return stamp;
}

std::optional<FileStamp> FileStamps::stat(const std::string& path) {
    {
        decltype(entries_)::const_accessor found;
        if (entries_.find(found, path))
            return found->second.exists ? std::optional(found->second.stamp) : std::nullopt;
    }
    std::optional<FileStamp> stamp = statFile(path);
    Entry entry;
    entry.exists = stamp.has_value();
    if (stamp)
        entry.stamp = *stamp;
    entries_.insert({path, entry});
    return stamp;
}

std::optional<FileStamp> FileStamps::hashed(const std::string& path) {
    {
        decltype(entries_)::const_accessor found;
        if (entries_.find(found, path) && (found->second.hashed || !found->second.exists))
            return found->second.exists ? std::optional(found->second.stamp) : std::nullopt;
    }
    std::optional<FileStamp> stamp = stampFile(path);
    decltype(entries_)::accessor slot;
    entries_.insert(slot, path);
    if (!slot->second.hashed) {
        slot->second.exists = stamp.has_value();
        slot->second.hashed = true;
        if (stamp)
            slot->second.stamp = *stamp;
    }
    return slot->second.exists ? std::optional(slot->second.stamp) : std::nullopt;
}

} // namespace symdex

namespace symdex {

bool FileStamps::stillAbsent(const std::string& path) {
    {
        decltype(absent_)::const_accessor found;
        if (absent_.find(found, path))
            return found->second;
    }
    // What the parse saw: stat(2) or open(2) failing with one of these. Anything else now (the
    // path exists, even as a directory or a dangling symlink's target; or cannot be searched)
    // may change what the parse finds.
    struct stat st;
    const bool absent = ::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
    absent_.insert({path, absent});
    return absent;
}

std::string FileStamps::resolved(const std::string& path) {
    {
        decltype(resolved_)::const_accessor found;
        if (resolved_.find(found, path))
            return found->second;
    }
    std::string real;
    if (char* r = ::realpath(path.c_str(), nullptr)) {
        real = r;
        std::free(r);
    }
    resolved_.insert({path, real});
    return real;
}

} // namespace symdex
