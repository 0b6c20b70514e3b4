// The threads that answer queries (`query-N`): a fixed pool with one FIFO queue. Kept apart from
// the indexer's TBB arena so a query never waits behind a parse, and built on std::thread and
// std::mutex rather than QThreadPool so ThreadSanitizer sees every hand-off.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace symdex::daemon {

class WorkerPool {
public:
    /// Starts `threads` threads named `<name>-N`.
    WorkerPool(unsigned threads, const char* name);
    /// shutdown().
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    /// Queues `task`. Thread-safe. A task must not throw.
    void post(std::function<void()> task);
    /// Finishes the tasks already queued, then joins the threads. Idempotent; post() after it
    /// is not allowed. The pool stays usable for queued() and threads().
    void shutdown();
    /// Tasks queued and not yet started.
    size_t queued() const;
    /// Tasks queued or running. Thread-safe, lock-free.
    size_t pending() const { return pending_.load(std::memory_order_relaxed); }
    unsigned threads() const { return unsigned(threads_.size()); }

private:
    void loop();

    std::deque<std::function<void()>> tasks_;
    std::atomic<size_t> pending_{0};
    bool stopping_ = false;
    mutable std::mutex tasksMu_; // guards tasks_ and stopping_
    std::condition_variable tasksChanged_;
    std::vector<std::thread> threads_;
};

} // namespace symdex::daemon
