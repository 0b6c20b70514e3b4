#include "indexer/pch_config.h"

#include "store/encoding.h"

#include <unordered_map>

namespace symdex {

std::string pchHeaderLanguage(const CompileCommand& command) {
    for (size_t i = 0; i < command.arguments.size(); ++i) {
        const std::string& arg = command.arguments[i];
        if (arg == "-x" || arg.starts_with("-x") || arg == "--language" ||
            arg.starts_with("--language="))
            return {};
    }
    const std::string& file = command.file;
    const size_t dot = file.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : file.substr(dot + 1);
    if (ext == "c")
        return "c-header";
    if (ext == "cc" || ext == "cpp" || ext == "cxx" || ext == "c++" || ext == "C" || ext == "cp" ||
        ext == "CPP")
        return "c++-header";
    return {};
}

uint64_t pchGroupKey(const CompileCommand& command) {
    std::string all = pchHeaderLanguage(command);
    all.push_back('\0');
    all += command.directory;
    for (const std::string& arg : command.arguments) {
        if (arg == "-w" || (arg.starts_with("-W") && !arg.starts_with("-Wp,")))
            continue;
        all.push_back('\0');
        all += arg;
    }
    return hash64(all);
}

std::vector<uint8_t> pchTiers(const CompileDatabase& db) {
    if (!db.commands.empty() && db.rankTiers.size() == db.commands.size())
        return db.rankTiers;
    std::unordered_map<uint64_t, size_t> tus;
    std::vector<uint64_t> key(db.commands.size(), 0);
    std::vector<char> eligible(db.commands.size(), 0);
    for (size_t i = 0; i < db.commands.size(); ++i)
        if (!pchHeaderLanguage(db.commands[i]).empty()) {
            eligible[i] = 1;
            key[i] = pchGroupKey(db.commands[i]);
            ++tus[key[i]];
        }
    std::vector<uint8_t> tier(db.commands.size(), 0);
    for (size_t i = 0; i < db.commands.size(); ++i)
        tier[i] = eligible[i] && tus[key[i]] >= kMinPchGroup;
    return tier;
}

} // namespace symdex
