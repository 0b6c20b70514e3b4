#include "daemon/handlers/params.h"

#include "daemon/index_service.h"
#include "indexer/compile_db.h"
#include "store/store.h"

namespace symdex::daemon {

namespace {

[[noreturn]] void invalid(const QString& message) {
    throw protocol::RpcError{protocol::kInvalidParams, message};
}

QString join(const QString& path, const char* field) {
    return path.isEmpty() ? QString(field) : path + "." + field;
}

} // namespace

QJsonObject paramsObject(const QJsonValue& params) {
    if (!params.isObject())
        invalid("'params' must be an object");
    return params.toObject();
}

QJsonObject requireObject(const QJsonObject& o, const char* field, const QString& path) {
    const QJsonValue v = o.value(field);
    if (!v.isObject())
        invalid(QString("'%1' must be an object").arg(join(path, field)));
    return v.toObject();
}

QString requireString(const QJsonObject& o, const char* field, const QString& path) {
    const QJsonValue v = o.value(field);
    if (!v.isString())
        invalid(QString("'%1' must be a string").arg(join(path, field)));
    return v.toString();
}

uint32_t requireUInt(const QJsonObject& o, const char* field, const QString& path, qint64 max) {
    const QJsonValue v = o.value(field);
    const double d = v.toDouble(-1);
    if (!v.isDouble() || d < 0 || d > double(max) || d != double(qint64(d)))
        invalid(QString("'%1' must be an integer from 0 to %2").arg(join(path, field)).arg(max));
    return uint32_t(d);
}

bool optionalBool(const QJsonObject& o, const char* field, const QString& path, bool fallback) {
    const QJsonValue v = o.value(field);
    if (v.isUndefined() || v.isNull())
        return fallback;
    if (!v.isBool())
        invalid(QString("'%1' must be a boolean").arg(join(path, field)));
    return v.toBool();
}

std::string documentPath(const ServerContext& server, const QString& uriOrPath,
                         const QString& field) {
    std::string path;
    if (uriOrPath.startsWith('/')) {
        path = uriOrPath.toStdString();
    } else {
        std::optional<std::string> local = uriToPath(uriOrPath);
        if (!local)
            invalid(QString("'%1' must be a file:// URI, not '%2'").arg(field, uriOrPath));
        path = *local;
    }
    // The store holds physical paths (compile_db.h): resolve symlinks and ".." the same way.
    path = canonicalPath(absolutePath(path, "/"));
    const std::string& root = server.root;
    const bool inside = path == root || (path.size() > root.size() && path.starts_with(root) &&
                                         (root.back() == '/' || path[root.size()] == '/'));
    if (!inside)
        invalid(QString("'%1' is outside the indexed root '%2'")
                    .arg(QString::fromStdString(path), QString::fromStdString(root)));
    return path;
}

std::string textDocumentPath(const ServerContext& server, const QJsonObject& params) {
    const QJsonObject doc = requireObject(params, "textDocument", "");
    return documentPath(server, requireString(doc, "uri", "textDocument"), "textDocument.uri");
}

/// The request's document path, resolved on the first call and kept in `ctx`.
static const std::string& requestDocument(RequestContext& ctx, const QJsonObject& params) {
    if (ctx.document.empty())
        ctx.document = textDocumentPath(ctx.server, params);
    return ctx.document;
}

StoreSnapshot documentSnapshot(RequestContext& ctx, const QJsonValue& params) {
    const std::string& path = requestDocument(ctx, paramsObject(params));
    const bool ready = ctx.server.indexer.awaitDocument(
        path, ctx.mayWait ? kDocumentWait : std::chrono::milliseconds(0),
        ctx.server.maxDocumentWaits);
    if (!ready && !ctx.mayWait)
        throw NeedsWorker{};
    return ctx.server.store.snapshot();
}

std::optional<std::string> symbolName(const StoreSnapshot& snapshot, uint64_t usrHash) {
    return snapshot.nameOf(usrHash);
}

CursorQuery cursorQuery(RequestContext& ctx, const QJsonValue& params, PositionMapper& mapper,
                        const StoreSnapshot& snapshot, bool leftOfParenthesis) {
    const QJsonObject p = paramsObject(params);
    CursorQuery query;
    query.path = requestDocument(ctx, p);
    const QJsonObject position = requireObject(p, "position", "");
    const uint32_t line = requireUInt(position, "line", "position", INT32_MAX - 1);
    const uint32_t character = requireUInt(position, "character", "position", INT32_MAX - 1);
    Position cursor = mapper.fromLsp(query.path, line, character);
    const std::string_view lineText = mapper.lines().line(query.path, cursor.line);
    if (leftOfParenthesis) {
        std::optional<Position> paren = onParenthesisBefore(lineText, cursor);
        if (!paren)
            return query;
        cursor = *paren;
    }
    // A name starts on the cursor's line (symbolAt()): only that line's rows are read.
    std::optional<std::vector<Symbol>> symbols =
        snapshot.fileSymbolsInLines(query.path, cursor.line, cursor.line);
    std::optional<std::vector<Reference>> refs =
        snapshot.fileReferencesInLines(query.path, cursor.line, cursor.line);
    if (!symbols && !refs)
        return query; // a file the store does not know: no answer, not an error
    query.target = symbolAt(
        symbols.value_or(std::vector<Symbol>{}), refs.value_or(std::vector<Reference>{}), cursor,
        [&](uint64_t usr) { return symbolName(snapshot, usr); }, lineText);
    return query;
}

int lspSymbolKind(SymbolKind kind) {
    // LSP SymbolKind: Namespace 3, Class 5, Method 6, Field 8, Constructor 9, Enum 10,
    // Interface 11, Function 12, Variable 13, Constant 14, EnumMember 22, Struct 23.
    switch (kind) {
    case SymbolKind::Namespace:
    case SymbolKind::NamespaceAlias:
        return 3;
    case SymbolKind::Class:
    case SymbolKind::Union:
    case SymbolKind::Typedef:
    case SymbolKind::TypeAlias:
        return 5;
    case SymbolKind::Struct:
        return 23;
    case SymbolKind::Enum:
        return 10;
    case SymbolKind::EnumConstant:
        return 22;
    case SymbolKind::Function:
        return 12;
    case SymbolKind::Method:
    case SymbolKind::StaticMethod:
    case SymbolKind::ConversionFunction:
        return 6;
    case SymbolKind::Constructor:
    case SymbolKind::Destructor:
        return 9;
    case SymbolKind::Field:
        return 8;
    case SymbolKind::Concept:
        return 11;
    case SymbolKind::Macro:
        return 14;
    case SymbolKind::Variable:
    case SymbolKind::StaticMember:
    case SymbolKind::Unknown:
        return 13;
    }
    return 13;
}

} // namespace symdex::daemon
