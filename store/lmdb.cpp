#include "store/lmdb.h"

#include <utility>

namespace symdex::lmdb {

void check(int rc, std::string_view what) {
    if (rc == MDB_SUCCESS)
        return;
    throw StoreError(std::string(what) + ": " + mdb_strerror(rc), rc);
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
    int rc = mdb_env_open(env.env_, directory.c_str(), flags, 0644);
    if (rc != MDB_SUCCESS)
        throw StoreError("cannot open store '" + directory.string() + "': " + mdb_strerror(rc), rc);
    return env;
}

size_t Env::mapSize() const {
    MDB_envinfo info;
    check(mdb_env_info(env_, &info), "mdb_env_info");
    return info.me_mapsize;
}

void Env::setMapSize(size_t bytes) const {
    check(mdb_env_set_mapsize(env_, bytes), "mdb_env_set_mapsize");
}

void Env::sync(bool force) {
    check(mdb_env_sync(env_, force ? 1 : 0), "mdb_env_sync");
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
          readOnly ? "begin read transaction" : "begin write transaction");
    return txn;
}

void Txn::commit() {
    MDB_txn* txn = std::exchange(txn_, nullptr);
    check(mdb_txn_commit(txn), "commit");
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
    check(rc, "mdb_get");
    return fromVal(v);
}

bool Txn::put(MDB_dbi dbi, std::string_view key, std::string_view value, unsigned flags) {
    MDB_val k = toVal(key), v = toVal(value);
    int rc = mdb_put(txn_, dbi, &k, &v, flags);
    if (rc == MDB_KEYEXIST)
        return false;
    check(rc, "mdb_put");
    return true;
}

bool Txn::del(MDB_dbi dbi, std::string_view key, std::optional<std::string_view> value) {
    MDB_val k = toVal(key), v;
    if (value)
        v = toVal(*value);
    int rc = mdb_del(txn_, dbi, &k, value ? &v : nullptr);
    if (rc == MDB_NOTFOUND)
        return false;
    check(rc, "mdb_del");
    return true;
}

MDB_dbi Txn::openDb(const char* name, unsigned flags) {
    MDB_dbi dbi;
    check(mdb_dbi_open(txn_, name, flags, &dbi), std::string("open database ") + name);
    return dbi;
}

size_t Txn::entries(MDB_dbi dbi) const {
    MDB_stat st;
    check(mdb_stat(txn_, dbi, &st), "mdb_stat");
    return st.ms_entries;
}

Cursor::Cursor(const Txn& txn, MDB_dbi dbi) {
    check(mdb_cursor_open(txn.get(), dbi, &cursor_), "mdb_cursor_open");
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
    check(rc, "mdb_cursor_get");
    key = fromVal(k);
    value = fromVal(v);
    return true;
}

bool Cursor::seek(MDB_cursor_op op, std::string_view& key, std::string_view& value) {
    MDB_val k = toVal(key), v = toVal(value);
    int rc = mdb_cursor_get(cursor_, &k, &v, op);
    if (rc == MDB_NOTFOUND)
        return false;
    check(rc, "mdb_cursor_get");
    key = fromVal(k);
    value = fromVal(v);
    return true;
}

void Cursor::del(unsigned flags) {
    check(mdb_cursor_del(cursor_, flags), "mdb_cursor_del");
}

} // namespace symdex::lmdb
