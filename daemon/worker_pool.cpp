#include "daemon/worker_pool.h"

#include <pthread.h>
#include <string>

namespace symdex::daemon {

WorkerPool::WorkerPool(unsigned threads, const char* name) {
    for (unsigned i = 0; i < threads; ++i)
        threads_.emplace_back([this, i, name] {
            const std::string threadName = std::string(name) + "-" + std::to_string(i);
            pthread_setname_np(pthread_self(), threadName.substr(0, 15).c_str());
            loop();
        });
}

WorkerPool::~WorkerPool() {
    shutdown();
}

void WorkerPool::shutdown() {
    {
        std::lock_guard lock(tasksMu_);
        stopping_ = true;
    }
    tasksChanged_.notify_all();
    for (std::thread& t : threads_)
        if (t.joinable())
            t.join();
}

void WorkerPool::post(std::function<void()> task) {
    pending_.fetch_add(1, std::memory_order_relaxed);
    {
        std::lock_guard lock(tasksMu_);
        tasks_.push_back(std::move(task));
    }
    tasksChanged_.notify_one();
}

size_t WorkerPool::queued() const {
    std::lock_guard lock(tasksMu_);
    return tasks_.size();
}

void WorkerPool::loop() {
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock lock(tasksMu_);
            tasksChanged_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
            if (tasks_.empty())
                return; // stopping, and nothing left
            task = std::move(tasks_.front());
            tasks_.pop_front();
        }
        task();
        pending_.fetch_sub(1, std::memory_order_relaxed);
    }
}

} // namespace symdex::daemon
