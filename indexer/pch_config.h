// Which TUs may share a PCH: the configuration key of a compile command, and what the rank of
// header ownership reads of it. No libclang here: `symdex` plans shards with it (shards.cpp).
#pragma once

#include "indexer/compile_db.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace symdex {

/// "c-header" or "c++-header" for the language `command` parses its main file in; empty for
/// languages symdex builds no PCH for (Objective-C, CUDA, assembly, or an explicit -x).
std::string pchHeaderLanguage(const CompileCommand& command);

/// The configuration a PCH must match: the parse arguments and the language of the main file.
/// TUs with the same key can share a PCH. Warning options (-W..., -w, except -Wp, which passes
/// preprocessor options) are left out: they change what is diagnosed, not what is parsed, and
/// clang does not check them when it loads a PCH.
uint64_t pchGroupKey(const CompileCommand& command);

/// TUs of a configuration worth building a PCH for: below this, it costs more than it saves.
inline constexpr size_t kMinPchGroup = 4;

/// [command]: 1 for a TU of a configuration with at least kMinPchGroup TUs in the database (one
/// that may be parsed against a PCH), 0 for the others. The rank that decides header ownership
/// orders tier 0 first (indexer.cpp, classify; shards.h, RankKey): their plain parses own the
/// headers they share with the PCH's TUs, which then need not parse those whole (pch.md, rule
/// 1). A function of the database alone, whatever --pch says; a shard's share has its whole
/// database's (CompileDatabase::rankTiers).
std::vector<uint8_t> pchTiers(const CompileDatabase& db);

} // namespace symdex
