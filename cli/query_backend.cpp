#include "cli/query_backend.h"

#include "cli/cli_common.h"
#include "protocol/client.h"
#include "protocol/instance_lock.h"
#include "protocol/store_json.h"
#include "store/symbol_store.h"

#include <QJsonArray>

namespace symdex::cli {

namespace {

class StoreBackend : public QueryBackend {
public:
    explicit StoreBackend(std::shared_ptr<const Store> store) : store_(std::move(store)) {}
    std::vector<NameMatch> findSymbols(std::string_view pattern, size_t limit) override {
        return store_->findSymbols(pattern, limit);
    }
    std::vector<uint64_t> resolveName(std::string_view name) override {
        return store_->resolveName(name);
    }
    std::vector<SymbolHit> occurrences(uint64_t usrHash) override {
        return store_->occurrences(usrHash);
    }
    std::vector<ReferenceHit> references(uint64_t usrHash) override {
        return store_->references(usrHash);
    }
    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) override {
        return store_->fileSymbols(path);
    }
    std::vector<Related> related(uint64_t usrHash, Relation relation) override {
        return store_->related(usrHash, relation);
    }

private:
    std::shared_ptr<const Store> store_;
};

/// The same queries through symdexd's symdex/* methods.
class DaemonBackend : public QueryBackend {
public:
    explicit DaemonBackend(std::unique_ptr<protocol::RpcClient> client)
        : client_(std::move(client)) {}

    std::vector<NameMatch> findSymbols(std::string_view pattern, size_t limit) override {
        return decodeAll<NameMatch>(
            call("symdex/find",
                 QJsonObject{
                     {"pattern", QString::fromUtf8(pattern.data(), qsizetype(pattern.size()))},
                     {"limit", qint64(limit)}}),
            protocol::nameMatchFromJson);
    }
    std::vector<uint64_t> resolveName(std::string_view name) override {
        std::vector<uint64_t> out;
        const QJsonValue result =
            call("symdex/resolve",
                 QJsonObject{{"name", QString::fromUtf8(name.data(), qsizetype(name.size()))}});
        for (const QJsonValue& v : result.toArray()) {
            std::optional<uint64_t> usr = protocol::usrHashFromJson(v.toString());
            if (!usr)
                throw UsageError{"symdexd sent a malformed USR hash"};
            out.push_back(*usr);
        }
        return out;
    }
    std::vector<SymbolHit> occurrences(uint64_t usrHash) override {
        return decodeAll<SymbolHit>(call("symdex/occurrences", usrParams(usrHash)),
                                    protocol::symbolHitFromJson);
    }
    std::vector<ReferenceHit> references(uint64_t usrHash) override {
        return decodeAll<ReferenceHit>(call("symdex/references", usrParams(usrHash)),
                                       protocol::referenceHitFromJson);
    }
    std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) override {
        const QJsonValue result =
            call("symdex/fileSymbols", QJsonObject{{"path", QString::fromStdString(path)}});
        if (result.isNull())
            return std::nullopt;
        return decodeAll<Symbol>(result, protocol::symbolFromJson);
    }
    std::vector<Related> related(uint64_t usrHash, Relation relation) override {
        QJsonObject params = usrParams(usrHash);
        params.insert("relation", QString::fromUtf8(relationName(relation).data(),
                                                    qsizetype(relationName(relation).size())));
        return decodeAll<Related>(call("symdex/related", params), protocol::relatedFromJson);
    }

private:
    static QJsonObject usrParams(uint64_t usrHash) {
        return QJsonObject{{"usrHash", protocol::usrHashToJson(usrHash)}};
    }

    QJsonValue call(const char* method, const QJsonObject& params) {
        try {
            return client_->call(method, params);
        } catch (const protocol::RpcFailure& e) {
            throw UsageError{std::string("symdexd: ") + method + ": " + e.what()};
        }
    }

    template <typename T, typename Decode>
    static std::vector<T> decodeAll(const QJsonValue& result, Decode&& decode) {
        std::vector<T> out;
        for (const QJsonValue& v : result.toArray()) {
            std::optional<T> item = decode(v.toObject());
            if (!item)
                throw UsageError{"symdexd sent a malformed answer"};
            out.push_back(std::move(*item));
        }
        return out;
    }

    std::unique_ptr<protocol::RpcClient> client_;
};

} // namespace

void addDaemonOption(QCommandLineParser& parser) {
    parser.addOption(QCommandLineOption(
        "daemon",
        "Ask the symdexd serving the store: auto (if one runs), never, always (default auto).",
        "MODE", "auto"));
}

std::unique_ptr<QueryBackend> openQueryBackend(const QCommandLineParser& parser) {
    const QString mode = parser.value("daemon");
    if (mode != "auto" && mode != "never" && mode != "always")
        throw UsageError{"--daemon must be auto, never or always, not '" + mode.toStdString() +
                         "'"};
    const std::filesystem::path dir = storeDirectory(parser);
    if (mode != "never") {
        std::string error = "no symdexd serves the store '" + dir.string() +
                            "' (start one with: symdexd --root DIR --store '" + dir.string() + "')";
        if (std::optional<protocol::DaemonInfo> info = protocol::findDaemon(dir))
            if (auto client = protocol::RpcClient::connect(info->socketPath, &error))
                return std::make_unique<DaemonBackend>(std::move(client));
        if (mode == "always")
            throw UsageError{error};
    }
    StoreOptions options;
    options.directory = dir;
    options.readOnly = true;
    return storeBackend(SymbolStore::open(options));
}

std::unique_ptr<QueryBackend> storeBackend(std::shared_ptr<const Store> store) {
    return std::make_unique<StoreBackend>(std::move(store));
}

} // namespace symdex::cli
