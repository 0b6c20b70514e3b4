// Damage checks of an LMDB data file, so that a damaged store ends in a StoreError instead of a
// crash. LMDB trusts its file: a file shorter than its last used page makes the map raise SIGBUS,
// and a scribbled page header or node offset makes LMDB read or write out of bounds (SIGSEGV) or
// fail one of its assertions (abort). Both checks below only read, and report the first damage
// found as a sentence ("" when none):
// - checkDataFileHeader reads the two meta pages with pread, before LMDB opens the file: size,
//   magic, version, page size, and that the file holds every page the metas say is used.
// - checkSnapshotTrees walks every B-tree page a read transaction can reach (free-page list, main
//   database, the named databases and their duplicate trees), through LMDB's map: page numbers,
//   types, bounds of every node and overflow run, and the order of the keys.
// The layout they read is LMDB 0.9's on-disk format (mdb.c: MDB_meta, MDB_page, MDB_node,
// MDB_db), which MDB_DATA_VERSION 1 fixes.
#pragma once

#include "store/lmdb.h"

#include <filesystem>
#include <string>

namespace symdex {

/// The first damage found in the meta pages of `dataFile` (data.mdb), or "". A missing file is
/// not damage (the store is new); an empty one is.
std::string checkDataFileHeader(const std::filesystem::path& dataFile);

/// The first damage found in the trees that `txn` (a read transaction of `env`) sees, or "".
/// Reads every reachable page once: O(store size), about 1 ms per MB on a warm page cache
/// (measured: 0.45 s for a 456 MB store, 1.1 ms for 1.5 MB).
std::string checkSnapshotTrees(const lmdb::Env& env, const lmdb::Txn& txn);

/// The walk above costs O(store size) at every open: 0.2 s at 2M names, more than a query. So
/// after a walk finds the trees whole, and after each of symdex's own commits, the store keeps
/// a stamp (`verified` beside data.mdb): data.mdb's inode, size, mtime and ctime, and the
/// transaction id then. An open that finds the same transaction in a file with the same stat
/// skips the walk; anything else that wrote the file (a scribble, a truncation, a copy) moved its
/// mtime or ctime, as git trusts its index. Writing the stamp may fail (a read-only store): then
/// every open walks, as before.
bool verifiedStampMatches(const std::filesystem::path& directory, size_t txnId);
void writeVerifiedStamp(const std::filesystem::path& directory, size_t txnId);

} // namespace symdex
