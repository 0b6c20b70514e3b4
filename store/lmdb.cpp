#include "store/lmdb.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utility>

namespace symdex {

std::string rebuildCommand(const std::filesystem::path& directory) {
    return "symdex index --rebuild --store '" + directory.string() + "'";
}

StoreError damagedStore(const std::filesystem::path& directory, const std::string& detail) {
    return StoreError("the store '" + directory.string() + "' is damaged (" + detail +
                          "); rebuild it with: " + rebuildCommand(directory),
                      0, StoreError::Kind::Damaged);
}

namespace lmdb {

namespace {

std::filesystem::path envPath(MDB_env* env) {
    const char* path = nullptr;
    if (env && mdb_env_get_path(env, &path) == MDB_SUCCESS && path)
        return path;
    return {};
}

/// Whether the file system holding `directory` has so little room left that a write of one
/// commit could not complete (a commit writes at most a few MiB per call).
bool nearlyFull(const std::filesystem::path& directory) {
    struct statvfs fs {};
    if (statvfs(directory.c_str(), &fs) != 0)
        return false;
    const uint64_t free = uint64_t(geteuid() == 0 ? fs.f_bfree : fs.f_bavail) * fs.f_frsize;
    return free < (uint64_t(64) << 20);
}

/// Prints which store is damaged before LMDB aborts the process (its assertions cannot be
/// recovered from: mdb_assert_fail calls abort() when this returns).
void onAssertion(MDB_env* env, const char* message) {
    const std::filesystem::path dir = envPath(env);
    std::fprintf(stderr, "symdex: the store '%s' is damaged (LMDB: %s); rebuild it with: %s\n",
                 dir.c_str(), message, rebuildCommand(dir).c_str());
}

} // namespace

void check(int rc, std::string_view what, MDB_env* env) {
    if (rc == MDB_SUCCESS)
        return;
    const std::filesystem::path dir = envPath(env);
    if (dir.empty())
        throw StoreError(std::string(what) + ": " + mdb_strerror(rc), rc);
    switch (rc) {
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH: {
        StoreError damaged = damagedStore(dir, std::string(what) + ": " + mdb_strerror(rc));
        throw StoreError(damaged.what(), rc, StoreError::Kind::Damaged);
    }
    case ENOSPC:
    case EIO:
        if (rc == ENOSPC || nearlyFull(dir))
            throw StoreError(std::string(what) + " to the store '" + dir.string() +
                                 "': " + std::strerror(ENOSPC),
                             ENOSPC, StoreError::Kind::NoSpace);
        break;
    }
    throw StoreError(std::string(what) + " (store '" + dir.string() + "'): " + mdb_strerror(rc),
                     rc);
}

Env& Env::operator=(Env&& other) noexcept {
    if (this != &other) {
        if (env_)
            mdb_env_close(env_);
        env_ = std::exchange(other.env_, nullptr);
    }
    return *this;
}

Env::~Env() {
    if (env_)
        mdb_env_close(env_);
}

Env Env::open(const std::filesystem::path& directory, size_t mapSize, unsigned maxDbs,
              unsigned maxReaders, unsigned flags) {
    Env env;
    check(mdb_env_create(&env.env_), "mdb_env_create");
    check(mdb_env_set_maxdbs(env.env_, maxDbs), "mdb_env_set_maxdbs");
    check(mdb_env_set_maxreaders(env.env_, maxReaders), "mdb_env_set_maxreaders");
    check(mdb_env_set_mapsize(env.env_, mapSize), "mdb_env_set_mapsize");
    check(mdb_env_set_assert(env.env_, onAssertion), "mdb_env_set_assert");
    int rc = mdb_env_open(env.env_, directory.c_str(), flags, 0644);
    if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == MDB_CORRUPTED) {
        StoreError damaged = damagedStore(directory, std::string("LMDB: ") + mdb_strerror(rc));
        throw StoreError(damaged.what(), rc, StoreError::Kind::Damaged);
    }
    if (rc != MDB_SUCCESS)
        throw StoreError("cannot open store '" + directory.string() + "': " + mdb_strerror(rc), rc);
    return env;
}

size_t Env::mapSize() const {
    MDB_envinfo info;
    check(mdb_env_info(env_, &info), "mdb_env_info", env_);
    return info.me_mapsize;
}

void Env::setMapSize(size_t bytes) const {
    check(mdb_env_set_mapsize(env_, bytes), "mdb_env_set_mapsize", env_);
}

void Env::sync(bool force) {
    check(mdb_env_sync(env_, force ? 1 : 0), "sync", env_);
}

Txn& Txn::operator=(Txn&& other) noexcept {
    if (this != &other) {
        abort();
        txn_ = std::exchange(other.txn_, nullptr);
    }
    return *this;
}

Txn Txn::begin(const Env& env, bool readOnly) {
    Txn txn;
    check(mdb_txn_begin(env.get(), nullptr, readOnly ? MDB_RDONLY : 0, &txn.txn_),
          readOnly ? "begin read transaction" : "begin write transaction", env.get());
    return txn;
}

void Txn::commit() {
    MDB_txn* txn = std::exchange(txn_, nullptr);
    MDB_env* env = mdb_txn_env(txn);
    check(mdb_txn_commit(txn), "commit", env);
}

void Txn::abort() noexcept {
    if (txn_)
        mdb_txn_abort(std::exchange(txn_, nullptr));
}

std::optional<std::string_view> Txn::get(MDB_dbi dbi, std::string_view key) const {
    MDB_val k = toVal(key), v;
    int rc = mdb_get(txn_, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return std::nullopt;
    check(rc, "mdb_get", mdb_txn_env(txn_));
    return fromVal(v);
}

bool Txn::put(MDB_dbi dbi, std::string_view key, std::string_view value, unsigned flags) {
    MDB_val k = toVal(key), v = toVal(value);
    int rc = mdb_put(txn_, dbi, &k, &v, flags);
    if (rc == MDB_KEYEXIST)
        return false;
    check(rc, "mdb_put", mdb_txn_env(txn_));
    return true;
}

bool Txn::del(MDB_dbi dbi, std::string_view key, std::optional<std::string_view> value) {
    MDB_val k = toVal(key), v;
    if (value)
        v = toVal(*value);
    int rc = mdb_del(txn_, dbi, &k, value ? &v : nullptr);
    if (rc == MDB_NOTFOUND)
        return false;
    check(rc, "mdb_del", mdb_txn_env(txn_));
    return true;
}

MDB_dbi Txn::openDb(const char* name, unsigned flags) {
    MDB_dbi dbi;
    check(mdb_dbi_open(txn_, name, flags, &dbi), std::string("open database ") + name,
          mdb_txn_env(txn_));
    return dbi;
}

size_t Txn::entries(MDB_dbi dbi) const {
    MDB_stat st;
    check(mdb_stat(txn_, dbi, &st), "mdb_stat", mdb_txn_env(txn_));
    return st.ms_entries;
}

Cursor::Cursor(const Txn& txn, MDB_dbi dbi) {
    check(mdb_cursor_open(txn.get(), dbi, &cursor_), "mdb_cursor_open", mdb_txn_env(txn.get()));
}

Cursor::~Cursor() {
    if (cursor_)
        mdb_cursor_close(cursor_);
}

bool Cursor::get(MDB_cursor_op op, std::string_view& key, std::string_view& value) {
    MDB_val k{}, v{};
    int rc = mdb_cursor_get(cursor_, &k, &v, op);
    if (rc == MDB_NOTFOUND)
        return false;
    check(rc, "mdb_cursor_get", mdb_txn_env(mdb_cursor_txn(cursor_)));
    key = fromVal(k);
    value = fromVal(v);
    return true;
}

bool Cursor::seek(MDB_cursor_op op, std::string_view& key, std::string_view& value) {
    MDB_val k = toVal(key), v = toVal(value);
    int rc = mdb_cursor_get(cursor_, &k, &v, op);
    if (rc == MDB_NOTFOUND)
        return false;
    check(rc, "mdb_cursor_get", mdb_txn_env(mdb_cursor_txn(cursor_)));
    key = fromVal(k);
    value = fromVal(v);
    return true;
}

void Cursor::del(unsigned flags) {
    check(mdb_cursor_del(cursor_, flags), "mdb_cursor_del", mdb_txn_env(mdb_cursor_txn(cursor_)));
}

} // namespace lmdb
} // namespace symdex
