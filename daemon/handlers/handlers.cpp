// The method table: every method the daemon answers, with its handler. Lifecycle methods
// (initialize, shutdown, exit, $/cancelRequest) change the connection's state and are handled
// by the connection itself (daemon/connection.cpp).
#include "daemon/handlers/handler.h"

namespace symdex::daemon {

namespace {

const MethodSpec kMethods[] = {
    {"textDocument/definition", nullptr, true, handleDefinition, true},
    {"textDocument/declaration", nullptr, true, handleDeclaration, true},
    {"textDocument/references", nullptr, true, handleReferences},
    {"textDocument/documentHighlight", handleDocumentHighlight, true},
    {"textDocument/documentSymbol", handleDocumentSymbol, true},
    {"textDocument/hover", handleHover, true},
    {"textDocument/implementation", handleImplementation, true},
    {"textDocument/prepareCallHierarchy", handlePrepareCallHierarchy, true},
    {"callHierarchy/incomingCalls", handleIncomingCalls, true},
    {"callHierarchy/outgoingCalls", handleOutgoingCalls, true},
    {"textDocument/prepareTypeHierarchy", handlePrepareTypeHierarchy, true},
    {"typeHierarchy/supertypes", handleSupertypes, true},
    {"typeHierarchy/subtypes", handleSubtypes, true},
    {"workspace/symbol", nullptr, true, handleWorkspaceSymbol, true, workspaceSymbolIsSelective},
    {"textDocument/didSave", handleDidSave, true},
    {"textDocument/didOpen", handleDidOpen, true},
    {"workspace/didChangeWatchedFiles", handleDidChangeWatchedFiles, true},
    {"symdex/status", handleStatus, false},
    {"symdex/stats", handleStats, false},
    {"symdex/index", handleIndex, false},
    {"symdex/find", handleFind, false},
    {"symdex/resolve", handleResolve, false},
    {"symdex/occurrences", handleOccurrences, false},
    {"symdex/references", handleSymbolReferences, false},
    {"symdex/fileSymbols", handleFileSymbols, false},
    {"symdex/related", handleRelated, false},
};

} // namespace

void RequestContext::checkCancelled() const {
    if (cancelled.load(std::memory_order_relaxed))
        throw protocol::RpcError{protocol::kRequestCancelled, "request cancelled"};
}

const MethodSpec* findMethod(const QString& name) {
    for (const MethodSpec& m : kMethods)
        if (name == QLatin1String(m.name))
            return &m;
    return nullptr;
}

} // namespace symdex::daemon
