#include "bench/scale_tree.h"

#include "bench/seeded_random.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

namespace symdex::bench {

namespace {

// The material of every name: common programming and English words, lower case letters only.
// None is a C++ keyword or an alternative token, and none is two others run together, so a
// name's spelling gives its words back. Programming words come first: drawWord favours them.
constexpr const char* kWordText =
    "get set read write flush buffer length prefixed slice record reader writer block size "
    "open close find load store save parse format encode decode compress expand merge split "
    "join sort search insert remove erase append push pop peek clear reset start stop pause "
    "resume run wait notify lock unlock acquire release alloc free copy move swap update "
    "apply commit abort rollback check verify validate test build make create destroy init "
    "finish begin end first last next prev count index offset position cursor pointer handle "
    "node tree list queue stack heap table map hash key value entry item element field "
    "column row page chunk segment region range span frame packet message request response "
    "reply header footer body payload stream channel socket port address host server client "
    "peer session connection link route path file directory folder name label title text "
    "string byte word line token symbol scope package library config option setting param "
    "argument flag mode state status error warning fault failure result output input source "
    "target origin destination cache pool arena batch group cluster shard replica partition "
    "snapshot version revision history log journal trace event signal timer clock time date "
    "delay timeout deadline interval period rate limit quota budget memory disk storage "
    "volume device driver kernel thread task job worker process scheduler executor "
    "dispatcher handler listener observer callback hook filter mapper reducer builder "
    "factory provider manager controller service adapter wrapper proxy bridge gateway router "
    "parser lexer scanner compiler linker loader resolver encoder decoder serializer "
    "iterator generator allocator collector tracker monitor profiler logger printer "
    "formatter validator checker matcher selector sorter counter meter gauge histogram "
    "metric sample window view model schema document database query statement transaction "
    "lease ticket credential secret certificate policy rule permission role user account "
    "owner member identity profile contact customer order invoice payment price cost amount "
    "total balance score rank weight priority level depth width height area radius angle "
    "point vector matrix tensor shape circle square rectangle polygon curve edge vertex "
    "graph cycle pixel color image texture sprite mesh scene camera light shadow material "
    "shader render draw paint fill stroke clip mask blend scale rotate translate transform "
    "project align layout margin padding border font glyph cell grid panel widget button "
    "menu dialog screen display mouse click press scroll drag drop focus select toggle "
    "enable disable show hide visible hidden active pending ready busy idle dirty clean "
    "stale fresh valid invalid empty full partial complete global local remote shared "
    "internal external dynamic custom native async sync parallel serial concurrent atomic "
    "durable transient persistent temporary permanent primary secondary backup fallback "
    "retry repeat skip ignore accept reject allow deny grant revoke unregister subscribe "
    "publish broadcast emit receive send fetch pull put post patch head options connect "
    "listen bind shutdown restart reload refresh rebuild reindex compact prune trim truncate "
    "extend grow shrink resize reserve capacity fit pack unpack wrap unwrap box unbox cast "
    "convert coerce widen narrow round floor ceil clamp min max sum avg mean median delta "
    "diff hunk blob tag branch fork clone mirror archive bundle zip gzip deflate inflate "
    "crypt cipher digest signature hmac salt nonce seed random shuffle pick choose guess "
    "estimate predict learn train infer vote ballot poll survey form print echo dump inspect "
    "debug assert panic crash halt exit quit kill spawn launch boot mount unmount attach "
    "detach plug unplug pair match compare equal less greater bucket bin slot lane track "
    "tape reel spool ring circular linear binary ternary unary octal decimal hex bit nibble "
    "half triple quad single multi mono stereo audio video media codec muxer demux chapter "
    "episode season series album artist genre playlist song note chord beat tempo pitch tone "
    "voice speech speaker microphone sensor probe valve pump motor engine wheel gear axle "
    "brake clutch fuel tank pipe tube wire cable relay circuit board chip core cpu gpu bus "
    "power battery charge voltage current resistance noise gain bias threshold tolerance "
    "precision accuracy epsilon sigma alpha beta gamma lambda omega theta kappa zeta phi psi "
    "rho tau eta iota mu nu chi spring summer autumn winter morning evening night noon dawn "
    "dusk today tomorrow north south east west left right top bottom front back inner outer "
    "upper lower middle center side corner base root leaf trunk stem flower fruit forest "
    "river lake ocean island mountain valley desert garden farm city town village street "
    "road tower castle house room door gate wall roof stair kitchen office market shop bank "
    "school museum theater hospital station airport harbor paper pencil pen book letter card "
    "envelope stamp coupon receipt voucher apple banana cherry grape lemon mango orange "
    "peach pear plum berry melon olive copper silver golden iron steel stone glass wood "
    "cotton wool silk leather rubber plastic red green blue yellow purple brown black white "
    "gray pink cyan magenta amber ivory small large tiny huge wide thin thick heavy fast "
    "slow quick early late old young ancient modern simple complex basic advanced raw cooked "
    "safe unsafe strict loose tight closed known unknown major minor stable nightly legacy "
    "deprecated experimental optional required ";

const std::vector<std::string>& wordList() {
    static const std::vector<std::string> list = [] {
        std::vector<std::string> out;
        std::istringstream in(kWordText);
        for (std::string word; in >> word;)
            out.push_back(word);
        return out;
    }();
    return list;
}

constexpr size_t kNamesPerTu = 500;
constexpr size_t kTusPerModule = 4;
constexpr size_t kOtherHeadersPerTu = 3;
constexpr size_t kCallsPerFunction = 3;
constexpr size_t kFieldsPerClass = 4;
constexpr size_t kMethodsPerClass = 8;
constexpr size_t kConstantsPerEnum = 6;
/// One class per this many names of a module, one enum per twice as many; free functions take
/// the rest.
constexpr size_t kNamesPerClass = 25;
constexpr size_t kStampVersion = 1;
constexpr const char* kStampFile = "scale-tree.stamp";

enum class Case { Camel, Pascal, Snake };

/// How a module spells its names. Namespaces are snake_case in all of them.
struct Style {
    Case type, field, function, constant;
};
constexpr Style kStyles[] = {
    {Case::Pascal, Case::Snake, Case::Pascal, Case::Pascal}, // Google's: GetLengthPrefixedSlice
    {Case::Pascal, Case::Camel, Case::Camel, Case::Pascal},  // Qt's: flushBufferRecord
    {Case::Snake, Case::Snake, Case::Snake, Case::Snake},    // the standard library's
};

/// A name as its index in ScaleTree::names.
using NameId = uint32_t;

struct Function {
    NameId name = 0;
    int owner = -1; ///< its class's index in the module; -1 for a free function
};

struct Class {
    NameId name = 0;
    std::vector<NameId> fields;
};

struct Enum {
    NameId name = 0;
    std::vector<NameId> constants;
};

struct Module {
    NameId name = 0; ///< the namespace, which also names the module's files
    std::vector<Enum> enums;
    std::vector<Class> classes;
    std::vector<Function> functions; ///< the methods, class by class, then the free functions
    /// The module's TUs: part k defines functions k, k + parts, k + 2 parts, ...
    size_t parts = 0;
    std::vector<std::vector<size_t>> otherHeaders; ///< per part, the other modules it includes
};

/// The C++ keywords two words make in snake_case: no list word is a keyword by itself.
bool isKeyword(std::string_view name) {
    static constexpr std::string_view kKeywords[] = {
        "and_eq",        "char16_t",    "char32_t",     "char8_t", "co_await", "co_return",
        "co_yield",      "const_cast",  "dynamic_cast", "not_eq",  "or_eq",    "reinterpret_cast",
        "static_assert", "static_cast", "thread_local", "wchar_t", "xor_eq"};
    return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

/// Makes names from word sequences never drawn before, in whatever case: two names never spell the
/// same words in two styles (flushBuffer, flush_buffer), which a case-insensitive search would
/// find as one.
class NameMaker {
public:
    NameMaker(SeededRandom& random, std::vector<std::string>& names)
        : random_(random), names_(names) {}

    NameId make(size_t minWords, size_t maxWords, Case spelling) {
        const std::vector<std::string>& words = wordList();
        for (;;) {
            const size_t count = minWords + random_.below(maxWords - minWords + 1);
            uint64_t key = 0;
            std::string name;
            for (size_t i = 0; i < count; ++i) {
                const size_t w = drawWord(words.size());
                key = key << 10 | (w + 1); // 10 bits a word (makeTree checks), 0 for none
                std::string word = words[w];
                if (spelling == Case::Snake && i > 0)
                    name += '_';
                if (spelling == Case::Pascal || (spelling == Case::Camel && i > 0))
                    word[0] = char(word[0] - 'a' + 'A');
                name += word;
            }
            if (!isKeyword(name) && used_.insert(key).second) {
                names_.push_back(std::move(name));
                return NameId(names_.size() - 1);
            }
        }
    }

private:
    /// Word i comes about ln(W / i) / W of the time: the first words of the list are in many
    /// names, the last in few, as in real code.
    size_t drawWord(size_t wordCount) { return random_.below(random_.below(wordCount) + 1); }

    SeededRandom& random_;
    std::vector<std::string>& names_;
    std::unordered_set<uint64_t> used_;
};

/// The modules of a tree of `spec.names` names: the names drawn, the includes chosen.
std::vector<Module> planModules(const ScaleSpec& spec, SeededRandom& random,
                                std::vector<std::string>& names) {
    const size_t n = spec.names;
    const size_t moduleNames = kNamesPerTu * kTusPerModule;
    const size_t modules = n < moduleNames ? 1 : (n + moduleNames / 2) / moduleNames;
    const size_t parts =
        n < moduleNames ? std::max<size_t>(2, (n + kNamesPerTu / 2) / kNamesPerTu) : kTusPerModule;
    NameMaker maker(random, names);
    std::vector<Module> out(modules);
    for (size_t m = 0; m < modules; ++m) {
        Module& module = out[m];
        const Style& style = kStyles[random.below(std::size(kStyles))];
        const size_t budget = n / modules + (m < n % modules);
        const size_t classes = budget / kNamesPerClass, enums = budget / (2 * kNamesPerClass);
        const size_t freeFunctions = budget - 1 -
                                     classes * (1 + kFieldsPerClass + kMethodsPerClass) -
                                     enums * (1 + kConstantsPerEnum);
        module.name = maker.make(2, 2, Case::Snake);
        for (size_t e = 0; e < enums; ++e) {
            Enum& en = module.enums.emplace_back();
            en.name = maker.make(2, 3, style.type);
            for (size_t c = 0; c < kConstantsPerEnum; ++c)
                en.constants.push_back(maker.make(2, 3, style.constant));
        }
        for (size_t c = 0; c < classes; ++c) {
            Class& cl = module.classes.emplace_back();
            cl.name = maker.make(2, 3, style.type);
            for (size_t f = 0; f < kFieldsPerClass; ++f)
                cl.fields.push_back(maker.make(2, 3, style.field));
            for (size_t f = 0; f < kMethodsPerClass; ++f)
                module.functions.push_back({maker.make(2, 4, style.function), int(c)});
        }
        for (size_t f = 0; f < freeFunctions; ++f)
            module.functions.push_back({maker.make(2, 4, style.function), -1});
        module.parts = parts;
    }
    for (size_t m = 0; m < modules; ++m) {
        const size_t others = std::min(kOtherHeadersPerTu, modules - 1);
        for (size_t p = 0; p < out[m].parts; ++p) {
            std::vector<size_t>& chosen = out[m].otherHeaders.emplace_back();
            while (chosen.size() < others) {
                const size_t o = random.below(modules);
                if (o != m && std::find(chosen.begin(), chosen.end(), o) == chosen.end())
                    chosen.push_back(o);
            }
        }
    }
    return out;
}

/// Writes the tree's texts (or, with write false, only counts what they hold).
class TreeWriter {
public:
    TreeWriter(ScaleTree& tree, const std::string& banner, bool write)
        : tree_(tree), banner_(banner), write_(write) {}

    /// A generated name written once more into a text.
    const std::string& use(NameId id) {
        ++tree_.nameOccurrences;
        return tree_.names[id];
    }

    void file(const std::string& relative, const std::string& text) {
        if (!write_)
            return;
        const std::filesystem::path path = tree_.root / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out.flush())
            throw std::runtime_error("cannot write " + path.string());
    }

    void header(const Module& module) {
        std::ostringstream out;
        out << banner_ << "#pragma once\n\nnamespace " << use(module.name) << " {\n\n";
        for (const Enum& e : module.enums) {
            out << "enum class " << use(e.name) << " {";
            for (size_t c = 0; c < e.constants.size(); ++c)
                out << (c ? ", " : " ") << use(e.constants[c]);
            out << " };\n";
        }
        size_t function = 0;
        for (size_t c = 0; c < module.classes.size(); ++c) {
            out << "\nstruct " << use(module.classes[c].name) << " {\n";
            for (NameId field : module.classes[c].fields)
                out << "    int " << use(field) << " = 0;\n";
            for (; function < module.functions.size() && module.functions[function].owner == int(c);
                 ++function)
                out << "    int " << use(module.functions[function].name) << "(int value) const;\n";
            out << "};\n";
        }
        out << "\n";
        for (; function < module.functions.size(); ++function)
            out << "int " << use(module.functions[function].name) << "(int value);\n";
        out << "\n} // namespace " << tree_.names[module.name] << "\n";
        file("include/scale/" + tree_.names[module.name] + ".h", out.str());
        ++tree_.headers;
    }

    /// Part `part` of `modules[m]`: the definitions of its share of the module's functions, each
    /// calling functions of the modules it includes and reading a field or an enum constant.
    std::string tu(const std::vector<Module>& modules, size_t m, size_t part,
                   SeededRandom& random) {
        const Module& module = modules[m];
        std::vector<size_t> included = {m};
        included.insert(included.end(), module.otherHeaders[part].begin(),
                        module.otherHeaders[part].end());
        std::ostringstream out;
        out << banner_;
        for (size_t i : included)
            out << "#include \"scale/" << tree_.names[modules[i].name] << ".h\"\n";
        out << "\nnamespace " << use(module.name) << " {\n";
        for (size_t f = part; f < module.functions.size(); f += module.parts) {
            const Function& function = module.functions[f];
            out << "\nint ";
            if (function.owner >= 0)
                out << use(module.classes[size_t(function.owner)].name) << "::";
            out << use(function.name) << "(int value)" << (function.owner >= 0 ? " const" : "")
                << " {\n    return ";
            for (size_t call = 0; call < kCallsPerFunction; ++call) {
                const size_t which = included[random.below(included.size())];
                const Module& callee = modules[which];
                const Function& target = callee.functions[random.below(callee.functions.size())];
                if (which != m) // its own namespace's names need no qualifier
                    out << use(callee.name) << "::";
                if (target.owner >= 0)
                    out << use(callee.classes[size_t(target.owner)].name) << "{}.";
                out << use(target.name) << "(value + " << call << ") + ";
            }
            if (function.owner >= 0) {
                const Class& own = module.classes[size_t(function.owner)];
                out << use(own.fields[random.below(own.fields.size())]);
            } else {
                const Enum& e = module.enums[random.below(module.enums.size())];
                out << "int(" << use(e.name)
                    << "::" << use(e.constants[random.below(e.constants.size())]) << ")";
            }
            out << ";\n}\n";
        }
        out << "\n} // namespace " << tree_.names[module.name] << "\n";
        const std::string source = "src/" + tree_.names[module.name] + "/" +
                                   tree_.names[module.name] + "_" + std::to_string(part) + ".cpp";
        file(source, out.str());
        tree_.sources.push_back(source);
        return source;
    }

private:
    ScaleTree& tree_;
    std::string banner_;
    bool write_;
};

std::string jsonString(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string stampText(const ScaleSpec& spec, const std::filesystem::path& root) {
    return "symdex scale tree " + std::to_string(kStampVersion) +
           ": names=" + std::to_string(spec.names) + " seed=" + std::to_string(spec.seed) +
           " root=" + root.string() + "\n";
}

/// Plans the tree and makes its texts, writing them only when `write` is set: the names and
/// figures of a tree written before come from the same draws.
ScaleTree makeTree(const ScaleSpec& spec, const std::filesystem::path& root, bool write) {
    if (spec.names < 100)
        throw std::runtime_error("a scale tree needs at least 100 names");
    if (wordList().size() >= 1023)
        throw std::runtime_error("NameMaker's keys hold 10 bits a word");
    ScaleTree tree;
    tree.root = std::filesystem::absolute(root).lexically_normal();
    tree.database = tree.root / "compile_commands.json";
    if (write)
        std::filesystem::remove_all(tree.root);
    SeededRandom random(spec.seed);
    tree.names.reserve(spec.names);
    const std::vector<Module> modules = planModules(spec, random, tree.names);
    TreeWriter writer(tree,
                      "// Generated by scale_bench --names " + std::to_string(spec.names) +
                          " --seed " + std::to_string(spec.seed) + "\n",
                      write);
    std::ostringstream db;
    db << "[\n";
    for (size_t m = 0; m < modules.size(); ++m) {
        writer.header(modules[m]);
        for (size_t part = 0; part < modules[m].parts; ++part) {
            const std::string source = writer.tu(modules, m, part, random);
            const std::string object =
                "obj/" + std::filesystem::path(source).stem().string() + ".o";
            db << (tree.sources.size() > 1 ? ",\n" : "")
               << "  {\"directory\": " << jsonString(tree.root.string())
               << ", \"file\": " << jsonString(source)
               << ", \"arguments\": [\"c++\", \"-std=c++17\", \"-Iinclude\", \"-c\", "
               << jsonString(source) << ", \"-o\", " << jsonString(object) << "]}";
        }
    }
    db << "\n]\n";
    writer.file("compile_commands.json", db.str());
    writer.file(kStampFile, stampText(spec, tree.root));
    return tree;
}

/// A name's words as (start, length) in its spelling: split at underscores and before capitals.
std::vector<std::pair<size_t, size_t>> wordSpans(std::string_view name) {
    std::vector<std::pair<size_t, size_t>> spans;
    for (size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '_')
            continue;
        const bool starts = i == 0 || name[i - 1] == '_' || (name[i] >= 'A' && name[i] <= 'Z');
        if (starts)
            spans.push_back({i, 0});
        ++spans.back().second;
    }
    return spans;
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        c = lower(c);
    return out;
}

bool equalIgnoringCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == y; });
}

/// Whether the lower-case `query` is a subsequence of `name`, ignoring case.
bool isSubsequence(std::string_view query, std::string_view name) {
    size_t q = 0;
    for (size_t i = 0; i < name.size() && q < query.size(); ++i)
        q += lower(name[i]) == query[q];
    return q == query.size();
}

/// Candidates from `draw` until `perKind` distinct ones are kept (or too many tries failed, in a
/// tiny tree); an empty candidate is a failed try.
template <typename Draw> std::vector<std::string> distinct(size_t perKind, Draw draw) {
    std::vector<std::string> out;
    for (size_t tries = 0; out.size() < perKind && tries < perKind * 1000; ++tries) {
        std::string candidate = draw();
        if (!candidate.empty() && std::find(out.begin(), out.end(), candidate) == out.end())
            out.push_back(std::move(candidate));
    }
    return out;
}

/// Draws the queries of each kind from the names.
class QueryMaker {
public:
    QueryMaker(const std::vector<std::string>& names, size_t perKind, uint64_t seed)
        : names_(names), perKind_(perKind), random_(seed ^ 0x5CA1EB0B5ull) {}

    std::vector<std::string> make(QueryKind kind) {
        switch (kind) {
        case QueryKind::ShortPrefix:
            return distinct(perKind_, [&] {
                return lowered(std::string_view(anyName()).substr(0, 1 + random_.below(2)));
            });
        case QueryKind::CommonWord:
            return commonWords();
        case QueryKind::RareExact:
            return distinct(perKind_, [&] { return rareExact(); });
        case QueryKind::MidNameSubstring:
            return distinct(perKind_, [&] { return midNameSubstring(); });
        case QueryKind::WordStartAbbreviation:
            return distinct(perKind_, [&] { return abbreviation(); });
        case QueryKind::NoMatch:
            return distinct(perKind_, [&] { return noMatch(); });
        }
        return {};
    }

private:
    const std::string& anyName() { return names_[random_.below(names_.size())]; }

    /// A seeded pick among the twice as many words that most names hold.
    std::vector<std::string> commonWords() {
        std::map<std::string, size_t> namesWith;
        for (const std::string& name : names_)
            for (const auto& [start, length] : wordSpans(name))
                ++namesWith[lowered(std::string_view(name).substr(start, length))];
        std::vector<std::pair<size_t, std::string>> byCount;
        for (const auto& [word, count] : namesWith)
            byCount.push_back({count, word});
        std::sort(byCount.begin(), byCount.end(), std::greater<>());
        byCount.resize(std::min(byCount.size(), 2 * perKind_));
        return distinct(perKind_, [&] { return byCount[random_.below(byCount.size())].second; });
    }

    /// A name of 3-4 words that no other name equals, ignoring case.
    std::string rareExact() {
        const std::string& name = anyName();
        if (wordSpans(name).size() < 3)
            return {};
        const std::string low = lowered(name);
        const auto same = std::count_if(names_.begin(), names_.end(), [&](const std::string& n) {
            return equalIgnoringCase(n, low);
        });
        return same == 1 ? name : std::string();
    }

    /// From inside a word (never its first letter) into the first 2-4 letters of the next.
    std::string midNameSubstring() {
        const std::string& name = anyName();
        const auto spans = wordSpans(name);
        if (spans.size() < 2)
            return {};
        const size_t i = random_.below(spans.size() - 1);
        const auto [start, length] = spans[i];
        if (length < 3)
            return {};
        const size_t from = start + 1 + random_.below(length - 2);
        const auto [nextStart, nextLength] = spans[i + 1];
        const size_t to = nextStart + std::min(nextLength, 2 + random_.below(3));
        return name.substr(from, to - from);
    }

    /// Alternately every word's initial ("glps", from names of 3-4 words) and 2-4 letters of
    /// each of the first 2-3 words ("flubuf").
    std::string abbreviation() {
        const std::string& name = anyName();
        const auto spans = wordSpans(name);
        std::string text;
        initials_ = !initials_;
        if (initials_) {
            for (const auto& [start, length] : spans)
                text += lower(name[start]);
        } else {
            const size_t words = std::min(spans.size(), 2 + random_.below(2));
            for (size_t w = 0; w < words; ++w) {
                const auto [start, length] = spans[w];
                const size_t letters = std::min(length, 2 + random_.below(3));
                text += lowered(std::string_view(name).substr(start, letters));
            }
        }
        return text.size() >= 3 ? text : std::string();
    }

    /// Rare letters that no name holds in this order, so that no fuzzy matcher finds anything.
    std::string noMatch() {
        static constexpr char kRare[] = "jqxzvkw";
        std::string text;
        for (int i = 0; i < 5; ++i)
            text += kRare[random_.below(sizeof kRare - 1)];
        const bool found = std::any_of(names_.begin(), names_.end(), [&](const std::string& n) {
            return isSubsequence(text, n);
        });
        return found ? std::string() : text;
    }

    const std::vector<std::string>& names_;
    size_t perKind_;
    SeededRandom random_; ///< not the tree's draws
    bool initials_ = false;
};

} // namespace

ScaleTree generateScaleTree(const ScaleSpec& spec, const std::filesystem::path& root) {
    return makeTree(spec, root, true);
}

std::optional<ScaleTree> existingScaleTree(const ScaleSpec& spec,
                                           const std::filesystem::path& root) {
    const std::filesystem::path absolute = std::filesystem::absolute(root).lexically_normal();
    std::ifstream in(absolute / kStampFile, std::ios::binary);
    std::stringstream stamp;
    stamp << in.rdbuf();
    if (!in || stamp.str() != stampText(spec, absolute))
        return std::nullopt;
    return makeTree(spec, root, false);
}

const char* queryKindName(QueryKind kind) {
    switch (kind) {
    case QueryKind::ShortPrefix:
        return "prefix";
    case QueryKind::CommonWord:
        return "common word";
    case QueryKind::RareExact:
        return "rare exact";
    case QueryKind::MidNameSubstring:
        return "mid-name substring";
    case QueryKind::WordStartAbbreviation:
        return "abbreviation";
    case QueryKind::NoMatch:
        return "no match";
    }
    return "?";
}

std::vector<ScaleQuery> scaleQueries(const std::vector<std::string>& names, size_t perKind,
                                     uint64_t seed) {
    QueryMaker maker(names, perKind, seed);
    std::vector<ScaleQuery> out;
    for (QueryKind kind : kQueryKinds)
        for (std::string& text : maker.make(kind))
            out.push_back({kind, std::move(text)});
    return out;
}

} // namespace symdex::bench
