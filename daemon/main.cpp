// symdexd: the indexing daemon. See daemon/daemon.h and docs/protocol.md.
#include "daemon/daemon.h"
#include "daemon/termination.h"
#include "indexer/indexer.h"
#include "indexer/libclang.h"
#include "symdex_version.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <tbb/global_control.h>

#include <cstdio>

namespace {

/// A positive count option, or 0 when not given; exits on a bad value.
unsigned countOption(const QCommandLineParser& parser, const char* name, int max) {
    if (!parser.isSet(name))
        return 0;
    bool ok = false;
    const int n = parser.value(name).toInt(&ok);
    if (!ok || n < 1 || n > max) {
        std::fprintf(stderr, "symdexd: --%s needs a number from 1 to %d, not '%s'\n", name, max,
                     qPrintable(parser.value(name)));
        std::exit(2);
    }
    return unsigned(n);
}

/// The exit status when the store was deleted or replaced under the daemon (docs/protocol.md).
constexpr int kStoreLostStatus = 3;

/// Runs the daemon until SIGTERM or SIGINT, or until its store is gone; the exit status.
int serve(QCoreApplication& app, symdex::daemon::Daemon& daemon) {
    symdex::daemon::TerminationSignals termination;
    QObject::connect(&termination, &symdex::daemon::TerminationSignals::received, &app,
                     [&](int sig) {
                         std::fprintf(stderr, "symdexd: signal %d, stopping\n", sig);
                         daemon.stop();
                         QCoreApplication::exit(0);
                     });
    // Queued: the check may run inside a watcher callback, and stop() destroys the watcher.
    QObject::connect(
        &daemon, &symdex::daemon::Daemon::storeLost, &app,
        [&] {
            daemon.stop();
            QCoreApplication::exit(kStoreLostStatus);
        },
        Qt::QueuedConnection);
    std::string error;
    if (!daemon.start(&error)) {
        std::fprintf(stderr, "symdexd: %s\n", error.c_str());
        return 1;
    }
    return app.exec();
}

/// Runs from the executable's .preinit_array: before any shared library's initializers, which take
/// ~70 ms here (libLLVM registers its options), and long before main. Failure is left to main's
/// call, which reports it.
void installHandlersBeforeLibraries(int, char**, char**) noexcept {
    try {
        symdex::daemon::installTerminationHandlers();
    } catch (...) {
    }
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SYMDEX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SYMDEX_SANITIZED 1
#endif
#endif
#ifndef SYMDEX_SANITIZED
[[gnu::used, gnu::section(".preinit_array")]] constexpr void (*kPreinit)(int, char**, char**) =
    installHandlersBeforeLibraries;
#endif
// Under a sanitizer, whose runtime intercepts sigaction and initializes after .preinit_array, the
// handlers are installed at the top of main instead.

} // namespace

int main(int argc, char** argv) {
    // Done before main already (kPreinit) unless sanitized; here so that a failure is reported.
    symdex::daemon::installTerminationHandlers();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("symdexd");
    // --version names the libclang this process loads (clang_getClangVersion: "Debian clang
    // version 16.0.6"); nothing else loads it at start (indexer/libclang.h).
    const QStringList arguments = app.arguments();
    if (arguments.contains("--version") || arguments.contains("-v")) {
        CXString loaded = clang_getClangVersion();
        QCoreApplication::setApplicationVersion(
            QString("%1 (libclang %2: %3)")
                .arg(SYMDEX_VERSION, SYMDEX_LIBCLANG_VERSION, clang_getCString(loaded)));
        clang_disposeString(loaded);
    }
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "symdex's indexing daemon: indexes the tree, watches it, and answers LSP and symdex/* "
        "requests on a local socket while it indexes (docs/protocol.md).");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({
        {"root", "The source tree served (default: the current directory).", "DIR"},
        {"p",
         "Build directory holding compile_commands.json, or the file (default: ROOT, then "
         "ROOT/build).",
         "BUILD"},
        {"store", "Symbol store directory (default: ROOT/.symdex).", "DIR"},
        {"threads", "Indexer threads (default: all cores).", "N"},
        {"index-priority",
         "low (default): the parse threads run under SCHED_IDLE and get the CPU only when "
         "queries leave it idle; normal: they compete with the queries.",
         "low|normal"},
        {"query-threads", "Threads answering queries (default: max(2, cores)).", "N"},
        {"socket",
         "Socket path (default: $XDG_RUNTIME_DIR/symdex/<store hash>.sock); its directory "
         "must be private (0700).",
         "PATH"},
        {"debounce", "Milliseconds to wait after the last file change (default 200).", "MS"},
        {"max-watches",
         "At most N inotify watches (default: half of fs.inotify.max_user_watches); paths left "
         "out are logged.",
         "N"},
        {"read-only",
         "Serve the store as it is, without indexing or watching the tree: a store symdex "
         "merge wrote (docs/shards.md), or one another process indexes. Requests to index are "
         "refused; commits of other processes are served as they land."},
        {"tu-timeout",
         "Stop a TU's parse after this many seconds and record it as crashed (default 300; 0: "
         "no limit).",
         "SECONDS"},
    });
    parser.process(app);
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "symdexd: unexpected argument '%s' (see symdexd --help)\n",
                     qPrintable(parser.positionalArguments().front()));
        return 2;
    }

    symdex::daemon::DaemonOptions options;
    options.root = parser.isSet("root") ? parser.value("root").toStdString() : ".";
    options.database = parser.value("p").toStdString();
    options.store = parser.value("store").toStdString();
    options.indexThreads = countOption(parser, "threads", 1024);
    options.queryThreads = countOption(parser, "query-threads", 1024);
    if (parser.isSet("index-priority")) {
        const QString priority = parser.value("index-priority");
        const std::optional<bool> low = symdex::parseIndexPriority(priority.toStdString());
        if (!low) {
            std::fprintf(stderr, "symdexd: --index-priority must be low or normal, not '%s'\n",
                         qPrintable(priority));
            return 2;
        }
        options.lowIndexPriority = *low;
    }
    if (parser.isSet("tu-timeout")) {
        const QString value = parser.value("tu-timeout");
        const auto timeout = symdex::parseTuTimeout(value.toStdString());
        if (!timeout) {
            std::fprintf(stderr,
                         "symdexd: --tu-timeout needs whole seconds from 0 (no limit) to 86400, "
                         "not '%s'\n",
                         qPrintable(value));
            return 2;
        }
        options.tuTimeout = *timeout;
    }
    options.socketPath = parser.value("socket").toStdString();
    options.readOnly = parser.isSet("read-only");
    options.maxWatches = countOption(parser, "max-watches", 100000000);
    if (parser.isSet("debounce"))
        options.debounce = std::chrono::milliseconds(countOption(parser, "debounce", 60000));

    // Lets exit wait for TBB's worker threads, so nothing of the last index run is still being
    // torn down (or reported as leaked) when the process ends.
    tbb::task_scheduler_handle tbbHandle{tbb::attach{}};
    int status;
    {
        symdex::daemon::Daemon daemon(options);
        status = serve(app, daemon);
    }
    tbb::finalize(tbbHandle, std::nothrow);
    return status;
}
