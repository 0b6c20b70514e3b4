// name_search_bench: name search at millions of names, on the store alone (no parsing): writes
// N distinct camelCase, PascalCase and snake_case names built from a vocabulary of words into a
// fresh store, then times StoreSnapshot::findSymbols for six kinds of query, and for names typed
// a letter at a time. A benchmark program: it prints figures and asserts nothing.
//
//   name_search_bench --names 2000000 [--store DIR] [--queries 50] [--limit 100]
//
// Prints the write time, data.mdb's size, and per kind of query p50/p99 latency and the mean
// number of answers.
#include "store/symbol_store.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace symdex;

namespace {

const char* const kWords[] = {
    "get",     "set",     "read",    "write",    "flush",  "buffer",  "length",   "prefixed",
    "slice",   "record",  "reader",  "writer",   "block",  "size",    "file",     "name",
    "table",   "cache",   "key",     "value",    "open",   "close",   "create",   "delete",
    "remove",  "insert",  "find",    "lookup",   "index",  "count",   "next",     "prev",
    "first",   "last",    "begin",   "end",      "start",  "stop",    "run",      "iterator",
    "compare", "compact", "merge",   "split",    "parse",  "format",  "encode",   "decode",
    "string",  "number",  "offset",  "limit",    "range",  "level",   "version",  "snapshot",
    "options", "status",  "error",   "result",   "handle", "manager", "builder",  "filter",
    "policy",  "env",     "thread",  "mutex",    "lock",   "queue",   "list",     "map",
    "node",    "tree",    "hash",    "bloom",    "log",    "batch",   "sequence", "number",
    "memory",  "arena",   "pool",    "alloc",    "free",   "copy",    "move",     "swap",
    "reset",   "clear",   "update",  "apply",    "commit", "abort",   "sync",     "async",
    "send",    "receive", "request", "response", "server", "client",  "socket",   "stream",
    "input",   "output",  "path",    "dir",      "config", "default", "max",      "min",
    "total",   "current", "pending", "active",   "valid",  "empty",   "full",     "data",
};

/// The vocabulary: the words above and made-up ones, as a large project's identifiers use far
/// more words than any list.
std::vector<std::string> vocabulary(std::mt19937_64& rng) {
    std::vector<std::string> words(std::begin(kWords), std::end(kWords));
    const char* syllables[] = {"ba", "ce", "di", "fo", "gu", "ha", "ke", "li", "mo", "nu",
                               "pa", "re", "si", "to", "vu", "wa", "xe", "yo", "za", "qu"};
    std::set<std::string> seen(words.begin(), words.end());
    while (words.size() < 3000) {
        std::string w;
        for (int i = 0, n = 2 + int(rng() % 2); i < n; ++i)
            w += syllables[rng() % std::size(syllables)];
        if (seen.insert(w).second)
            words.push_back(w);
    }
    return words;
}

std::string spell(const std::vector<std::string>& parts, int style) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        std::string w = parts[i];
        if (style == 2) { // snake_case
            out += (i ? "_" : "") + w;
            continue;
        }
        if (i > 0 || style == 1)
            w[0] = char(w[0] - 'a' + 'A');
        out += w;
    }
    return out;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

} // namespace

int main(int argc, char** argv) {
    size_t names = 300000, queries = 50, limit = 100;
    bool reuse = false; // --reuse 1: query the store a previous run wrote
    int only = -1;      // --only K: the K-th kind of query alone (for a profiler)
    size_t repeat = 1;  // --repeat R: every query R times
    std::filesystem::path store = "/tmp/name-search-bench";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--names"))
            names = std::stoul(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--store"))
            store = argv[i + 1];
        else if (!std::strcmp(argv[i], "--queries"))
            queries = std::stoul(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--limit"))
            limit = std::stoul(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--repeat"))
            repeat = std::stoul(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--only"))
            only = std::stoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reuse"))
            reuse = std::strcmp(argv[i + 1], "0") != 0;
    }
    std::mt19937_64 rng(1);
    const std::vector<std::string> words = vocabulary(rng);
    std::vector<std::vector<std::string>> parts;
    std::vector<std::string> spelled;
    std::set<std::string> distinct;
    while (spelled.size() < names) {
        std::vector<std::string> p;
        for (int i = 0, n = 2 + int(rng() % 3); i < n; ++i)
            p.push_back(words[std::min(rng() % words.size(), rng() % words.size())]);
        std::string name = spell(p, int(rng() % 3));
        if (distinct.insert(name).second) {
            parts.push_back(p);
            spelled.push_back(name);
        }
    }

    StoreOptions options;
    options.directory = store;
    const auto start = std::chrono::steady_clock::now();
    if (!reuse) {
        std::filesystem::remove_all(store);
        auto s = SymbolStore::open(options);
        constexpr size_t kPerFile = 500;
        for (size_t first = 0; first < spelled.size(); first += kPerFile) {
            IndexedTu tu;
            tu.mainFile = "/synthetic/file_" + std::to_string(first / kPerFile) + ".cc";
            tu.record.commandHash = 1;
            IndexedFile f;
            f.file.path = tu.mainFile;
            f.file.contentHash = 1 + first;
            for (size_t i = first; i < std::min(spelled.size(), first + kPerFile); ++i) {
                Symbol sym;
                sym.name = spelled[i];
                sym.qualifiedName = "ns" + std::to_string(i % 97) + "::" + spelled[i];
                sym.usr = "c:@N@ns@F@" + spelled[i] + "#";
                sym.kind = SymbolKind::Function;
                sym.flags = (i % 3) ? kDefinition : 0;
                sym.location = {uint32_t(i - first + 1), 5};
                sym.extent = {{uint32_t(i - first + 1), 1}, {uint32_t(i - first + 1), 40}};
                f.symbols.push_back(std::move(sym));
            }
            tu.files.push_back(std::move(f));
            s->publish(std::move(tu));
        }
        s->flush();
    }
    const double writeSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%zu names, %zu words: written in %.1f s, data.mdb %.1f MiB\n", spelled.size(),
                words.size(), writeSeconds,
                double(std::filesystem::file_size(store / "data.mdb")) / (1 << 20));

    options.readOnly = true;
    auto s = SymbolStore::open(options);
    struct Kind {
        const char* name;
        std::vector<std::string> queries;
    };
    std::vector<Kind> kinds = {{"1-2 letter prefix", {}},       {"common word", {}},
                               {"rare exact name", {}},         {"mid-name substring", {}},
                               {"word-start abbrev.", {}},      {"no match", {}},
                               {"typed a letter at a time", {}}};
    std::mt19937_64 pick(7);
    for (size_t q = 0; q < queries; ++q) {
        const size_t i = pick() % spelled.size();
        const std::vector<std::string>& p = parts[i];
        kinds[0].queries.push_back(spelled[i].substr(0, 1 + q % 2));
        kinds[1].queries.push_back(kWords[pick() % 40]);
        kinds[2].queries.push_back(spelled[i]);
        const std::string joined = p[0] + p[1];
        kinds[3].queries.push_back(joined.substr(1, std::min<size_t>(6, joined.size() - 1)));
        std::string abbrev;
        for (const std::string& w : p)
            abbrev += w.substr(0, q % 3 ? 1 : 3);
        kinds[4].queries.push_back(abbrev);
        std::string none;
        for (int k = 0; k < 5; ++k)
            none += char('a' + pick() % 26);
        kinds[5].queries.push_back(none + "zq");
        // An editor's symbol search as its user types a name: each of the first 8 prefixes,
        // one query per keystroke (successive answers share most of their declarations).
        if (q % 4 == 0)
            for (size_t k = 1; k <= std::min<size_t>(8, spelled[i].size()); ++k)
                kinds[6].queries.push_back(spelled[i].substr(0, k));
    }
    std::printf("%-26s %10s %10s %10s\n", "query", "p50 ms", "p99 ms", "answers");
    for (const Kind& kind : kinds) {
        if (only >= 0 && &kind != &kinds[size_t(only)])
            continue;
        std::vector<double> ms;
        size_t answers = 0;
        for (size_t r = 0; r < repeat; ++r)
            for (const std::string& query : kind.queries) {
                const auto t = std::chrono::steady_clock::now();
                answers += s->findSymbols(query, limit).size();
                ms.push_back(
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t)
                        .count());
            }
        std::printf("%-26s %10.2f %10.2f %10.1f\n", kind.name, percentile(ms, 0.5),
                    percentile(ms, 0.99), double(answers) / double(kind.queries.size()));
    }
    return 0;
}
