// SymbolStore::compact(): data.mdb rewritten without free pages and with full pages.
//
// Why it is needed: LMDB copies every page a transaction changes and frees the old one, to be
// reused once no reader can see it; the file never shrinks. A cold index commits hundreds of
// batches, each touching pages all over the index tables (their keys are hashes and names, in no
// order the files come in), so the file ends at the high-water mark of live pages plus those the
// last commits freed — a third of LevelDB's store — and pages split at random inserts are about
// two-thirds full. A copy loaded table by table in key order with MDB_APPEND fills each page
// before it starts the next (mdb_page_split's append case) and has nothing to free.
//
// The swap: the copy is written beside the store (compact.tmp/) while the store is open as usual,
// then, under the open lock held exclusively, renamed over data.mdb, and lock.mdb is removed. A
// process that opened the store before keeps both old files mapped (unlinked, not changed) and
// reads them consistently to its end; one that opens after creates a new lock.mdb for the new
// file. Nobody writes the old file meanwhile: this process holds the writer lock throughout.
#include "store/store_check.h"
#include "store/store_impl.h"
#include "store/symbol_blocks.h"
#include "store/zstd_frame.h"

#include <chrono>
#include <functional>
#include <optional>
#include <sys/file.h>

namespace symdex {

namespace {

/// Pages of the free list (LMDB's database 0): each entry is a list of page numbers, its first
/// word the count.
uint64_t freePages(const lmdb::Txn& txn) {
    uint64_t pages = 0;
    lmdb::Cursor cursor(txn, 0);
    std::string_view key, value;
    for (bool more = cursor.get(MDB_FIRST, key, value); more;
         more = cursor.get(MDB_NEXT, key, value))
        if (value.size() >= sizeof(size_t))
            pages += *reinterpret_cast<const size_t*>(value.data());
    return pages;
}

/// Copies table `name` of `from` into the copy's open transaction `txn`, in key order, MDB_APPEND
/// (and MDB_APPENDDUP for the further values of a key). `pending` counts the entries `txn` holds
/// across tables: at 65,536 it commits and begins anew, so that no transaction holds more dirty
/// pages than LMDB keeps in memory. Every commit frees the pages of the table records and free
/// list it replaced, which stay in the file; a store of fewer entries (LevelDB's: 4 free pages
/// and a page of free list when each table had its own transaction) is copied in one.
/// `recode`, if given, may replace a value (returning the new bytes) or leave it (nullopt).
void copyTable(const lmdb::Txn& from, MDB_dbi source, const char* name, const lmdb::Env& to,
               lmdb::Txn& txn, size_t& pending,
               const std::function<std::optional<std::string>(std::string_view)>& recode = {}) {
    unsigned flags = 0;
    if (mdb_dbi_flags(from.get(), source, &flags) != MDB_SUCCESS)
        throw StoreError(std::string("compaction: cannot read the flags of table ") + name);
    // A handle opened in a transaction that commits stays valid in the ones after it.
    const MDB_dbi target = txn.openDb(name, MDB_CREATE | (flags & (MDB_DUPSORT | MDB_DUPFIXED)));
    lmdb::Cursor cursor(from, source);
    std::string_view key, value;
    std::string previous;
    bool first = true;
    for (bool more = cursor.get(MDB_FIRST, key, value); more;
         more = cursor.get(MDB_NEXT, key, value)) {
        const bool sameKey = !first && key == previous;
        std::optional<std::string> recoded = recode ? recode(value) : std::nullopt;
        if (!txn.put(target, key, recoded ? std::string_view(*recoded) : value,
                     sameKey ? MDB_APPENDDUP : MDB_APPEND))
            throw StoreError(std::string("compaction: table ") + name + " is not in key order");
        if (!sameKey)
            previous.assign(key);
        first = false;
        if (++pending == 65536) {
            txn.commit();
            txn = lmdb::Txn::begin(to, /*readOnly=*/false);
            pending = 0;
        }
    }
}

uint64_t fileSize(const std::filesystem::path& file) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(file, ec);
    return ec ? 0 : size;
}

} // namespace

CompactStats SymbolStore::compact(double minFreeShare) {
    Impl& s = *impl_;
    if (s.options.readOnly)
        throw StoreError("the store is open read-only");
    flush();
    const auto start = std::chrono::steady_clock::now();
    const std::filesystem::path& dir = s.options.directory;
    CompactStats stats;
    stats.bytesBefore = stats.bytesAfter = fileSize(dir / "data.mdb");
    {
        lmdb::Txn txn = s.beginTxn(/*readOnly=*/true);
        MDB_envinfo info;
        if (mdb_env_info(s.env.get(), &info) != MDB_SUCCESS)
            return stats;
        stats.filePages = info.me_last_pgno + 1;
        stats.freePages = freePages(txn);
    }
    if (stats.filePages == 0 || double(stats.freePages) < minFreeShare * double(stats.filePages))
        return stats;

    s.stopWriter();
    const std::filesystem::path tmp = dir / "compact.tmp";
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
    std::filesystem::create_directories(tmp, ec);
    if (ec)
        throw StoreError("cannot create '" + tmp.string() + "': " + ec.message());
    size_t txnId = 0;
    {
        lmdb::Env copy = lmdb::Env::open(tmp, s.env.mapSize(), std::size(Impl::kTables), 1,
                                         MDB_NOTLS | MDB_NOSYNC | MDB_NOLOCK);
        lmdb::Txn from = s.beginTxn(/*readOnly=*/true);
        lmdb::Txn txn = lmdb::Txn::begin(copy, /*readOnly=*/false);
        size_t pending = 0;
        // Blocks of declarations written before the store trained its own dictionary (its first
        // 2 MiB of them) are compressed against the built-in one; the copy compresses them
        // against the store's, where that is smaller. The 30k-name scale tree: 2,464 of its
        // 4,395 blocks, 958,910 bytes.
        std::function<std::optional<std::string>(std::string_view)> recompress;
        if (const std::shared_ptr<const ZstdDictionary> own = s.encodingDictionary())
            recompress = [&, own](std::string_view block) -> std::optional<std::string> {
                if (symbolBlockDictionaryId(block) != ZstdDictionary::builtInSymbols().id())
                    return std::nullopt;
                std::optional<std::string> recoded = recompressSymbolBlock(block, *own);
                if (!recoded || recoded->size() >= block.size())
                    return std::nullopt;
                ++stats.recompressedBlocks;
                return recoded;
            };
        for (const Impl::Table& table : Impl::kTables)
            copyTable(from, s.*table.dbi, table.name, copy, txn, pending,
                      table.dbi == &Impl::symbols ? recompress : nullptr);
        txn.commit();
        copy.sync(true);
        MDB_envinfo info;
        if (mdb_env_info(copy.get(), &info) == MDB_SUCCESS)
            txnId = info.me_last_txnid;
    }
    s.env = lmdb::Env(); // this process's map of the old file goes; nothing of it is alive
    {
        OpenLock exclusive(dir, LOCK_EX);
        std::filesystem::rename(tmp / "data.mdb", dir / "data.mdb", ec);
        if (ec)
            throw StoreError("cannot replace '" + (dir / "data.mdb").string() +
                             "': " + ec.message());
        std::filesystem::remove(dir / "lock.mdb", ec);
        writeVerifiedStamp(dir, txnId); // written here, so the next open need not walk it
    }
    std::filesystem::remove_all(tmp, ec);
    {
        OpenLock shared(dir, LOCK_SH);
        s.openEnvironment();
    }
    {
        std::lock_guard lock(s.queueMu);
        s.stopping = false;
    }
    s.startWriter();
    stats.compacted = true;
    stats.bytesAfter = fileSize(dir / "data.mdb");
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return stats;
}

} // namespace symdex
