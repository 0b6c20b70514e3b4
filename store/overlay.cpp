#include "store/overlay.h"

#include "store/store_impl.h"

namespace symdex {

uint64_t Overlay::stage(std::shared_ptr<const EncodedFile> file, uint64_t generation) {
    const std::string& path = file->record.path;
    Stripe& stripe = stripeOf(path);
    uint64_t version = 0;
    {
        std::unique_lock lock(stripe.mu);
        Slot& slot = stripe.slots[path];
        if (generation != 0 && slot.generation == generation && slot.version != 0 &&
            file->priority > slot.priority)
            return 0;
        slot.generation = generation;
        slot.priority = file->priority;
        version = ++slot.version;
        if (!slot.staged)
            stripe.stagedCount.fetch_add(1, std::memory_order_release);
        slot.staged.swap(file); // the old contents are freed after the unlock
    }
    return version;
}

Overlay::Newest Overlay::newest(const std::string& path) const {
    const Stripe& stripe = stripeOf(path);
    std::shared_lock lock(stripe.mu);
    auto it = stripe.slots.find(path);
    if (it == stripe.slots.end())
        return {};
    return {it->second.staged, it->second.version};
}

void Overlay::unstage(const std::string& path, uint64_t version) {
    Stripe& stripe = stripeOf(path);
    std::shared_ptr<const EncodedFile> old;
    std::unique_lock lock(stripe.mu);
    auto it = stripe.slots.find(path);
    if (it == stripe.slots.end() || it->second.version != version || !it->second.staged)
        return;
    old.swap(it->second.staged);
    stripe.stagedCount.fetch_sub(1, std::memory_order_release);
}

void Overlay::forget(const std::string& path) {
    Stripe& stripe = stripeOf(path);
    std::unique_lock lock(stripe.mu);
    auto it = stripe.slots.find(path);
    if (it != stripe.slots.end() && !it->second.staged)
        stripe.slots.erase(it);
}

void Overlay::endGeneration() {
    for (Stripe& stripe : stripes_) {
        std::unique_lock lock(stripe.mu);
        std::erase_if(stripe.slots, [](const auto& entry) { return !entry.second.staged; });
    }
}

std::shared_ptr<const EncodedFile> Overlay::find(const std::string& path) const {
    const Stripe& stripe = stripeOf(path);
    if (stripe.stagedCount.load(std::memory_order_acquire) == 0)
        return nullptr;
    std::shared_lock lock(stripe.mu);
    auto it = stripe.slots.find(path);
    return it == stripe.slots.end() ? nullptr : it->second.staged;
}

std::vector<std::shared_ptr<const EncodedFile>> Overlay::staged() const {
    std::vector<std::shared_ptr<const EncodedFile>> out;
    for (const Stripe& stripe : stripes_) {
        // A stripe seen empty had nothing staged when this query began: whatever it committed
        // since is visible to the read transaction the caller opens next (acquire/release).
        if (stripe.stagedCount.load(std::memory_order_acquire) == 0)
            continue;
        std::shared_lock lock(stripe.mu);
        for (const auto& [path, slot] : stripe.slots)
            if (slot.staged)
                out.push_back(slot.staged);
    }
    return out;
}

size_t Overlay::stagedCount() const {
    size_t n = 0;
    for (const Stripe& stripe : stripes_)
        n += stripe.stagedCount.load(std::memory_order_relaxed);
    return n;
}

} // namespace symdex
