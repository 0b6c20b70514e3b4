// symdexd as a whole: the lock that makes it the one daemon of its store, the store, the index
// runner, the socket server and the file watcher, started and stopped in order. daemon/main.cpp
// only parses the command line and runs this.
#pragma once

#include "protocol/instance_lock.h"

#include <QObject>
#include <QTimer>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace symdex {
class PageCacheWarmer;
class SymbolStore;
} // namespace symdex

namespace symdex::daemon {

class IndexService;
class Mailbox;
class Server;
class SearchPreparer;
class Watcher;
struct IndexRunReport;
struct ServerContext;

struct DaemonOptions {
    /// The tree served (--root); LSP requests for documents outside it are refused.
    std::filesystem::path root;
    /// compile_commands.json or its directory (-p); empty: ROOT if it holds one, else ROOT/build.
    std::string database;
    /// The store (--store); empty: ROOT/.symdex.
    std::filesystem::path store;
    /// Indexer threads (--threads); 0: all hardware threads.
    unsigned indexThreads = 0;
    /// --index-priority low (the default: the parse threads run under SCHED_IDLE, as clangd's
    /// background index does, so queries never wait for the CPU) or normal.
    bool lowIndexPriority = true;
    /// --tu-timeout: a parse running longer is stopped, its TU recorded as crashed.
    std::chrono::milliseconds tuTimeout{std::chrono::minutes(5)};
    /// Query worker threads (--query-threads); 0: max(2, hardware threads).
    unsigned queryThreads = 0;
    /// The socket (--socket); empty: a per-store name in socketDirectory(). Its directory must be
    /// private to the user either way.
    std::string socketPath;
    /// How long the watcher waits after the last change of a burst.
    std::chrono::milliseconds debounce{200};
    /// inotify watches the watcher may use; 0: defaultWatchBudget() (half the user's limit).
    size_t maxWatches = 0;
    /// --read-only: serve the store as it is (a merged store: docs/shards.md) without indexing,
    /// watching or writing; symdex/index is refused, didSave and file events are ignored. Other
    /// processes' commits (the next merge) are seen as they land.
    bool readOnly = false;
    /// How often $/progress reports go out during a run.
    std::chrono::milliseconds progressInterval{250};
};

class Daemon : public QObject {
    Q_OBJECT
public:
    explicit Daemon(DaemonOptions options, QObject* parent = nullptr);
    ~Daemon() override;

    /// Takes the store's daemon lock, opens the store, listens, starts indexing and watching.
    /// False and *error (naming the file, socket or other daemon) when any step fails.
    bool start(std::string* error);
    /// Stops in order: no new connections, the index run ends after the TUs being parsed, the
    /// store commits what is pending, the socket is removed, the lock released. Idempotent.
    void stop();

    const std::string& socketPath() const { return socketPath_; }

signals:
    /// The store directory, its lock or its data file was deleted or replaced (logged already).
    /// Serving on would answer from files nobody else can see and let a second daemon start on
    /// the same path, so the owner stops the daemon and exits non-zero.
    void storeLost();

private:
    bool resolvePaths(std::string* error);
    void runStarted(uint64_t run);
    void runFinished(const IndexRunReport& report);
    void logSkipped(const IndexRunReport& report);
    void reportProgress();
    /// Emits storeLost() (once) if the store is no longer the one opened. Cheap: three stat calls
    /// (and for a read-only daemon, a read transaction begun to see the last commit).
    void checkStore();
    /// Starts the search preparer and the page cache warmer (at the end of start()).
    void startPreparing();
    bool storeInPlace(std::string* why) const;

    DaemonOptions options_;
    std::string root_;
    std::string socketPath_;
    std::string databaseFile_; ///< the compile_commands.json watched
    std::optional<protocol::InstanceLock> lock_;
    std::unique_ptr<SymbolStore> store_;
    std::unique_ptr<Mailbox> mailbox_;
    std::unique_ptr<IndexService> indexer_;
    std::unique_ptr<ServerContext> context_;
    std::unique_ptr<Server> server_;
    std::unique_ptr<Watcher> watcher_;
    // The preparer first: the warmer's thread asks it for a pass, so the warmer goes first
    // (stop() resets them in that order too).
    std::unique_ptr<SearchPreparer> searchPreparer_;
    std::unique_ptr<PageCacheWarmer> warmer_;
    QTimer progressTimer_;
    /// Identities (st_dev, st_ino) of the store directory and its data file as opened.
    std::pair<dev_t, ino_t> storeDirectoryId_{};
    /// The store's last commit (LMDB transaction id) when the preparer was last asked for a
    /// read-only daemon's store: another process's commit changes it.
    uint64_t preparedCommit_ = 0;
    std::pair<dev_t, ino_t> dataFileId_{};
    QTimer storeCheckTimer_;
    bool storeLost_ = false;
    std::vector<std::string> loggedSkipped_; ///< the skipped entries the log listed last
    bool stopped_ = false;
};

} // namespace symdex::daemon
