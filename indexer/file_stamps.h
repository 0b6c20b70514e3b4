// What is on disk now: a per-run cache of each file's mtime, ctime, size, inode and content hash,
// and of which paths a parse probed in vain are still absent, shared by all threads. Each file is
// stat'ed at most once and read at most once per run; the work happens outside the table's locks
// (two threads may both compute a missing entry; both get the same answer and the first insert
// wins).
#pragma once

#include "indexer/tu_parser.h"

#include <tbb/concurrent_hash_map.h>

#include <optional>
#include <string>

namespace symdex {

class FileStamps {
public:
    /// The stat fields, without reading the file; nullopt if it does not exist. contentHash is 0.
    std::optional<FileStamp> stat(const std::string& path);
    /// The stat fields and the hash of the contents; nullopt if the file cannot be read.
    std::optional<FileStamp> hashed(const std::string& path);
    /// Whether nothing exists at `path` (stat fails with ENOENT or ENOTDIR), as when a parse
    /// probed it (TuRecord::absentIds). Each path is stat'ed at most once per run.
    bool stillAbsent(const std::string& path);
    /// What `path` resolves to now, symlinks followed (realpath(3)); empty if nothing. Each path
    /// is resolved at most once per run (TuRecord::aliases).
    std::string resolved(const std::string& path);

private:
    struct Entry {
        bool exists = false;
        bool hashed = false;
        FileStamp stamp;
    };
    tbb::concurrent_hash_map<std::string, Entry> entries_;
    tbb::concurrent_hash_map<std::string, bool> absent_;
    tbb::concurrent_hash_map<std::string, std::string> resolved_;
};

/// Reads and hashes a file; nullopt if it cannot be read.
std::optional<FileStamp> stampFile(const std::string& path);

} // namespace symdex
