#include "store/store_check.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace symdex {

namespace {

// LMDB 0.9's on-disk layout (mdb.c), on a 64-bit little-endian host.
constexpr uint32_t kMagic = 0xBEEFC0DE;
constexpr uint32_t kDataVersion = 1;
constexpr size_t kPageHeader = 16; // pgno u64, pad u16, flags u16, lower u16, upper u16
constexpr size_t kNodeHeader = 8;  // lo u16, hi u16, flags u16, ksize u16
constexpr size_t kDbSize = 48;     // MDB_db
constexpr size_t kMetaSize = 136;  // MDB_meta, at kPageHeader in a meta page
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08, kLeaf2 = 0x20,
                   kSubPage = 0x40;
constexpr uint16_t kBigData = 0x01, kSubData = 0x02, kDupData = 0x04;
constexpr uint32_t kMaxDepth = 64;

template <typename T> T load(const unsigned char* p) {
    T value;
    std::memcpy(&value, p, sizeof value);
    return value;
}

struct Db {
    uint16_t flags = 0;
    uint16_t depth = 0;
    uint64_t root = 0; ///< ~0: empty
};

Db loadDb(const unsigned char* p) {
    return {load<uint16_t>(p + 4), load<uint16_t>(p + 6), load<uint64_t>(p + 40)};
}

struct Meta {
    uint32_t magic = 0, version = 0, pageSize = 0;
    Db free, main;
    uint64_t lastPage = 0, txnId = 0;
};

Meta loadMeta(const unsigned char* page) {
    const unsigned char* m = page + kPageHeader;
    Meta meta;
    meta.magic = load<uint32_t>(m);
    meta.version = load<uint32_t>(m + 4);
    meta.pageSize = load<uint32_t>(m + 24); // mm_dbs[FREE_DBI].md_pad
    meta.free = loadDb(m + 24);
    meta.main = loadDb(m + 24 + kDbSize);
    meta.lastPage = load<uint64_t>(m + 24 + 2 * kDbSize);
    meta.txnId = load<uint64_t>(m + 32 + 2 * kDbSize);
    return meta;
}

/// The damage in one meta page, or "".
std::string metaProblem(const unsigned char* page, const Meta& meta, int index) {
    const std::string which = "meta page " + std::to_string(index);
    if (!(load<uint16_t>(page + 10) & kMeta))
        return which + " is not marked as a meta page";
    if (meta.magic != kMagic)
        return which + " has no LMDB magic number";
    if (meta.version != kDataVersion)
        return which + " has LMDB data version " + std::to_string(meta.version) + ", not " +
               std::to_string(kDataVersion);
    if (meta.pageSize < 512 || meta.pageSize > 65536 || (meta.pageSize & (meta.pageSize - 1)))
        return which + " has an impossible page size " + std::to_string(meta.pageSize);
    return {};
}

bool memLess(std::string_view a, std::string_view b) {
    return a < b; // LMDB's default comparison: memcmp, then the shorter first
}

/// Where the walk is, turned into words only when a check fails (the walk reads every page of
/// the store, so it builds no string on the way).
struct Where {
    const std::string* tree = nullptr; ///< the tree's name, at the top of a chain
    const Where* outer = nullptr;      ///< the node whose duplicates are walked, if any
    uint64_t page = 0;                 ///< 0: the tree itself
    long node = -1;                    ///< -1: the page itself

    Where at(uint64_t pgno) const { return {tree, outer, pgno, -1}; }
    Where atNode(size_t i) const { return {tree, outer, page, long(i)}; }
    std::string describe() const {
        std::string s = outer ? outer->describe() + " (duplicates)" : *tree;
        if (page)
            s += ", page " + std::to_string(page);
        if (node >= 0)
            s += ", node " + std::to_string(node);
        return s;
    }
};

/// Walks the trees of one snapshot in the map. Every read is bounds-checked against the pages
/// the file holds, so a damaged page is reported, never followed out of the file.
class TreeWalker {
public:
    TreeWalker(const unsigned char* map, uint32_t pageSize, uint64_t lastPage)
        : map_(map), pageSize_(pageSize), lastPage_(lastPage) {}

    std::string walk(const Db& db, const std::string& name) {
        if (db.root == ~uint64_t(0))
            return {};
        if (db.depth == 0 || db.depth > kMaxDepth)
            return name + ": impossible tree depth " + std::to_string(db.depth);
        Where top;
        top.tree = &name;
        return page(db.root, db.depth, db, top);
    }

private:
    const unsigned char* pageAt(uint64_t pgno) const { return map_ + pgno * pageSize_; }

    std::string page(uint64_t pgno, uint32_t depth, const Db& db, const Where& parent) {
        if (pgno < 2 || pgno > lastPage_)
            return parent.describe() + ": page number " + std::to_string(pgno) +
                   " out of range 2.." + std::to_string(lastPage_);
        const Where here = parent.at(pgno);
        const unsigned char* p = pageAt(pgno);
        if (load<uint64_t>(p) != pgno)
            return here.describe() + ": header names page " + std::to_string(load<uint64_t>(p));
        const uint16_t flags = load<uint16_t>(p + 10);
        const bool leaf = depth == 1;
        const uint16_t expected = leaf ? kLeaf : kBranch;
        if ((flags & (kBranch | kLeaf | kOverflow | kMeta)) != expected)
            return here.describe() + ": flags " + std::to_string(flags) + " where a " +
                   (leaf ? "leaf" : "branch") + " page belongs";
        std::string problem = nodes(p, pageSize_, flags, here, db);
        if (!problem.empty() || leaf)
            return problem;
        const size_t count = (load<uint16_t>(p + 12) - kPageHeader) / 2;
        for (size_t i = 0; i < count; ++i) {
            const unsigned char* node = p + load<uint16_t>(p + kPageHeader + 2 * i);
            const uint64_t child = uint64_t(load<uint16_t>(node)) |
                                   uint64_t(load<uint16_t>(node + 2)) << 16 |
                                   uint64_t(load<uint16_t>(node + 4)) << 32;
            problem = page(child, depth - 1, db, here);
            if (!problem.empty())
                return problem;
        }
        return {};
    }

    /// Checks the nodes of a branch or leaf page (or a duplicate sub-page) of `size` bytes.
    std::string nodes(const unsigned char* p, size_t size, uint16_t flags, const Where& here,
                      const Db& db) {
        const uint16_t lower = load<uint16_t>(p + 12), upper = load<uint16_t>(p + 14);
        if (lower < kPageHeader || (lower - kPageHeader) % 2 || upper > size || lower > upper)
            return here.describe() + ": bounds " + std::to_string(lower) + ".." +
                   std::to_string(upper) + " do not fit a page of " + std::to_string(size) +
                   " bytes";
        const size_t count = (lower - kPageHeader) / 2;
        // Keys of the main database and of our named databases sort by memcmp; integer keys
        // (the free-page list) and the duplicate values of DUPSORT trees are not compared here.
        const bool ordered = !(db.flags & (0x02 | 0x08)); // REVERSEKEY, INTEGERKEY
        if (flags & kLeaf2) {
            const size_t keySize = load<uint16_t>(p + 8);
            if (keySize == 0 || kPageHeader + count * keySize > size)
                return here.describe() + ": " + std::to_string(count) + " fixed-size keys of " +
                       std::to_string(keySize) + " bytes do not fit";
            return {};
        }
        std::string_view previous;
        for (size_t i = 0; i < count; ++i) {
            const size_t offset = load<uint16_t>(p + kPageHeader + 2 * i);
            if (offset < upper || offset + kNodeHeader > size)
                return here.atNode(i).describe() + ": offset " + std::to_string(offset) +
                       " lies outside the node area";
            const unsigned char* node = p + offset;
            const size_t keySize = load<uint16_t>(node + 6);
            const size_t end = offset + kNodeHeader + keySize;
            if (end > size)
                return here.atNode(i).describe() + ": the key runs past the page";
            const std::string_view key(reinterpret_cast<const char*>(node + kNodeHeader), keySize);
            const bool branch = flags & kBranch;
            if (ordered && !(flags & kSubPage) && (i > 1 || (i == 1 && !branch)) &&
                !memLess(previous, key))
                return here.atNode(i).describe() + ": keys out of order";
            previous = key;
            if (branch)
                continue;
            std::string problem = leafData(node, end, size, here.atNode(i), db);
            if (!problem.empty())
                return problem;
        }
        return {};
    }

    std::string leafData(const unsigned char* node, size_t dataOffset, size_t pageSize,
                         const Where& here, const Db& db) {
        const uint16_t nodeFlags = load<uint16_t>(node + 4);
        const size_t dataSize = size_t(load<uint16_t>(node)) | size_t(load<uint16_t>(node + 2))
                                                                   << 16;
        const unsigned char* data = node + kNodeHeader + load<uint16_t>(node + 6);
        if (nodeFlags & ~(kBigData | kSubData | kDupData))
            return here.describe() + ": unknown node flags " + std::to_string(nodeFlags);
        if (nodeFlags & kBigData) {
            if (dataOffset + 8 > pageSize)
                return here.describe() + ": overflow page number runs past the page";
            return overflow(load<uint64_t>(data), dataSize, here);
        }
        if (dataOffset + dataSize > pageSize)
            return here.describe() + ": " + std::to_string(dataSize) +
                   " bytes of data run past the page";
        if (nodeFlags & kSubData) {
            if (dataSize != kDbSize)
                return here.describe() + ": a sub-database record of " + std::to_string(dataSize) +
                       " bytes";
            const Db sub = loadDb(data);
            if (nodeFlags & kDupData)
                return subTree(sub, here, db);
            // A named database in the main one: walk it as a tree of its own.
            const std::string_view name(reinterpret_cast<const char*>(node + kNodeHeader),
                                        load<uint16_t>(node + 6));
            return walk(sub, "database '" + std::string(name) + "'");
        }
        if (nodeFlags & kDupData) {
            // A sub-page of duplicates, inline in the node.
            if (dataSize < kPageHeader)
                return here.describe() + ": duplicate sub-page of " + std::to_string(dataSize) +
                       " bytes";
            const uint16_t subFlags = load<uint16_t>(data + 10);
            if (!(subFlags & kLeaf) || !(subFlags & kSubPage))
                return here.describe() + ": duplicate sub-page with flags " +
                       std::to_string(subFlags);
            Where inside;
            inside.outer = &here;
            return nodes(data, dataSize, subFlags, inside, db);
        }
        return {};
    }

    std::string subTree(const Db& sub, const Where& here, const Db& parent) {
        if (sub.root == ~uint64_t(0) || sub.depth == 0 || sub.depth > kMaxDepth)
            return here.describe() + ": duplicate tree with depth " + std::to_string(sub.depth);
        Db unordered = parent;
        unordered.flags |= 0x08; // duplicate values are not compared by key order here
        Where inside;
        inside.outer = &here;
        return page(sub.root, sub.depth, unordered, inside);
    }

    std::string overflow(uint64_t pgno, size_t dataSize, const Where& here) {
        if (pgno < 2 || pgno > lastPage_)
            return here.describe() + ": overflow page " + std::to_string(pgno) + " out of range";
        const unsigned char* p = pageAt(pgno);
        if (load<uint64_t>(p) != pgno || !(load<uint16_t>(p + 10) & kOverflow))
            return here.describe() + ": page " + std::to_string(pgno) + " is not an overflow page";
        const uint64_t pages = load<uint32_t>(p + 12);
        if (pages == 0 || pgno + pages - 1 > lastPage_ ||
            pages * pageSize_ < dataSize + kPageHeader)
            return here.describe() + ": overflow run of " + std::to_string(pages) +
                   " pages at page " + std::to_string(pgno) + " does not hold " +
                   std::to_string(dataSize) + " bytes";
        return {};
    }

    const unsigned char* map_;
    uint32_t pageSize_;
    uint64_t lastPage_;
};

} // namespace

std::string checkDataFileHeader(const std::filesystem::path& dataFile) {
    const int fd = ::open(dataFile.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? std::string() : std::string(std::strerror(errno));
    struct stat st {};
    std::string problem;
    unsigned char page[kPageHeader + kMetaSize];
    if (fstat(fd, &st) != 0) {
        problem = std::strerror(errno);
    } else if (st.st_size == 0) {
        problem = "data.mdb is empty";
    } else {
        uint64_t newestLastPage = 0, pageSize = 0;
        for (int i = 0; i < 2 && problem.empty(); ++i) {
            const off_t offset = off_t(i * pageSize);
            if (pread(fd, page, sizeof page, offset) != ssize_t(sizeof page)) {
                problem = "data.mdb is too short for its meta pages (" +
                          std::to_string(st.st_size) + " bytes)";
                break;
            }
            const Meta meta = loadMeta(page);
            problem = metaProblem(page, meta, i);
            if (!problem.empty())
                break;
            if (i == 0)
                pageSize = meta.pageSize;
            else if (meta.pageSize != pageSize)
                problem = "the meta pages disagree on the page size";
            newestLastPage = std::max(newestLastPage, meta.lastPage);
        }
        // Pages up to the newest meta's last page are read through the map: the file must hold
        // them all, or the first read past its end raises SIGBUS.
        if (problem.empty() && uint64_t(st.st_size) < (newestLastPage + 1) * pageSize)
            problem = "data.mdb is " + std::to_string(st.st_size) + " bytes, shorter than the " +
                      std::to_string((newestLastPage + 1) * pageSize) +
                      " bytes its meta pages say are in use: truncated";
    }
    ::close(fd);
    return problem;
}

std::string checkSnapshotTrees(const lmdb::Env& env, const lmdb::Txn& txn) {
    MDB_stat envStat;
    lmdb::check(mdb_env_stat(env.get(), &envStat), "mdb_env_stat");
    const uint32_t pageSize = envStat.ms_psize;
    int fd = -1;
    lmdb::check(mdb_env_get_fd(env.get(), &fd), "mdb_env_get_fd");
    struct stat st {};
    if (fstat(fd, &st) != 0)
        return std::strerror(errno);
    const uint64_t filePages = uint64_t(st.st_size) / pageSize;
    if (filePages < 2)
        return "data.mdb holds " + std::to_string(filePages) + " pages";
    // A map of our own: LMDB does not tell where its map is (mdb_env_info's me_mapaddr is only
    // set for MDB_FIXEDMAP). Both share the page cache; the read transaction keeps a writer
    // from reusing the pages of its snapshot while they are walked.
    const size_t mapBytes = size_t(filePages) * pageSize;
    void* mapped = mmap(nullptr, mapBytes, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED)
        return std::string("cannot map data.mdb: ") + std::strerror(errno);
    const auto* map = static_cast<const unsigned char*>(mapped);
    // The snapshot's meta is the one that committed the transaction it reads.
    const uint64_t txnId = mdb_txn_id(txn.get());
    const Meta metas[2] = {loadMeta(map), loadMeta(map + pageSize)};
    const Meta* meta = metas[0].txnId == txnId   ? &metas[0]
                       : metas[1].txnId == txnId ? &metas[1]
                                                 : nullptr;
    std::string problem;
    if (!meta) {
        problem = "no meta page holds the transaction " + std::to_string(txnId) + " being read";
    } else if (meta->lastPage >= filePages) {
        problem = "data.mdb holds " + std::to_string(filePages) + " pages, its meta page says " +
                  std::to_string(meta->lastPage + 1) + " are in use: truncated";
    } else {
        TreeWalker walker(map, pageSize, meta->lastPage);
        Db freeList = meta->free;
        freeList.flags = 0x08; // INTEGERKEY in memory; on disk the field holds the env's flags
        problem = walker.walk(freeList, "free-page list");
        if (problem.empty())
            problem = walker.walk(meta->main, "main database");
    }
    munmap(mapped, mapBytes);
    return problem;
}

namespace {

/// The stamp's text for data.mdb as it is now, "" if it cannot be read.
std::string stampOf(const std::filesystem::path& directory, size_t txnId) {
    struct stat st;
    if (::stat((directory / "data.mdb").c_str(), &st) != 0)
        return {};
    return std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
           std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec) + " " +
           std::to_string(txnId) + "\n";
}

} // namespace

bool verifiedStampMatches(const std::filesystem::path& directory, size_t txnId) {
    const std::string expected = stampOf(directory, txnId);
    const int fd = ::open((directory / "verified").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || expected.empty()) {
        if (fd >= 0)
            ::close(fd);
        return false;
    }
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    return n > 0 && std::string_view(buf, size_t(n)) == expected;
}

void writeVerifiedStamp(const std::filesystem::path& directory, size_t txnId) {
    const std::string stamp = stampOf(directory, txnId);
    if (stamp.empty())
        return;
    // Written whole under another name and renamed, so a reader never sees half a stamp.
    const std::filesystem::path temporary = directory / ("verified." + std::to_string(::getpid()));
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    const bool written = ::write(fd, stamp.data(), stamp.size()) == ssize_t(stamp.size());
    ::close(fd);
    if (!written || ::rename(temporary.c_str(), (directory / "verified").c_str()) != 0)
        ::unlink(temporary.c_str());
}

} // namespace symdex
