// What a request handler sees, and the table of methods. One file per LSP request under
// handlers/; each handler runs on a query worker thread (or, for the point lookups marked
// `inlineFirst`, on the connection's thread), reads the store and returns the `result` JSON, or
// throws RpcError.
#pragma once

#include "daemon/positions.h"
#include "daemon/symbol_at.h"
#include "protocol/jsonrpc.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>

#include <atomic>
#include <functional>
#include <string>

namespace symdex {
class Store;
class StoreSnapshot;
} // namespace symdex

namespace symdex::daemon {

class IndexService;
struct IndexRunReport;

/// What every handler may use; shared by all worker threads (everything here is thread-safe).
struct ServerContext {
    Store& store;
    IndexService& indexer;
    std::string root;       ///< canonical; documents outside it are refused
    std::string storeDir;   ///< for status
    std::string socketPath; ///< for status
    /// Server-side figures for symdex/status: connections, queries waiting for a worker, ...
    std::function<QJsonObject()> serverFigures;
    /// Requests that may wait for their document's TU at once (documentSnapshot()); each holds a
    /// query thread, so the daemon keeps one free for everything else.
    int maxDocumentWaits = 1;
    /// symdexd --read-only: nothing is indexed; requests to index are refused.
    bool readOnly = false;
};

/// One request being handled.
struct RequestContext {
    const ServerContext& server;
    PositionEncoding encoding;
    /// Set when the client cancelled; a handler may give up early (its result is dropped).
    const std::atomic<bool>& cancelled;
    /// The request's textDocument as a store path, once resolved (documentPath() resolves
    /// symlinks: a dozen system calls, asked once per request).
    std::string document = {};
    /// False on the connection's thread (MethodSpec::inlineFirst): a handler that would wait
    /// (for its document's TU) throws NeedsWorker instead, and the request goes to a worker.
    bool mayWait = true;

    /// Throws RequestCancelled when the client cancelled: call between expensive steps.
    void checkCancelled() const;
};

using HandlerFn = QJsonValue (*)(RequestContext& ctx, const QJsonValue& params);
/// A handler that writes its result as JSON text (protocol::JsonWriter): for answers of many
/// locations, where QJsonObjects and QJsonDocument were a third of the work.
using TextHandlerFn = QByteArray (*)(RequestContext& ctx, const QJsonValue& params);

struct MethodSpec {
    const char* name;
    HandlerFn fn; ///< null when `text` answers
    /// LSP methods need `initialize` first; symdex/* methods do not (CLI clients skip it).
    bool needsInitialize;
    TextHandlerFn text = nullptr;
    /// A point lookup of a few pages, answered on the connection's thread when it need not wait:
    /// handing it to a worker and the answer back costs two thread wake-ups, more than the
    /// answer itself (definition: p50 0.40 ms through the pool at 300k names).
    bool inlineFirst = false;
    /// With inlineFirst, which requests are such lookups (null: all of them); the others go to
    /// the workers.
    bool (*inlineWhen)(const QJsonValue& params) = nullptr;
};

/// Thrown by a handler on the connection's thread (RequestContext::mayWait false) where it
/// would have to wait: the request is handed to a worker instead.
struct NeedsWorker {};

/// The method `name`, or nullptr.
const MethodSpec* findMethod(const QString& name);

// --- The handlers (handlers/*.cpp) -----------------------------------------------------------

QByteArray handleDefinition(RequestContext& ctx, const QJsonValue& params);
QByteArray handleDeclaration(RequestContext& ctx, const QJsonValue& params);
QByteArray handleReferences(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleDocumentHighlight(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleDocumentSymbol(RequestContext& ctx, const QJsonValue& params);
QByteArray handleWorkspaceSymbol(RequestContext& ctx, const QJsonValue& params);
/// Whether a workspace/symbol request is answered on the connection's thread (inlineWhen).
bool workspaceSymbolIsSelective(const QJsonValue& params);
QJsonValue handleStatus(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleStats(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleIndex(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleDidSave(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleDidOpen(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleDidChangeWatchedFiles(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleFind(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleResolve(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleOccurrences(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleRelated(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleHover(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleImplementation(RequestContext& ctx, const QJsonValue& params);
QJsonValue handlePrepareCallHierarchy(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleIncomingCalls(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleOutgoingCalls(RequestContext& ctx, const QJsonValue& params);
QJsonValue handlePrepareTypeHierarchy(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleSupertypes(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleSubtypes(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleSymbolReferences(RequestContext& ctx, const QJsonValue& params);
QJsonValue handleFileSymbols(RequestContext& ctx, const QJsonValue& params);

/// The report of an indexing run: symdex/status's `lastRun`, symdex/reindexed's params.
QJsonObject runReportJson(const IndexRunReport& report);

/// The `initialize` result: capabilities; picks the position encoding from the client's offer.
QJsonObject initializeResult(const QJsonValue& params, PositionEncoding* encoding);

} // namespace symdex::daemon
