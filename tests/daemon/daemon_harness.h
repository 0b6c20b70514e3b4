// Running the real symdexd in tests: a copy of the golden fixture tree, the daemon as a child
// process on a socket in a private temporary directory (unique per test, so ctest -j works), and
// blocking clients.
#pragma once

#include "protocol/client.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonObject>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace symdex::test {

/// The golden fixture copied under a temporary directory, with its compile database.
struct FixtureTree {
    FixtureTree();
    TempDir dir;
    std::filesystem::path root; ///< dir/tree
    std::vector<std::string> sources;
    std::string path(const std::string& rel) const { return (root / rel).string(); }
    std::string uri(const std::string& rel) const;
    /// Adds TUs that take a while to parse (each includes much of the standard library).
    void addSlowTus(int count);
    void writeDatabase();
};

class DaemonProcess {
public:
    /// Starts symdexd on `tree` with `args` added; waits until it accepts connections.
    DaemonProcess(const FixtureTree& tree, std::vector<std::string> args = {});
    /// SIGTERM, then SIGKILL if it has not exited within 30 s; fails the test unless it exited 0
    /// without a sanitizer report.
    ~DaemonProcess();

    const std::string& socket() const { return socket_; }
    pid_t pid() const { return pid_; }
    /// A new connection; initialized (LSP handshake) unless told otherwise.
    std::unique_ptr<protocol::RpcClient> client(bool initialize = true) const;
    /// Sends SIGTERM and returns the exit status (or -1 on a signal death).
    int terminate();
    /// Waits for the daemon to exit on its own; its exit status (-1 on a signal death), or nullopt
    /// if it still runs after `timeout`. Fails the test on a sanitizer report.
    std::optional<int> waitForExit(std::chrono::milliseconds timeout);
    /// Everything the daemon wrote to stderr so far.
    std::string log() const;

private:
    /// Fails the running test if the daemon did not exit 0 or logged a sanitizer report.
    void checkExit(int status) const;

    std::string socket_;
    std::string logPath_;
    pid_t pid_ = -1;
};

/// Runs symdexd with `args` to completion (for refusals); returns exit status and stderr.
std::pair<int, std::string> runDaemonToExit(const FixtureTree& tree,
                                            const std::vector<std::string>& args);

/// Waits until the daemon has finished an index run with nothing pending; returns its status.
/// Drops the symdex/reindexed notifications received so far.
QJsonObject waitUntilIdle(protocol::RpcClient& client,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));
/// Waits for the next symdex/reindexed notification of a run numbered above `afterRun` and returns
/// its params. A status that says idle can reach the client before the notification of the run
/// that just ended (they are sent from different threads): pass the status's "runs" to skip it.
QJsonObject waitForReindex(protocol::RpcClient& client,
                           std::chrono::milliseconds timeout = std::chrono::seconds(120),
                           qint64 afterRun = 0);

/// LSP TextDocumentPositionParams.
QJsonObject positionParams(const std::string& uri, int line, int character);
/// "rel/path:line:character-line:character" (0-based, LSP) of each Location, for comparisons.
std::vector<std::string> locations(const QJsonValue& result, const FixtureTree& tree);

/// The paths of a JSON string array, relative to the tree's root, sorted.
std::vector<std::string> relativePaths(const QJsonValue& array, const FixtureTree& tree);

} // namespace symdex::test
