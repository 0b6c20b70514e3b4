// Damaged and read-only stores, as a user meets them: the real `symdex` binary run on a store that
// was truncated, scribbled on, emptied, or that it may not write. Every command must end in one
// message naming the store and the rebuild command, with exit code 2: never a signal.
#include "bench/child_process.h"
#include "store/encoding.h"
#include "store/lmdb.h"
#include "store/store_check.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace symdex;
using symdex::test::TempDir;

namespace {

const std::vector<std::string> kSources = {"src/circle.cpp", "src/util.cpp", "src/main.cpp"};
const std::vector<std::string> kFlags = {"-std=c++17", "-Iinclude"};

struct Run {
    int status = 0; ///< as waitpid reports it
    std::string out;
    std::string err;
    bool exitedWith(int code) const { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
};

Run runSymdex(const TempDir& dir, std::vector<std::string> args) {
    args.insert(args.begin(), SYMDEX_BINARY);
    bench::ChildProcess::Options options;
    options.workingDirectory = dir.path();
    options.stderrPath = dir.path() / "stderr.txt";
    std::filesystem::remove(options.stderrPath);
    Run run;
    run.status = bench::runToCompletion(args, options, &run.out).status;
    run.err = test::readFile(options.stderrPath);
    return run;
}

/// A store of 60 files with 200 symbols and 100 references each (about 8 MB), written in one
/// batch so that its page layout is the same on every run.
void writeStore(const std::filesystem::path& directory, const std::string& prefix = "f") {
    StoreOptions options;
    options.directory = directory;
    options.batchMaxFiles = 100000;
    options.batchMaxDelay = std::chrono::hours(1);
    auto store = SymbolStore::open(options);
    for (int f = 0; f < 60; ++f) {
        IndexedTu tu;
        tu.mainFile = "/p/" + prefix + std::to_string(f) + ".cc";
        tu.record.commandHash = 1;
        IndexedFile file;
        file.file.path = tu.mainFile;
        file.file.contentHash = uint64_t(f + 1);
        for (uint32_t s = 0; s < 200; ++s) {
            Symbol symbol;
            symbol.name = prefix + std::to_string(f) + "_" + std::to_string(s);
            symbol.qualifiedName = "ns::" + symbol.name;
            symbol.usr = "c:@N@ns@F@" + symbol.name;
            symbol.kind = SymbolKind::Function;
            symbol.flags = kDefinition;
            symbol.location = {s + 1, 5};
            symbol.extent = {{s + 1, 1}, {s + 1, 40}};
            file.symbols.push_back(symbol);
            if (s % 2 == 0)
                file.references.push_back({hash64(symbol.usr), {s + 1, 20}, kRoleCall});
        }
        tu.files.push_back(std::move(file));
        store->publish(std::move(tu));
    }
    store->flush();
}

void truncateToHalf(const std::filesystem::path& file) {
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
}

/// 40 writes of 16 random bytes at random offsets, from a fixed seed.
void scribble(const std::filesystem::path& file, unsigned seed) {
    const size_t size = std::filesystem::file_size(file);
    std::mt19937_64 random(seed);
    const int fd = ::open(file.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    for (int i = 0; i < 40; ++i) {
        unsigned char bytes[16];
        for (unsigned char& b : bytes)
            b = static_cast<unsigned char>(random());
        const off_t offset = off_t(random() % (size - sizeof bytes));
        REQUIRE(pwrite(fd, bytes, sizeof bytes, offset) == ssize_t(sizeof bytes));
    }
    ::close(fd);
}

const std::vector<std::vector<std::string>> kQueries = {
    {"find", "f1_1"},        {"def", "f2_3"}, {"refs", "f3_4"},
    {"symbols", "/p/f4.cc"}, {"stats"},       {"dump"},
};

/// Every query and `symdex index` on the damaged store in `dir`/store end in the message.
void expectDamagedMessage(const TempDir& dir) {
    const std::string store = (dir.path() / "store").string();
    std::vector<std::vector<std::string>> commands = kQueries;
    commands.push_back({"index", "-q", "-p", "."});
    for (std::vector<std::string> command : commands) {
        command.push_back("--store");
        command.push_back(store);
        const Run run = runSymdex(dir, command);
        INFO("symdex " << command.front() << ": status " << run.status << ", stderr: " << run.err);
        CHECK_FALSE(WIFSIGNALED(run.status));
        CHECK(run.exitedWith(2));
        CHECK_THAT(
            run.err,
            Catch::Contains("the store '" + store + "' is damaged") &&
                Catch::Contains("rebuild it with: symdex index --rebuild --store '" + store + "'"));
    }
}

/// A copy of the golden fixture with its compile database, and a store at `dir`/store.
struct Tree {
    TempDir dir;
    std::filesystem::path store = dir.path() / "store";
    Tree() {
        test::copyFixture("golden", dir.path());
        test::writeCompileDb(dir.path(), kSources, kFlags);
        writeStore(store);
    }
};

/// The directories beside `store` named store.broken-*.
std::vector<std::filesystem::path> setAside(const std::filesystem::path& store) {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(store.parent_path()))
        if (entry.path().filename().string().rfind(store.filename().string() + ".broken-", 0) == 0)
            found.push_back(entry.path());
    return found;
}

} // namespace

TEST_CASE("a store truncated to half is reported as damaged by every command", "[damage][e2e]") {
    Tree tree;
    truncateToHalf(tree.store / "data.mdb");
    expectDamagedMessage(tree.dir);
}

TEST_CASE("a store with 40 random 16-byte writes is reported as damaged by every command",
          "[damage][e2e]") {
    for (unsigned seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        Tree tree;
        scribble(tree.store / "data.mdb", seed);
        expectDamagedMessage(tree.dir);
    }
}

TEST_CASE("an empty data.mdb is reported as damaged by every command", "[damage][e2e]") {
    Tree tree;
    std::filesystem::resize_file(tree.store / "data.mdb", 0);
    expectDamagedMessage(tree.dir);
}

TEST_CASE("index --rebuild moves a damaged store aside and indexes from scratch",
          "[damage][e2e][rebuild]") {
    Tree tree;
    scribble(tree.store / "data.mdb", 1);
    const Run run = runSymdex(
        tree.dir, {"index", "-q", "--rebuild", "-p", ".", "--store", tree.store.string()});
    INFO(run.err);
    REQUIRE(run.exitedWith(0));
    const std::vector<std::filesystem::path> aside = setAside(tree.store);
    REQUIRE(aside.size() == 1);
    CHECK_THAT(run.err, Catch::Contains("is damaged") &&
                            Catch::Contains("moved it to '" + aside.front().string() + "'"));
    // The new store holds the fixture's symbols and none of the old store's.
    CHECK(runSymdex(tree.dir, {"def", "geo::Circle::area", "--store", tree.store.string()})
              .exitedWith(0));
    CHECK(runSymdex(tree.dir, {"find", "f1_1", "--store", tree.store.string()}).exitedWith(1));
    // The moved store is kept as it was: still damaged.
    CHECK(runSymdex(tree.dir, {"stats", "--store", aside.front().string()}).exitedWith(2));
}

TEST_CASE("index --rebuild moves a store of another format version aside",
          "[damage][e2e][rebuild]") {
    Tree tree;
    {
        auto env = lmdb::Env::open(tree.store, 64 << 20, 8, 16, 0);
        auto txn = lmdb::Txn::begin(env, false);
        MDB_dbi meta = txn.openDb("meta", 0);
        txn.put(meta, "format", std::string("\xff\xff\xff\xff", 4));
        txn.commit();
    }
    const Run refused = runSymdex(tree.dir, {"stats", "--store", tree.store.string()});
    CHECK(refused.exitedWith(2));
    CHECK_THAT(refused.err, Catch::Contains("symdex index --rebuild --store"));
    const Run run = runSymdex(
        tree.dir, {"index", "-q", "--rebuild", "-p", ".", "--store", tree.store.string()});
    INFO(run.err);
    REQUIRE(run.exitedWith(0));
    CHECK(setAside(tree.store).size() == 1);
    CHECK(runSymdex(tree.dir, {"def", "geo::Circle::area", "--store", tree.store.string()})
              .exitedWith(0));
}

TEST_CASE("index --rebuild on a healthy store starts from an empty store", "[e2e][rebuild]") {
    Tree tree;
    REQUIRE(runSymdex(tree.dir, {"find", "f1_1", "--store", tree.store.string()}).exitedWith(0));
    const Run run = runSymdex(
        tree.dir, {"index", "-q", "--rebuild", "-p", ".", "--store", tree.store.string()});
    INFO(run.err);
    REQUIRE(run.exitedWith(0));
    CHECK(setAside(tree.store).empty());
    CHECK(runSymdex(tree.dir, {"find", "f1_1", "--store", tree.store.string()}).exitedWith(1));
    CHECK(runSymdex(tree.dir, {"def", "geo::Circle::area", "--store", tree.store.string()})
              .exitedWith(0));
}

namespace {

/// Runs `args` as the user nobody when this process is root (root ignores file modes), so that a
/// store of mode 0555/0444 owned by root cannot be written. Empty when that is impossible.
std::vector<std::string> asUnprivileged(std::vector<std::string> args) {
    if (geteuid() != 0)
        return args;
    if (!std::filesystem::exists("/usr/bin/setpriv"))
        return {};
    args.insert(args.begin(),
                {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"});
    return args;
}

Run runCommand(const TempDir& dir, const std::vector<std::string>& argv) {
    bench::ChildProcess::Options options;
    options.workingDirectory = dir.path();
    options.stderrPath = dir.path() / "stderr.txt";
    std::filesystem::remove(options.stderrPath);
    Run run;
    run.status = bench::runToCompletion(argv, options, &run.out).status;
    run.err = test::readFile(options.stderrPath);
    return run;
}

/// Every query works on the store at `store`, and `symdex index` says it needs write access.
void expectQueriesOnly(const TempDir& dir, const std::filesystem::path& store, bool unprivileged) {
    std::vector<std::vector<std::string>> commands = kQueries;
    for (std::vector<std::string> command : commands) {
        command.insert(command.begin(), SYMDEX_BINARY);
        command.push_back("--store");
        command.push_back(store.string());
        const Run run = runCommand(dir, unprivileged ? asUnprivileged(command) : command);
        INFO("symdex " << command[1] << ": status " << run.status << ", stderr: " << run.err);
        CHECK(run.exitedWith(0));
        CHECK_FALSE(run.out.empty());
    }
    std::vector<std::string> index = {SYMDEX_BINARY, "index",   "-q",          "-p",
                                      ".",           "--store", store.string()};
    const Run run = runCommand(dir, unprivileged ? asUnprivileged(index) : index);
    INFO("symdex index: status " << run.status << ", stderr: " << run.err);
    CHECK(run.exitedWith(2));
    CHECK_THAT(run.err, Catch::Contains("the store '" + store.string() + "' is not writable") &&
                            Catch::Contains("indexing needs write access"));
}

} // namespace

// Two ways to take write access away, since the tests may run as root (which ignores modes):
// a store of mode 0555/0444 queried as the user nobody (setpriv), and a store on a tmpfs
// remounted read-only (EROFS, which stops root too). Each is skipped with a warning where the
// system does not allow it.
TEST_CASE("a store without write access can be queried, and index says it needs write access",
          "[readonly][e2e]") {
    Tree tree;
    SECTION("mode 0555/0444, queried by another user") {
        if (asUnprivileged({"x"}).empty()) {
            WARN("skipped: running as root without /usr/bin/setpriv");
            return;
        }
        std::filesystem::permissions(tree.dir.path(), std::filesystem::perms(0755));
        for (const auto& entry : std::filesystem::directory_iterator(tree.store))
            std::filesystem::permissions(entry.path(), std::filesystem::perms(0444));
        std::filesystem::permissions(tree.store, std::filesystem::perms(0555));
        expectQueriesOnly(tree.dir, tree.store, /*unprivileged=*/true);
        std::filesystem::permissions(tree.store, std::filesystem::perms(0755));
    }
    SECTION("on a read-only mount") {
        const std::filesystem::path mountPoint = tree.dir.path() / "ro";
        std::filesystem::create_directory(mountPoint);
        const std::string mount = "mount -t tmpfs -o size=64m tmpfs '" + mountPoint.string() + "'";
        if (std::system((mount + " 2>/dev/null").c_str()) != 0) {
            WARN("skipped: cannot mount a tmpfs here (" << mount << ")");
            return;
        }
        std::filesystem::copy(tree.store, mountPoint / "store");
        const bool remounted =
            std::system(("mount -o remount,ro '" + mountPoint.string() + "'").c_str()) == 0;
        if (remounted)
            expectQueriesOnly(tree.dir, mountPoint / "store", /*unprivileged=*/false);
        else
            WARN("skipped: cannot remount the tmpfs read-only");
        CHECK(std::system(("umount '" + mountPoint.string() + "'").c_str()) == 0);
    }
}

TEST_CASE("opens skip the walk of the trees only while data.mdb is as symdex left it", "[damage]") {
    Tree tree;
    std::ifstream in(tree.store / "verified");
    std::string inode, size, mtime, ctime;
    size_t txnId = 0;
    REQUIRE(in >> inode >> size >> mtime >> ctime >> txnId); // stamped by the writer's commit
    CHECK(verifiedStampMatches(tree.store, txnId));
    CHECK_FALSE(verifiedStampMatches(tree.store, txnId + 1));

    // The same bytes written back: the contents are unchanged, the file was written (later
    // than the kernel's coarse clock could round to the writer's last commit).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    {
        const int fd = ::open((tree.store / "data.mdb").c_str(), O_RDWR);
        REQUIRE(fd >= 0);
        char page[16];
        REQUIRE(::pread(fd, page, sizeof page, 8192) == ssize_t(sizeof page));
        REQUIRE(::pwrite(fd, page, sizeof page, 8192) == ssize_t(sizeof page));
        ::close(fd);
    }
    CHECK_FALSE(verifiedStampMatches(tree.store, txnId));
    // The next open walks the trees, finds them whole and stamps the file again.
    StoreOptions options;
    options.directory = tree.store;
    options.readOnly = true;
    SymbolStore::open(options).reset();
    CHECK(verifiedStampMatches(tree.store, txnId));
}

TEST_CASE("a commit that changes nothing leaves the stamp naming the last transaction written",
          "[damage]") {
    Tree tree;
    StoreOptions options;
    options.directory = tree.store;
    {
        auto store = SymbolStore::open(options);
        store->apply(StoreEdit{}); // a batch with nothing to write: LMDB commits no new meta
        store->flush();
    }
    std::ifstream in(tree.store / "verified");
    std::string inode, size, mtime, ctime;
    size_t stamped = 0;
    REQUIRE(in >> inode >> size >> mtime >> ctime >> stamped);
    auto env = lmdb::Env::open(tree.store, size_t(64) << 20, 16, 16, MDB_RDONLY);
    MDB_envinfo info;
    REQUIRE(mdb_env_info(env.get(), &info) == MDB_SUCCESS);
    CHECK(stamped == info.me_last_txnid);
    CHECK(verifiedStampMatches(tree.store, stamped));
}

TEST_CASE("index compacts the store after filling an empty one, not after a run that changes "
          "nothing",
          "[e2e][compact]") {
    Tree tree;
    const std::string fresh = (tree.dir.path() / "fresh").string();
    const Run cold = runSymdex(tree.dir, {"index", "-q", "-p", ".", "--store", fresh});
    INFO(cold.err);
    REQUIRE(cold.exitedWith(0));
    CHECK_THAT(cold.out, Catch::Contains("compacted: "));
    const Run again = runSymdex(tree.dir, {"index", "-q", "-p", ".", "--store", fresh});
    REQUIRE(again.exitedWith(0));
    CHECK_THAT(again.out, Catch::Contains("0 parsed") || Catch::Contains("up to date"));
    CHECK_THAT(again.out, !Catch::Contains("compacted: "));
    const Run kept = runSymdex(
        tree.dir, {"index", "-q", "--rebuild", "--no-compact", "-p", ".", "--store", fresh});
    REQUIRE(kept.exitedWith(0));
    CHECK_THAT(kept.out, !Catch::Contains("compacted: "));
    CHECK(runSymdex(tree.dir, {"def", "geo::Circle::area", "--store", fresh}).exitedWith(0));
}
