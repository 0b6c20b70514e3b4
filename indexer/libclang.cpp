#define SYMDEX_LIBCLANG_LOADER
#include "indexer/libclang.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace symdex::libclang {

std::atomic<const Functions*> loadedFunctions{nullptr};

namespace {

[[noreturn]] void fail(const char* what, const char* detail) {
    std::fprintf(stderr, "symdex: cannot load libclang (%s): %s: %s\n", SYMDEX_LIBCLANG_FILE, what,
                 detail ? detail : "unknown error");
    std::abort();
}

} // namespace

const Functions& load() {
    static std::mutex mutex;
    static Functions table;
    std::lock_guard lock(mutex);
    if (const Functions* f = loadedFunctions.load(std::memory_order_acquire))
        return *f;
    // RTLD_LAZY: libclang's own calls bind on first use, as they did when programs linked it.
    void* library = dlopen(SYMDEX_LIBCLANG_FILE, RTLD_LAZY | RTLD_LOCAL);
    if (!library)
        fail("dlopen", dlerror());
#define SYMDEX_LIBCLANG_RESOLVE(name)                                                              \
    table.name = reinterpret_cast<decltype(table.name)>(dlsym(library, #name));                    \
    if (!table.name)                                                                               \
        fail("dlsym " #name, dlerror());
    SYMDEX_LIBCLANG_FUNCTIONS(SYMDEX_LIBCLANG_RESOLVE)
#undef SYMDEX_LIBCLANG_RESOLVE
    loadedFunctions.store(&table, std::memory_order_release);
    return table;
}

} // namespace symdex::libclang
