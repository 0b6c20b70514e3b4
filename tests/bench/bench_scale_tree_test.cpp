// The trees of scale_bench: deterministic bytes for a seed, a database listing every TU, the names
// asked for and declared in the headers, and queries that find what their kind promises. The
// rules each kind is checked by are written here again, apart from the generator's own draws.
#include "bench/scale_tree.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>

using namespace symdex;
using namespace symdex::bench;
using symdex::test::TempDir;

namespace {

/// Two modules of four TUs: includes and calls cross modules.
const ScaleSpec kSpec{3000, 7};

/// Every file of the tree, by path relative to the root, with its contents.
std::map<std::string, std::string> snapshot(const std::filesystem::path& root) {
    std::map<std::string, std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
        if (entry.is_regular_file())
            files[std::filesystem::relative(entry.path(), root).string()] =
                test::readFile(entry.path());
    return files;
}

std::string lower(std::string text) {
    for (char& c : text)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

/// A name's words, lower case: split at underscores and before capitals.
std::vector<std::string> words(const std::string& name) {
    std::vector<std::string> out;
    for (size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '_')
            continue;
        if (i == 0 || name[i - 1] == '_' || std::isupper(static_cast<unsigned char>(name[i])))
            out.emplace_back();
        out.back() += char(std::tolower(static_cast<unsigned char>(name[i])));
    }
    return out;
}

bool wordStart(const std::string& name, size_t i) {
    return i == 0 || name[i - 1] == '_' || std::isupper(static_cast<unsigned char>(name[i]));
}

/// Whether `query` from `at` is successive prefixes of the words from `word` on (words may be
/// skipped): "glps" and "flubuf" of GetLengthPrefixedSlice and flushBufferRecord.
bool abbreviates(const std::string& query, size_t at, const std::vector<std::string>& ws,
                 size_t word) {
    if (at == query.size())
        return true;
    for (size_t w = word; w < ws.size(); ++w)
        for (size_t n = 1; n <= ws[w].size() && at + n <= query.size(); ++n) {
            if (ws[w].compare(0, n, query, at, n) != 0)
                break;
            if (abbreviates(query, at + n, ws, w + 1))
                return true;
        }
    return false;
}

/// Whether `name` answers `query` of `kind`, by the kind's rule.
bool answers(QueryKind kind, const std::string& query, const std::string& name) {
    const std::string q = lower(query), n = lower(name);
    switch (kind) {
    case QueryKind::ShortPrefix:
        return n.starts_with(q);
    case QueryKind::CommonWord: {
        const auto ws = words(name);
        return std::find(ws.begin(), ws.end(), q) != ws.end();
    }
    case QueryKind::RareExact:
        return n == q;
    case QueryKind::MidNameSubstring:
        for (size_t at = n.find(q); at != std::string::npos; at = n.find(q, at + 1))
            if (!wordStart(name, at))
                return true;
        return false;
    case QueryKind::WordStartAbbreviation:
        return abbreviates(q, 0, words(name), 0);
    case QueryKind::NoMatch: { // as a subsequence, the loosest rule a fuzzy matcher has
        size_t i = 0;
        for (char c : n)
            i += i < q.size() && c == q[i];
        return i == q.size();
    }
    }
    return false;
}

} // namespace

TEST_CASE("scale tree: the same names and seed write the same bytes", "[bench][scale]") {
    TempDir dir;
    const ScaleTree tree = generateScaleTree(kSpec, dir.path() / "tree");
    const auto first = snapshot(tree.root);
    generateScaleTree(kSpec, dir.path() / "tree"); // regenerated over the first
    CHECK(snapshot(tree.root) == first);

    // Elsewhere only the files naming the root differ.
    auto moved = snapshot(generateScaleTree(kSpec, dir.path() / "other").root);
    auto original = first;
    for (const char* file : {"compile_commands.json", "scale-tree.stamp"})
        CHECK((moved.erase(file) == 1 && original.erase(file) == 1));
    CHECK(moved == original);

    const auto reseeded = snapshot(generateScaleTree({kSpec.names, 8}, dir.path() / "b").root);
    CHECK(reseeded.size() == first.size());
    CHECK(reseeded != first);
}

TEST_CASE("scale tree: a tree on disk is reused for its own spec only", "[bench][scale]") {
    TempDir dir;
    const ScaleTree tree = generateScaleTree(kSpec, dir.path() / "tree");
    const std::optional<ScaleTree> again = existingScaleTree(kSpec, dir.path() / "tree");
    REQUIRE(again);
    CHECK(again->names == tree.names);
    CHECK(again->sources == tree.sources);
    CHECK(again->nameOccurrences == tree.nameOccurrences);
    CHECK_FALSE(existingScaleTree({kSpec.names, 8}, dir.path() / "tree"));
    CHECK_FALSE(existingScaleTree({kSpec.names + 1, kSpec.seed}, dir.path() / "tree"));
    CHECK_FALSE(existingScaleTree(kSpec, dir.path() / "nowhere"));
}

TEST_CASE("scale tree: the database lists every TU", "[bench][scale]") {
    TempDir dir;
    const ScaleTree tree = generateScaleTree(kSpec, dir.path() / "tree");
    CHECK(tree.sources.size() == 8);
    CHECK(tree.headers == 2);
    const QJsonArray entries =
        QJsonDocument::fromJson(QByteArray::fromStdString(test::readFile(tree.database))).array();
    std::set<std::string> listed;
    for (const QJsonValue& entry : entries) {
        CHECK(entry["directory"].toString().toStdString() == tree.root.string());
        listed.insert(entry["file"].toString().toStdString());
    }
    std::set<std::string> onDisk;
    for (const auto& [path, text] : snapshot(tree.root))
        if (path.ends_with(".cpp"))
            onDisk.insert(path);
    CHECK(size_t(entries.size()) == tree.sources.size());
    CHECK(listed == std::set<std::string>(tree.sources.begin(), tree.sources.end()));
    CHECK(listed == onDisk);
}

TEST_CASE("scale tree: the names asked for, distinct, each declared and used", "[bench][scale]") {
    TempDir dir;
    for (size_t asked : {size_t(300), kSpec.names}) {
        const ScaleTree tree = generateScaleTree({asked, 1}, dir.path() / "tree");
        CHECK(tree.names.size() >= asked * 95 / 100);
        CHECK(tree.names.size() <= asked * 105 / 100);
        std::set<std::string> distinct;
        for (const std::string& name : tree.names)
            distinct.insert(lower(name));
        CHECK(distinct.size() == tree.names.size());

        // Every identifier in the headers, beside the language's and the parameter's, is a
        // generated name, and every generated name is declared there.
        const std::set<std::string> fixed = {"pragma", "once", "namespace", "enum", "class",
                                             "struct", "int",  "const",     "value"};
        std::set<std::string> declared;
        const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
        for (const auto& [path, text] : snapshot(tree.root)) {
            if (!path.ends_with(".h"))
                continue;
            std::string code;
            std::istringstream lines(text);
            for (std::string line; std::getline(lines, line);)
                if (!line.starts_with("//") && !line.starts_with("} //"))
                    code += line + "\n";
            for (std::sregex_iterator it(code.begin(), code.end(), identifier), end; it != end;
                 ++it)
                if (!fixed.contains(it->str()))
                    declared.insert(it->str());
        }
        CHECK(declared == std::set<std::string>(tree.names.begin(), tree.names.end()));
        // About 5 occurrences a name: declaration, definition and calls.
        const double perName = double(tree.nameOccurrences) / double(tree.names.size());
        CHECK(perName > 3);
        CHECK(perName < 10);
    }
}

TEST_CASE("scale tree: each query finds names by its kind's rule, no match none",
          "[bench][scale]") {
    TempDir dir;
    const ScaleTree tree = generateScaleTree(kSpec, dir.path() / "tree");
    const std::vector<ScaleQuery> queries = scaleQueries(tree.names, 20, kSpec.seed);
    CHECK(queries == scaleQueries(tree.names, 20, kSpec.seed));
    std::map<QueryKind, size_t> perKind;
    for (const ScaleQuery& q : queries) {
        INFO(queryKindName(q.kind) << ": '" << q.text << "'");
        ++perKind[q.kind];
        const size_t found = size_t(
            std::count_if(tree.names.begin(), tree.names.end(),
                          [&](const std::string& name) { return answers(q.kind, q.text, name); }));
        switch (q.kind) {
        case QueryKind::NoMatch:
            CHECK(found == 0);
            break;
        case QueryKind::RareExact:
            CHECK(found == 1);
            CHECK(words(q.text).size() >= 3);
            break;
        case QueryKind::CommonWord:
            CHECK(found >= tree.names.size() / 200); // in at least 0.5% of the names
            break;
        default:
            CHECK(found >= 1);
        }
        if (q.kind == QueryKind::ShortPrefix)
            CHECK((q.text.size() >= 1 && q.text.size() <= 2));
        if (q.kind == QueryKind::WordStartAbbreviation || q.kind == QueryKind::MidNameSubstring)
            CHECK(q.text.size() >= 3);
    }
    for (QueryKind kind : kQueryKinds)
        CHECK(perKind[kind] == 20);
}
