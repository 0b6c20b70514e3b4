// Where `symdex find/def/refs/symbols` get their answers: the store opened read-only, or the
// daemon serving that store (symdex/* methods, docs/protocol.md). Both give the same C++
// values, and the commands format them in one place, so the output is the same byte for byte.
#pragma once

#include "store/store.h"

#include <QCommandLineParser>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex::cli {

/// The read queries the CLI needs; the same contract as StoreSnapshot's queries of the same names.
class QueryBackend {
public:
    virtual ~QueryBackend() = default;
    virtual std::vector<NameMatch> findSymbols(std::string_view pattern, size_t limit) = 0;
    virtual std::vector<uint64_t> resolveName(std::string_view name) = 0;
    virtual std::vector<SymbolHit> occurrences(uint64_t usrHash) = 0;
    virtual std::vector<ReferenceHit> references(uint64_t usrHash) = 0;
    virtual std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) = 0;
    virtual std::vector<Related> related(uint64_t usrHash, Relation relation) = 0;
};

/// --daemon auto|never|always.
void addDaemonOption(QCommandLineParser& parser);

/// The daemon serving the store (--store or the nearest .symdex) when one runs and --daemon is
/// not `never`, else the store itself. `always` without a daemon is a UsageError.
std::unique_ptr<QueryBackend> openQueryBackend(const QCommandLineParser& parser);

/// The queries of `store`, which the backend shares (tests use a MemoryStore).
std::unique_ptr<QueryBackend> storeBackend(std::shared_ptr<const Store> store);

/// How a query command gets its backend from its parsed options: openQueryBackend, or a test's.
using OpenBackend = std::function<std::unique_ptr<QueryBackend>(const QCommandLineParser&)>;

} // namespace symdex::cli
