// `symdex callers/callees/bases/derived/overrides/show`: how symbols relate, from the store or
// through the daemon (QueryBackend::related). Call sites print as `path:line:col: FUNCTION: line`;
// hierarchies as `path:line:col: kind NAME`, indented by level.
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/query_format.h"

#include <QJsonArray>

#include <cstdio>
#include <set>

namespace symdex::cli {

namespace {

void addQueryOptions(QCommandLineParser& parser) {
    parser.addPositionalArgument("NAME|USR",
                                 "A name (Open, DB::Open, leveldb::DB::Open) or a USR (c:@N@...).");
    addJsonOption(parser);
    addStoreOption(parser);
    addDaemonOption(parser);
}

std::string nameOf(const Related& r) {
    return r.symbol ? r.symbol->symbol.qualifiedName : "?";
}

/// "# leveldb::DB::Open (method)" before each symbol's rows when a name stands for several.
void printHeading(QueryBackend& store, uint64_t usr) {
    const std::vector<SymbolHit> hits = store.occurrences(usr);
    if (hits.empty())
        return;
    const Symbol& s = hits.front().symbol;
    std::printf("# %s (%s)\n", s.qualifiedName.c_str(), kindDisplayName(s.kind, s.flags).c_str());
}

/// callers and callees: one row per site, with the function on the other side.
int runSites(const QStringList& args, const OpenBackend& open, Relation relation,
             const char* description) {
    QCommandLineParser parser;
    addQueryOptions(parser);
    if (!parseCommandLine(parser, args, description))
        return kExitOk;
    const QString name = positional(parser, "NAME or USR");
    auto store = open(parser);
    const std::vector<uint64_t> usrs = resolve(*store, name);
    const bool json = parser.isSet("json");
    QJsonArray out;
    SourceLines lines;
    size_t printed = 0;
    for (uint64_t usr : usrs) {
        const std::vector<Related> related = store->related(usr, relation);
        if (!json && usrs.size() > 1 && !related.empty())
            printHeading(*store, usr);
        for (const Related& r : related) {
            for (const ReferenceHit& site : r.sites) {
                ++printed;
                const Position pos = site.reference.location;
                if (json) {
                    QJsonObject o{{"path", qs(site.path)},
                                  {"line", int(pos.line)},
                                  {"column", int(pos.column)},
                                  {"role", qs(roleName(site.reference.roles))}};
                    o[relation == Relation::Callers ? "caller" : "callee"] =
                        r.symbol ? symbolJson(r.symbol->symbol, r.symbol->path)
                                 : QJsonObject{{"qualifiedName", "?"}};
                    out.append(o);
                } else {
                    std::printf("%s: %s: %s\n", location(site.path, pos).c_str(), nameOf(r).c_str(),
                                lines.line(site.path, pos.line).c_str());
                }
            }
        }
    }
    if (json)
        printJson(QJsonDocument(out));
    else if (!printed)
        std::fprintf(stderr, usrs.empty() ? "no symbol named '%s'\n" : "none for '%s'\n",
                     qPrintable(name));
    return printed ? kExitOk : kExitNotFound;
}

/// bases, derived and overrides: the related symbols, level by level down to --depth.
int runHierarchy(const QStringList& args, const OpenBackend& open, Relation down, Relation up,
                 const char* upOption, const char* description) {
    QCommandLineParser parser;
    addQueryOptions(parser);
    parser.addOption(QCommandLineOption(
        "depth", "Follow the relation N levels (default 1; 0: all the way).", "N", "1"));
    if (upOption)
        parser.addOption(QCommandLineOption(upOption, "The other direction."));
    if (!parseCommandLine(parser, args, description))
        return kExitOk;
    const QString name = positional(parser, "NAME or USR");
    bool ok = false;
    const int depthLimit = parser.value("depth").toInt(&ok);
    if (!ok || depthLimit < 0)
        throw UsageError{"--depth needs a number, 0 for no limit"};
    const Relation relation = upOption && parser.isSet(upOption) ? up : down;
    auto store = open(parser);
    const std::vector<uint64_t> usrs = resolve(*store, name);
    const bool json = parser.isSet("json");
    QJsonArray out;
    size_t printed = 0;
    for (uint64_t usr : usrs) {
        std::set<uint64_t> seen{usr}; // each symbol once, whatever the paths to it
        bool headed = false;
        // Depth first, so that each symbol's row comes right above the rows of its own relations.
        auto visit = [&](auto&& self, uint64_t from, int depth) -> void {
            if (depthLimit && depth > depthLimit)
                return;
            for (const Related& r : store->related(from, relation)) {
                if (!seen.insert(r.usrHash).second)
                    continue;
                ++printed;
                const std::string path = r.symbol ? r.symbol->path : r.sites.front().path;
                const Position pos =
                    r.symbol ? r.symbol->symbol.location : r.sites.front().reference.location;
                if (json) {
                    QJsonObject o = r.symbol ? symbolJson(r.symbol->symbol, r.symbol->path)
                                             : QJsonObject{{"qualifiedName", "?"},
                                                           {"path", qs(path)},
                                                           {"line", int(pos.line)},
                                                           {"column", int(pos.column)}};
                    o["depth"] = depth;
                    out.append(o);
                } else {
                    if (!headed && usrs.size() > 1)
                        printHeading(*store, usr);
                    headed = true;
                    std::printf(
                        "%s: %*s%s %s\n", location(path, pos).c_str(), (depth - 1) * 2, "",
                        r.symbol
                            ? kindDisplayName(r.symbol->symbol.kind, r.symbol->symbol.flags).c_str()
                            : "?",
                        nameOf(r).c_str());
                }
                self(self, r.usrHash, depth + 1);
            }
        };
        visit(visit, usr, 1);
    }
    if (json)
        printJson(QJsonDocument(out));
    else if (!printed)
        std::fprintf(stderr, usrs.empty() ? "no symbol named '%s'\n" : "none for '%s'\n",
                     qPrintable(name));
    return printed ? kExitOk : kExitNotFound;
}

} // namespace

int runCallers(const QStringList& args, const OpenBackend& open) {
    return runSites(args, open, Relation::Callers,
                    "Print every call of (and other use in code of) a function, with the "
                    "function or initializer it is in.");
}

int runCallees(const QStringList& args, const OpenBackend& open) {
    return runSites(args, open, Relation::Callees,
                    "Print every call a function's definition makes, with the function called.");
}

int runBases(const QStringList& args, const OpenBackend& open) {
    return runHierarchy(args, open, Relation::Bases, Relation::Bases, nullptr,
                        "Print the base classes of a class.");
}

int runDerived(const QStringList& args, const OpenBackend& open) {
    return runHierarchy(args, open, Relation::Derived, Relation::Derived, nullptr,
                        "Print the classes derived from a class.");
}

int runOverrides(const QStringList& args, const OpenBackend& open) {
    return runHierarchy(args, open, Relation::OverriddenBy, Relation::Overrides, "up",
                        "Print the methods that override a virtual method (--up: the methods it "
                        "overrides).");
}

int runShow(const QStringList& args, const OpenBackend& open) {
    QCommandLineParser parser;
    addQueryOptions(parser);
    if (!parseCommandLine(parser, args,
                          "Print what the store knows of a symbol: kind, signature, comment, "
                          "definition and declarations, and how many symbols relate to it."))
        return kExitOk;
    const QString name = positional(parser, "NAME or USR");
    auto store = open(parser);
    const std::vector<uint64_t> usrs = resolve(*store, name);
    const bool json = parser.isSet("json");
    QJsonArray out;
    size_t printed = 0;
    for (uint64_t usr : usrs) {
        const std::vector<SymbolHit> hits = store->occurrences(usr);
        if (hits.empty())
            continue;
        const SymbolHit* best = &hits.front();
        for (const SymbolHit& hit : hits)
            if (hit.symbol.isDefinition()) {
                best = &hit;
                break;
            }
        Symbol s = best->symbol;
        // The comment of the definition, else of the first declaration that has one.
        for (const SymbolHit& hit : hits)
            if (s.comment.empty() && !hit.symbol.comment.empty())
                s.comment = hit.symbol.comment;
        std::vector<std::pair<const char*, size_t>> counts{
            {"references", store->references(usr).size()}};
        auto count = [&](const char* label, Relation relation) {
            counts.emplace_back(label, store->related(usr, relation).size());
        };
        if (isFunctionLike(s.kind)) {
            count("callers", Relation::Callers);
            count("callees", Relation::Callees);
            count("overrides", Relation::Overrides);
            count("overridden-by", Relation::OverriddenBy);
        } else if (isClassLike(s.kind)) {
            count("bases", Relation::Bases);
            count("derived", Relation::Derived);
        }
        ++printed;
        if (json) {
            QJsonObject o = symbolJson(s, best->path);
            QJsonArray declarations;
            for (const SymbolHit& hit : hits)
                if (&hit != best)
                    declarations.append(symbolJson(hit.symbol, hit.path));
            o["declarations"] = declarations;
            for (const auto& [label, n] : counts)
                o[label] = qint64(n);
            out.append(o);
            continue;
        }
        if (printed > 1)
            std::printf("\n");
        std::printf("%s: %s %s%s\n", location(best->path, s.location).c_str(),
                    kindDisplayName(s.kind, s.flags).c_str(), s.qualifiedName.c_str(),
                    s.isDefinition() ? "" : " (declaration)");
        if (!s.signature.empty())
            std::printf("  signature: %s\n", s.signature.c_str());
        if (!s.comment.empty())
            std::printf("  comment: %s\n", s.comment.c_str());
        for (const SymbolHit& hit : hits)
            if (&hit != best)
                std::printf("  %s: %s\n", hit.symbol.isDefinition() ? "also defined" : "declared",
                            location(hit.path, hit.symbol.location).c_str());
        std::string line = " ";
        for (const auto& [label, n] : counts)
            line += " " + std::string(label) + " " + std::to_string(n);
        std::printf("%s\n", line.c_str());
    }
    if (json)
        printJson(QJsonDocument(out));
    else if (!printed)
        std::fprintf(stderr, "no symbol named '%s'\n", qPrintable(name));
    return printed ? kExitOk : kExitNotFound;
}

} // namespace symdex::cli
