// Move-only RAII owners for LMDB's C handles, and the one place where LMDB error codes become
// C++ errors (StoreError). Threading rules are LMDB's own (lmdb.h):
// - one write transaction at a time per environment; a write txn must stay on its thread;
// - the environment is opened with MDB_NOTLS, so a thread may hold several read transactions and a
//   read transaction may end on another thread;
// - values returned by get/cursor are only valid until their transaction ends: copy them out.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace symdex {

/// Any failure of the store: LMDB errors, corrupt records, format mismatches.
class StoreError : public std::runtime_error {
public:
    enum class Kind : uint8_t {
        Failure,      ///< anything not below
        Damaged,      ///< the store's file is damaged; the message says how to rebuild it
        WrongVersion, ///< written by another format version; the message says how to rebuild it
        NoSpace,      ///< the file system holding the store is full
    };
    StoreError(std::string message, int lmdbCode = 0, Kind kind = Kind::Failure)
        : std::runtime_error(std::move(message)), lmdbCode_(lmdbCode), kind_(kind) {}
    /// The LMDB return code behind the error, 0 if it did not come from LMDB.
    int lmdbCode() const { return lmdbCode_; }
    Kind kind() const { return kind_; }

private:
    int lmdbCode_;
    Kind kind_;
};

/// "the store 'DIR' is damaged (DETAIL); rebuild it with: symdex index --rebuild --store 'DIR'"
StoreError damagedStore(const std::filesystem::path& directory, const std::string& detail);
/// The command that rebuilds the store in `directory` from scratch.
std::string rebuildCommand(const std::filesystem::path& directory);

namespace lmdb {

/// Throws StoreError with `what` and LMDB's message when rc is not MDB_SUCCESS. With the
/// environment at hand, the error names the store and has a kind: MDB_CORRUPTED,
/// MDB_PAGE_NOTFOUND, MDB_INVALID and MDB_VERSION_MISMATCH are Damaged; ENOSPC is NoSpace, and so
/// is EIO while the store's file system is (nearly) full: LMDB reports a short write as EIO
/// (mdb.c, mdb_page_flush: "short write, filesystem full?").
void check(int rc, std::string_view what, MDB_env* env = nullptr);

inline MDB_val toVal(std::string_view bytes) {
    return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};
}
inline std::string_view fromVal(const MDB_val& v) {
    return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

class Env {
public:
    Env() = default;
    Env(Env&& other) noexcept : env_(std::exchange(other.env_, nullptr)) {}
    Env& operator=(Env&& other) noexcept;
    Env(const Env&) = delete;
    Env& operator=(const Env&) = delete;
    ~Env();

    /// Opens (creating if needed) an environment in `directory` with room for `maxDbs` named
    /// databases and `maxReaders` concurrent read transactions. LMDB's assertions (which fail on
    /// some damage the open-time checks miss, then abort the process) first print which store is
    /// damaged and how to rebuild it.
    static Env open(const std::filesystem::path& directory, size_t mapSize, unsigned maxDbs,
                    unsigned maxReaders, unsigned flags);

    /// Current map size in bytes.
    size_t mapSize() const;
    /// Requires that no transaction of this process is active (lmdb.h, mdb_env_set_mapsize).
    /// Const like a handle: it changes the environment, not this wrapper.
    void setMapSize(size_t bytes) const;
    void sync(bool force);
    MDB_env* get() const { return env_; }

private:
    MDB_env* env_ = nullptr;
};

class Txn {
public:
    Txn() = default;
    Txn(Txn&& other) noexcept : txn_(std::exchange(other.txn_, nullptr)) {}
    Txn& operator=(Txn&& other) noexcept;
    Txn(const Txn&) = delete;
    Txn& operator=(const Txn&) = delete;
    /// Aborts if neither committed nor aborted.
    ~Txn() { abort(); }

    /// Throws StoreError with lmdbCode() MDB_MAP_RESIZED when another process grew the map: the
    /// caller adopts the new size (Env::setMapSize(0)) once no transaction of this process is
    /// active, and begins again.
    static Txn begin(const Env& env, bool readOnly);
    void commit();
    void abort() noexcept;
    MDB_txn* get() const { return txn_; }

    /// The value stored under `key`, or nullopt. The view is valid until the txn ends.
    std::optional<std::string_view> get(MDB_dbi dbi, std::string_view key) const;
    /// Stores `value` under `key` (flags as mdb_put). Returns false on MDB_KEYEXIST.
    bool put(MDB_dbi dbi, std::string_view key, std::string_view value, unsigned flags = 0);
    /// Deletes `key` (and with a non-empty `value` on a MDB_DUPSORT database, only that pair).
    /// Returns false if there was nothing to delete.
    bool del(MDB_dbi dbi, std::string_view key, std::optional<std::string_view> value = {});
    MDB_dbi openDb(const char* name, unsigned flags);
    /// Number of entries in a database.
    size_t entries(MDB_dbi dbi) const;

private:
    MDB_txn* txn_ = nullptr;
};

class Cursor {
public:
    Cursor(const Txn& txn, MDB_dbi dbi);
    Cursor(Cursor&& other) noexcept : cursor_(std::exchange(other.cursor_, nullptr)) {}
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    ~Cursor();

    /// Positions the cursor with `op`; returns false on MDB_NOTFOUND. On success `key` and `value`
    /// hold views valid until the transaction ends (or the next write through this cursor).
    bool get(MDB_cursor_op op, std::string_view& key, std::string_view& value);
    /// As get(), with `key` (and for GET_BOTH ops `value`) as input.
    bool seek(MDB_cursor_op op, std::string_view& key, std::string_view& value);
    /// Deletes the entry under the cursor (flags as mdb_cursor_del).
    void del(unsigned flags = 0);
    MDB_cursor* get() const { return cursor_; }

private:
    MDB_cursor* cursor_ = nullptr;
};

} // namespace lmdb
} // namespace symdex
