# libclang is pinned to 16: Debian 12's default libclang (14) and 15 fail on GCC 12's <ranges>
# headers once views are used; 16.0.6 parses them cleanly. libclang-16-dev ships no CMake package,
# so the header and library are found directly and wrapped in an imported target.
set(SYMDEX_LLVM_ROOT "/usr/lib/llvm-16" CACHE PATH "Root of the pinned LLVM/libclang installation")

find_path(LIBCLANG_INCLUDE_DIR clang-c/Index.h PATHS "${SYMDEX_LLVM_ROOT}/include"
          NO_DEFAULT_PATH REQUIRED)
find_library(LIBCLANG_LIBRARY NAMES clang PATHS "${SYMDEX_LLVM_ROOT}/lib" NO_DEFAULT_PATH
             REQUIRED)

add_library(LibClang::libclang SHARED IMPORTED)
set_target_properties(LibClang::libclang PROPERTIES
    IMPORTED_LOCATION "${LIBCLANG_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBCLANG_INCLUDE_DIR}")
