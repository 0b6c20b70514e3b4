// `symdex find/def/refs/symbols/stats`: queries on the store, printed as `path:line:col: ...`
// lines (so editors and terminals can jump) or, with --json, as JSON. find/def/refs/symbols ask
// the daemon when one serves the store (cli/query_backend.h); the printing is the same.
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/query_backend.h"
#include "cli/query_format.h"
#include "indexer/compile_db.h"
#include "store/encoding.h"
#include "store/outline.h"
#include "store/store_dump.h"
#include "store/symbol_store.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <streambuf>
#include <unordered_map>

namespace symdex::cli {

namespace {

std::unique_ptr<SymbolStore> openStore(const QCommandLineParser& parser) {
    StoreOptions options;
    options.directory = storeDirectory(parser);
    options.readOnly = true;
    return SymbolStore::open(options);
}

/// The best description of a symbol: a definition, else its first declaration.
std::optional<SymbolHit> describe(const std::vector<SymbolHit>& occurrences) {
    for (const SymbolHit& hit : occurrences)
        if (hit.symbol.isDefinition())
            return hit;
    if (occurrences.empty())
        return std::nullopt;
    return occurrences.front();
}

void printOutline(const std::vector<OutlineNode>& nodes, const std::string& path, int depth) {
    for (const OutlineNode& node : nodes) {
        const Symbol& s = node.symbol;
        std::printf("%s: %*s%s %s%s\n", location(path, s.location).c_str(), depth * 2, "",
                    kindDisplayName(s.kind, s.flags).c_str(), s.name.c_str(),
                    s.isDefinition() ? "" : " (declaration)");
        printOutline(node.children, path, depth + 1);
    }
}

QJsonArray outlineJson(const std::vector<OutlineNode>& nodes, const std::string& path) {
    QJsonArray out;
    for (const OutlineNode& node : nodes) {
        QJsonObject o = symbolJson(node.symbol, path);
        o.remove("path");
        if (!node.children.empty())
            o["children"] = outlineJson(node.children, path);
        out.append(o);
    }
    return out;
}

/// stdout as a std::ostream, for `dump`. Not std::cout: <iostream>'s static initialiser ran in
/// every command's start-up: ~10 of `symdex def`'s ~400 page faults, each 12-45 us on the
/// virtual machine measured (bench/fault_cost).
class StdoutBuffer : public std::streambuf {
protected:
    int_type overflow(int_type c) override {
        return traits_type::eq_int_type(c, traits_type::eof()) || std::fputc(c, stdout) != EOF
                   ? traits_type::not_eof(c)
                   : traits_type::eof();
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        return std::streamsize(std::fwrite(s, 1, size_t(n), stdout));
    }
};

} // namespace

int runFind(const QStringList& args, const OpenBackend& open) {
    QCommandLineParser parser;
    parser.addPositionalArgument(
        "PATTERN", "Part of a symbol name, case-insensitive (A::b matches qualified names).");
    parser.addOption(QCommandLineOption("limit", "At most N symbols (default 50).", "N", "50"));
    addJsonOption(parser);
    addStoreOption(parser);
    addDaemonOption(parser);
    if (!parseCommandLine(
            parser, args,
            "Find symbols by name: exact matches first, then prefixes, word starts (glps for "
            "GetLengthPrefixedSlice), then substrings."))
        return kExitOk;
    const QString pattern = positional(parser, "PATTERN");
    bool ok = false;
    const int limit = parser.value("limit").toInt(&ok);
    if (!ok || limit < 1)
        throw UsageError{"--limit needs a positive number"};
    auto store = open(parser);
    const std::vector<NameMatch> matches = store->findSymbols(pattern.toStdString(), size_t(limit));
    if (parser.isSet("json")) {
        static const char* ranks[] = {"exact", "prefix", "word-start", "substring"};
        QJsonArray out;
        for (const NameMatch& m : matches) {
            QJsonObject o = symbolJson(m.best.symbol, m.best.path);
            o["rank"] = ranks[int(m.rank)];
            o["occurrences"] = int(m.occurrences);
            out.append(o);
        }
        printJson(QJsonDocument(out));
    } else {
        for (const NameMatch& m : matches)
            std::printf("%s: %s %s\n", location(m.best.path, m.best.symbol.location).c_str(),
                        kindDisplayName(m.best.symbol.kind, m.best.symbol.flags).c_str(),
                        m.best.symbol.qualifiedName.c_str());
    }
    return matches.empty() ? kExitNotFound : kExitOk;
}

int runDef(const QStringList& args, const OpenBackend& open) {
    QCommandLineParser parser;
    parser.addPositionalArgument("NAME|USR",
                                 "A name (Open, DB::Open, leveldb::DB::Open) or a USR (c:@N@...).");
    parser.addOption(
        QCommandLineOption("all", "Print every declaration too, not only definitions."));
    addJsonOption(parser);
    addStoreOption(parser);
    addDaemonOption(parser);
    if (!parseCommandLine(
            parser, args,
            "Print where a symbol is defined (its declarations when it has no definition)."))
        return kExitOk;
    const QString name = positional(parser, "NAME or USR");
    auto store = open(parser);
    QJsonArray json;
    size_t printed = 0;
    for (uint64_t usr : resolve(*store, name)) {
        const std::vector<SymbolHit> hits = store->occurrences(usr);
        const bool hasDefinition = std::any_of(
            hits.begin(), hits.end(), [](const SymbolHit& h) { return h.symbol.isDefinition(); });
        for (const SymbolHit& hit : hits) {
            if (hasDefinition && !hit.symbol.isDefinition() && !parser.isSet("all"))
                continue;
            ++printed;
            if (parser.isSet("json")) {
                json.append(symbolJson(hit.symbol, hit.path));
                continue;
            }
            std::printf("%s: %s %s%s\n", location(hit.path, hit.symbol.location).c_str(),
                        kindDisplayName(hit.symbol.kind, hit.symbol.flags).c_str(),
                        hit.symbol.qualifiedName.c_str(),
                        hit.symbol.isDefinition() ? "" : " (declaration)");
        }
    }
    if (parser.isSet("json"))
        printJson(QJsonDocument(json));
    else if (!printed)
        std::fprintf(stderr, "no symbol named '%s'\n", qPrintable(name));
    return printed ? kExitOk : kExitNotFound;
}

int runRefs(const QStringList& args, const OpenBackend& open) {
    QCommandLineParser parser;
    parser.addPositionalArgument("NAME|USR",
                                 "A name (Open, DB::Open, leveldb::DB::Open) or a USR (c:@N@...).");
    parser.addOption(QCommandLineOption("decls", "Also list declarations and definitions."));
    addJsonOption(parser);
    addStoreOption(parser);
    addDaemonOption(parser);
    if (!parseCommandLine(parser, args, "Print every reference to a symbol."))
        return kExitOk;
    const QString name = positional(parser, "NAME or USR");
    auto store = open(parser);
    const std::vector<uint64_t> usrs = resolve(*store, name);
    QJsonArray json;
    SourceLines lines;
    size_t printed = 0;
    for (uint64_t usr : usrs) {
        const std::vector<SymbolHit> decls = store->occurrences(usr);
        const std::optional<SymbolHit> symbol = describe(decls);
        const std::string qualified = symbol ? symbol->symbol.qualifiedName : name.toStdString();
        // (position, role, path) rows of this symbol, declarations merged in when asked.
        struct Row {
            std::string path;
            Position pos;
            std::string role;
        };
        std::vector<Row> rows;
        for (const ReferenceHit& ref : store->references(usr))
            rows.push_back({ref.path, ref.reference.location, roleName(ref.reference.roles)});
        if (parser.isSet("decls"))
            for (const SymbolHit& d : decls)
                rows.push_back({d.path, d.symbol.location,
                                d.symbol.isDefinition() ? "definition" : "declaration"});
        std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
            return std::tie(a.path, a.pos) < std::tie(b.path, b.pos);
        });
        if (!parser.isSet("json") && usrs.size() > 1 && !rows.empty())
            std::printf("# %s (%s, %zu)\n", qualified.c_str(),
                        symbol ? kindDisplayName(symbol->symbol.kind, symbol->symbol.flags).c_str()
                               : "?",
                        rows.size());
        for (const Row& row : rows) {
            ++printed;
            if (parser.isSet("json")) {
                QJsonObject o;
                o["qualifiedName"] = qs(qualified);
                if (symbol)
                    o["usr"] = qs(symbol->symbol.usr);
                o["path"] = qs(row.path);
                o["line"] = int(row.pos.line);
                o["column"] = int(row.pos.column);
                o["role"] = qs(row.role);
                json.append(o);
            } else {
                std::printf("%s: %s: %s\n", location(row.path, row.pos).c_str(), row.role.c_str(),
                            lines.line(row.path, row.pos.line).c_str());
            }
        }
    }
    if (parser.isSet("json"))
        printJson(QJsonDocument(json));
    else if (!printed)
        std::fprintf(stderr, usrs.empty() ? "no symbol named '%s'\n" : "no references to '%s'\n",
                     qPrintable(name));
    return printed ? kExitOk : kExitNotFound;
}

int runSymbols(const QStringList& args, const OpenBackend& open) {
    QCommandLineParser parser;
    parser.addPositionalArgument("FILE", "A source file or header in the store.");
    addJsonOption(parser);
    addStoreOption(parser);
    addDaemonOption(parser);
    if (!parseCommandLine(parser, args, "Print the outline of a file: its declarations, nested."))
        return kExitOk;
    const std::string path = std::filesystem::absolute(positional(parser, "FILE").toStdString())
                                 .lexically_normal()
                                 .string();
    auto store = open(parser);
    std::optional<std::vector<Symbol>> symbols = store->fileSymbols(path);
    if (!symbols) {
        std::fprintf(stderr, "'%s' is not in the store\n", path.c_str());
        return kExitNotFound;
    }
    const std::vector<OutlineNode> outline = buildOutline(std::move(*symbols));
    if (parser.isSet("json"))
        printJson(QJsonDocument(outlineJson(outline, path)));
    else
        printOutline(outline, path, 0);
    return outline.empty() ? kExitNotFound : kExitOk;
}

int runDump(const QStringList& args) {
    QCommandLineParser parser;
    addStoreOption(parser);
    if (!parseCommandLine(parser, args,
                          "Print everything the store holds, in a canonical order (compare two "
                          "stores with diff)."))
        return kExitOk;
    auto store = openStore(parser);
    StdoutBuffer buffer;
    std::ostream out(&buffer);
    dumpStore(*store, out, std::filesystem::current_path());
    out.flush();
    return kExitOk;
}

int runStats(const QStringList& args) {
    QCommandLineParser parser;
    parser.addOption(
        QCommandLineOption("errors", "List the TUs that had errors, failed or crashed."));
    parser.addOption(QCommandLineOption(
        "slowest", "List the N TUs whose last parse took longest, with its wall time.", "N"));
    addJsonOption(parser);
    addStoreOption(parser);
    if (!parseCommandLine(parser, args, "Print what the store holds."))
        return kExitOk;
    if (!parser.positionalArguments().isEmpty())
        throw UsageError{"stats takes no positional arguments"};
    auto store = openStore(parser);
    const StoreSnapshot snapshot = store->snapshot(); // the figures and the lists agree
    const StoreStats st = snapshot.stats();
    std::vector<std::pair<std::string, TuRecord>> failing;
    std::vector<FileRecord> headers; // with errors in them, as their owner's parse saw them
    if (parser.isSet("errors")) {
        std::set<std::string> mainFiles;
        snapshot.forEachTu([&](const std::string& path, const TuRecord& tu) {
            mainFiles.insert(path);
            if (tu.status != TuStatus::Ok)
                failing.emplace_back(path, tu);
        });
        snapshot.forEachFile([&](uint32_t, const FileRecord& file) {
            if (file.errorCount > 0 && !mainFiles.contains(file.path))
                headers.push_back(file);
        });
        std::sort(headers.begin(), headers.end(),
                  [](const FileRecord& a, const FileRecord& b) { return a.path < b.path; });
    }
    std::vector<std::pair<std::string, uint32_t>> slowest; // path, parse milliseconds
    if (parser.isSet("slowest")) {
        bool ok = false;
        const int n = parser.value("slowest").toInt(&ok);
        if (!ok || n < 1)
            throw UsageError{"--slowest takes a positive number, not '" +
                             parser.value("slowest").toStdString() + "'"};
        snapshot.forEachTu([&](const std::string& path, const TuRecord& tu) {
            slowest.emplace_back(path, tu.parseMillis);
        });
        std::sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) {
            return a.second != b.second ? a.second > b.second : a.first < b.first;
        });
        if (slowest.size() > size_t(n))
            slowest.resize(size_t(n));
    }
    if (parser.isSet("json")) {
        QJsonObject o;
        o["store"] = qs(store->directory().string());
        o["formatVersion"] = int(st.formatVersion);
        o["files"] = qint64(st.files);
        o["tus"] = qint64(st.tus);
        o["tusWithErrors"] = qint64(st.tusWithErrors);
        o["tusFailed"] = qint64(st.tusFailed);
        o["symbols"] = qint64(st.symbols);
        o["references"] = qint64(st.references);
        o["distinctNames"] = qint64(st.distinctNames);
        o["diskBytes"] = qint64(st.diskBytes);
        o["mapBytes"] = qint64(st.mapSize);
        if (parser.isSet("errors")) {
            QJsonArray errors;
            for (const auto& [path, tu] : failing)
                errors.append(QJsonObject{{"path", qs(path)},
                                          {"status", qs(std::string(tuStatusName(tu.status)))},
                                          {"errors", int(tu.errorCount)},
                                          {"firstError", qs(tu.firstError)}});
            o["failingTus"] = errors;
            QJsonArray headerErrors;
            for (const FileRecord& f : headers)
                headerErrors.append(QJsonObject{{"path", qs(f.path)},
                                                {"errors", int(f.errorCount)},
                                                {"firstError", qs(f.firstError)}});
            o["headersWithErrors"] = headerErrors;
        }
        if (parser.isSet("slowest")) {
            QJsonArray tus;
            for (const auto& [path, millis] : slowest)
                tus.append(QJsonObject{{"path", qs(path)}, {"parseMillis", qint64(millis)}});
            o["slowestTus"] = tus;
        }
        printJson(QJsonDocument(o));
        return kExitOk;
    }
    std::printf("store: %s (format %u), %.1f MiB on disk, map %.0f MiB\n",
                displayPath(store->directory().string()).c_str(), st.formatVersion,
                double(st.diskBytes) / (1 << 20), double(st.mapSize) / (1 << 20));
    std::printf("files: %s  TUs: %s (%zu with errors, %zu failed or crashed)\n",
                withThousands(st.files).c_str(), withThousands(st.tus).c_str(), st.tusWithErrors,
                st.tusFailed);
    std::printf("symbols: %s  references: %s  distinct names: %s\n",
                withThousands(st.symbols).c_str(), withThousands(st.references).c_str(),
                withThousands(st.distinctNames).c_str());
    for (const auto& [path, tu] : failing)
        std::printf("%s: %s, %u errors%s%s\n", displayPath(path).c_str(),
                    std::string(tuStatusName(tu.status)).c_str(), tu.errorCount,
                    tu.firstError.empty() ? "" : "; first: ", tu.firstError.c_str());
    for (const FileRecord& f : headers)
        std::printf("%s: header, %u errors; first: %s\n", displayPath(f.path).c_str(), f.errorCount,
                    f.firstError.c_str());
    for (const auto& [path, millis] : slowest)
        std::printf("%8.2f s  %s\n", millis / 1000.0, displayPath(path).c_str());
    return kExitOk;
}

} // namespace symdex::cli
