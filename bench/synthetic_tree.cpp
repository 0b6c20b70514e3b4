#include "bench/synthetic_tree.h"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace symdex::bench {

namespace {

/// splitmix64: tiny, and the same numbers on every platform and standard library (the standard
/// distributions are not).
class Random {
public:
    explicit Random(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// 0 .. bound-1 (bound > 0); the modulo bias is irrelevant here.
    size_t below(size_t bound) { return size_t(next() % bound); }

private:
    uint64_t state_;
};

enum class DeclKind { Function, Variable, Struct, Enum };
constexpr size_t kDeclKinds = 4;

/// Symbols each kind adds: a function its parameter, an enum three constants, a struct a field
/// and a method.
size_t symbolsOf(DeclKind kind) {
    switch (kind) {
    case DeclKind::Function:
        return 2;
    case DeclKind::Variable:
        return 1;
    case DeclKind::Struct:
        return 3;
    case DeclKind::Enum:
        return 4;
    }
    return 0;
}

/// One declaration. In a header everything is inline (each TU may include it); a function in a
/// TU calls the first function of a header it includes, so the tree has cross-file references.
std::string declaration(DeclKind kind, size_t index, Random& random, bool header,
                        const std::string& callee) {
    const std::string in = header ? "inline " : "";
    const size_t a = random.below(1000), b = random.below(1000);
    std::ostringstream out;
    switch (kind) {
    case DeclKind::Function:
        out << in << "int f" << index << "(int x) { return "
            << (callee.empty() ? "x" : callee + "(x)") << " * " << a << " + " << b << "; }\n";
        break;
    case DeclKind::Variable:
        out << in << "int v" << index << " = " << a << ";\n";
        break;
    case DeclKind::Struct:
        out << "struct S" << index << " {\n    int value = " << a
            << ";\n    int get() const { return value + " << b << "; }\n};\n";
        break;
    case DeclKind::Enum:
        out << "enum class E" << index << " { a = " << a << ", b, c };\n";
        break;
    }
    return out.str();
}

/// The body of a file: `count` declarations in namespace synth::`inner`. Returns its symbols.
size_t writeDeclarations(std::ostream& out, const std::string& inner, size_t count, Random& random,
                         bool header, const std::string& callee) {
    out << "namespace synth {\nnamespace " << inner << " {\n\n";
    size_t symbols = 2; // the two namespace declarations of this file
    for (size_t i = 0; i < count; ++i) {
        // A header's first declaration is always a function: TUs call it.
        const DeclKind kind =
            header && i == 0 ? DeclKind::Function : DeclKind(random.below(kDeclKinds));
        out << declaration(kind, i, random, header, header ? std::string() : callee);
        symbols += symbolsOf(kind);
    }
    out << "\n} // namespace " << inner << "\n} // namespace synth\n";
    return symbols;
}

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush())
        throw std::runtime_error("cannot write " + path.string());
}

std::string jsonString(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

} // namespace

std::optional<SyntheticSpec> parseSyntheticSpec(const std::string& text, uint64_t seed,
                                                std::string* error) {
    std::vector<size_t> counts;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        size_t used = 0;
        unsigned long long value = 0;
        try {
            value = std::stoull(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || item[0] == '-' || value > 1000000) {
            *error = "'" + item + "' is not a count from 0 to 1000000";
            return std::nullopt;
        }
        counts.push_back(size_t(value));
    }
    if (counts.size() != 3 || counts[0] == 0 || counts[1] == 0) {
        *error = "--synthetic needs FILES,DECLS,SHARED_HEADERS with FILES and DECLS at least 1";
        return std::nullopt;
    }
    return SyntheticSpec{counts[0], counts[1], counts[2], seed};
}

std::string syntheticTreeName(const SyntheticSpec& spec) {
    return "synthetic-" + std::to_string(spec.files) + "-" + std::to_string(spec.declarations) +
           "-" + std::to_string(spec.sharedHeaders) + "-seed-" + std::to_string(spec.seed);
}

SyntheticTree generateSyntheticTree(const SyntheticSpec& spec, const std::filesystem::path& root) {
    SyntheticTree tree;
    tree.root = std::filesystem::absolute(root).lexically_normal();
    tree.database = tree.root / "compile_commands.json";
    std::filesystem::remove_all(tree.root);
    Random random(spec.seed);
    const std::string banner =
        "// Generated by symdex bench --synthetic " + std::to_string(spec.files) + "," +
        std::to_string(spec.declarations) + "," + std::to_string(spec.sharedHeaders) + " --seed " +
        std::to_string(spec.seed) + "\n";
    for (size_t k = 0; k < spec.sharedHeaders; ++k) {
        std::ostringstream out;
        out << banner << "#pragma once\n\n";
        const std::string name = "shared_" + std::to_string(k);
        tree.expectedSymbols +=
            writeDeclarations(out, name, spec.declarations, random, true, std::string());
        writeText(tree.root / "include" / "synth" / (name + ".h"), out.str());
    }
    tree.headers = spec.sharedHeaders;
    std::ostringstream db;
    db << "[\n";
    for (size_t n = 0; n < spec.files; ++n) {
        std::ostringstream out;
        out << banner;
        std::vector<size_t> included;
        for (size_t k = 0; k < spec.sharedHeaders; ++k)
            if (random.below(2) == 0)
                included.push_back(k);
        if (included.empty() && spec.sharedHeaders > 0)
            included.push_back(random.below(spec.sharedHeaders));
        for (size_t k : included)
            out << "#include \"synth/shared_" << k << ".h\"\n";
        const std::string callee =
            included.empty() ? std::string()
                             : "synth::shared_" + std::to_string(included.front()) + "::f0";
        out << "\n";
        const std::string name = "file_" + std::to_string(n);
        tree.expectedSymbols +=
            writeDeclarations(out, name, spec.declarations, random, false, callee);
        const std::string source = "src/" + name + ".cpp";
        writeText(tree.root / source, out.str());
        db << (n ? ",\n" : "") << "  {\"directory\": " << jsonString(tree.root.string())
           << ", \"file\": " << jsonString(source)
           << ", \"arguments\": [\"c++\", \"-std=c++17\", \"-Iinclude\", \"-c\", "
           << jsonString(source) << ", \"-o\", " << jsonString("obj/" + name + ".o") << "]}";
    }
    db << "\n]\n";
    writeText(tree.database, db.str());
    tree.tus = spec.files;
    return tree;
}

} // namespace symdex::bench
