// SIGTERM and SIGINT as a Qt signal: the handler only writes to a pipe (async-signal-safe); the
// Qt thread reads it and shuts down in order. The handler is installed first thing in main, before
// anything slow (Qt, the store, the socket), so a signal at any moment of start-up waits in the
// pipe and ends in the same orderly stop instead of the default death by signal.
#pragma once

#include <QObject>
#include <QSocketNotifier>

#include <memory>

namespace symdex::daemon {

/// Installs the SIGTERM/SIGINT handlers (and ignores SIGPIPE). Idempotent; needs no Qt. Throws
/// std::runtime_error if the pipe cannot be made.
void installTerminationHandlers();

class TerminationSignals : public QObject {
    Q_OBJECT
public:
    /// Installs the handlers unless done already, and reads what they caught, including signals
    /// received before. One instance per process; needs a QCoreApplication.
    explicit TerminationSignals(QObject* parent = nullptr);
    ~TerminationSignals() override;

signals:
    /// Emitted on the Qt thread with the signal number.
    void received(int signal);

private:
    std::unique_ptr<QSocketNotifier> notifier_;
};

} // namespace symdex::daemon
