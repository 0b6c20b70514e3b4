#include "daemon/mailbox.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <sys/eventfd.h>
#include <unistd.h>

namespace symdex::daemon {

Mailbox::Mailbox(QObject* parent) : QObject(parent) {
    eventFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (eventFd_ < 0)
        throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    notifier_ = std::make_unique<QSocketNotifier>(eventFd_, QSocketNotifier::Read);
    connect(notifier_.get(), &QSocketNotifier::activated, this, &Mailbox::drain);
}

Mailbox::~Mailbox() {
    notifier_.reset();
    ::close(eventFd_);
}

void Mailbox::post(std::function<void()> fn) {
    {
        std::lock_guard lock(postedMu_);
        posted_.push_back(std::move(fn));
    }
    const uint64_t one = 1;
    // EAGAIN only when the counter is saturated, and then a wake-up is pending anyway.
    [[maybe_unused]] ssize_t n = ::write(eventFd_, &one, sizeof one);
}

void Mailbox::drain() {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(eventFd_, &count, sizeof count);
    std::deque<std::function<void()>> batch;
    {
        std::lock_guard lock(postedMu_);
        batch.swap(posted_);
    }
    for (auto& fn : batch)
        fn();
}

} // namespace symdex::daemon
