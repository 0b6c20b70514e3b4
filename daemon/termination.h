// SIGTERM and SIGINT as a Qt signal: the handler only writes to a pipe (async-signal-safe); the
// Qt thread reads it and shuts down in order.
#pragma once

#include <QObject>
#include <QSocketNotifier>

#include <memory>

namespace symdex::daemon {

class TerminationSignals : public QObject {
    Q_OBJECT
public:
    /// Installs the handlers. One instance per process.
    explicit TerminationSignals(QObject* parent = nullptr);
    ~TerminationSignals() override;

signals:
    /// Emitted on the Qt thread with the signal number.
    void received(int signal);

private:
    std::unique_ptr<QSocketNotifier> notifier_;
};

} // namespace symdex::daemon
