// The Catch2 runner. Kept in its own file (and out of the sanitizer flags): it is slow to compile.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
