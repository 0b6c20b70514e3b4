#include "indexer/option_values.h"

#include <string>

namespace symdex {

std::optional<bool> parseIndexPriority(std::string_view name) {
    if (name == "low")
        return true;
    if (name == "normal")
        return false;
    return std::nullopt;
}

std::optional<std::chrono::milliseconds> parseTuTimeout(std::string_view seconds) {
    if (seconds.empty() || seconds.size() > 6 ||
        seconds.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    const long value = std::stol(std::string(seconds));
    if (value > 24 * 3600)
        return std::nullopt;
    return std::chrono::milliseconds(value * 1000);
}

} // namespace symdex
