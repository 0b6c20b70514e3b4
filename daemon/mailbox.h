// Posting work to the Qt thread from other threads: a queue under a std::mutex and an eventfd
// the Qt event loop watches. Query workers and the index thread hand their results to the Qt
// thread this way; only the Qt thread touches sockets.
#pragma once

#include <QObject>
#include <QSocketNotifier>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace symdex::daemon {

class Mailbox : public QObject {
    Q_OBJECT
public:
    /// Create on the Qt thread whose event loop runs the posted functions.
    explicit Mailbox(QObject* parent = nullptr);
    ~Mailbox() override;

    /// Queues `fn` to run on the Qt thread. Thread-safe; never blocks on the Qt thread.
    void post(std::function<void()> fn);

private:
    void drain();

    int eventFd_ = -1;
    std::unique_ptr<QSocketNotifier> notifier_;
    std::deque<std::function<void()>> posted_;
    std::mutex postedMu_; // guards posted_
};

} // namespace symdex::daemon
