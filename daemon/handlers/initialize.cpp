// initialize: what the server can do, advertised honestly (LSP InitializeResult). Positions are
// UTF-16 unless the client offers "utf-8" in general.positionEncodings (LSP 3.17), which saves
// reading source lines to convert columns.
#include "daemon/handlers/handler.h"

namespace symdex::daemon {

QJsonObject initializeResult(const QJsonValue& params, PositionEncoding* encoding) {
    const QJsonArray offered = params.toObject()
                                   .value("capabilities")
                                   .toObject()
                                   .value("general")
                                   .toObject()
                                   .value("positionEncodings")
                                   .toArray();
    *encoding =
        offered.contains(QJsonValue("utf-8")) ? PositionEncoding::Utf8 : PositionEncoding::Utf16;
    const QJsonObject capabilities{
        {"positionEncoding", *encoding == PositionEncoding::Utf8 ? "utf-8" : "utf-16"},
        // No document contents are needed: the index reads files from disk. didSave (without
        // text) starts a re-index; didOpen moves the file's TU to the front of the index queue;
        // close and change are accepted and ignored.
        {"textDocumentSync", QJsonObject{{"openClose", true},
                                         {"change", 0},
                                         {"save", QJsonObject{{"includeText", false}}}}},
        {"definitionProvider", true},
        {"declarationProvider", true},
        {"referencesProvider", true},
        {"documentHighlightProvider", true},
        {"hoverProvider", true},
        {"implementationProvider", true},
        {"callHierarchyProvider", true},
        {"typeHierarchyProvider", true},
        {"documentSymbolProvider", true},
        {"workspaceSymbolProvider", true},
        {"experimental",
         QJsonObject{
             {"symdex", QJsonArray{"symdex/status", "symdex/stats", "symdex/index", "symdex/find",
                                   "symdex/resolve", "symdex/occurrences", "symdex/references",
                                   "symdex/fileSymbols", "symdex/related", "symdex/reindexed"}}}},
    };
    return QJsonObject{{"capabilities", capabilities},
                       {"serverInfo", QJsonObject{{"name", "symdexd"}, {"version", "0.1.0"}}}};
}

} // namespace symdex::daemon
