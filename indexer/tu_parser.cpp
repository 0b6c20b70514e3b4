#include "indexer/tu_parser.h"

#include "indexer/doc_comment.h"
#include "indexer/file_stamps.h"
#include "indexer/pch.h"
#include "indexer/probe_log.h"
#include "indexer/usr.h"
#include "store/encoding.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

// Last: from here on each clang_* call goes through the table of libclang's functions.
#include "indexer/libclang.h"

namespace symdex {

namespace {

/// The end of the logical line at `offset` (backslash continuations joined): past its newline.
size_t directiveLineEnd(std::string_view text, size_t offset) {
    for (size_t i = offset; i < text.size(); ++i)
        if (text[i] == '\n') {
            size_t j = i;
            if (j > 0 && text[j - 1] == '\r')
                --j;
            if (j == 0 || text[j - 1] != '\\')
                return i + 1;
        }
    return text.size();
}

/// The start of the logical line holding the character before `end` (backslash continuations
/// joined).
size_t directiveLineStart(std::string_view text, size_t end) {
    if (end == 0)
        return 0;
    size_t p = end - 1;
    if (text[p] == '\n' && p > 0)
        --p;
    for (;;) {
        const size_t newline = text.rfind('\n', p);
        if (newline == std::string_view::npos)
            return 0;
        size_t j = newline;
        if (j > 0 && text[j - 1] == '\r')
            --j;
        if (j == 0 || text[j - 1] != '\\')
            return newline + 1;
        p = newline - 1;
    }
}

/// Whether `offset` is on an `#elif` line (`#elifdef`, `#elifndef` too), continuations joined.
bool onElifLine(std::string_view text, size_t offset) {
    size_t i = directiveLineStart(text, offset + 1);
    auto blanks = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
            ++i;
    };
    blanks();
    if (i >= text.size() || text[i] != '#')
        return false;
    ++i;
    blanks();
    return text.substr(i, 4) == "elif";
}

/// Owns a CXString for the length of a statement.
class String {
public:
    explicit String(CXString s) : s_(s) {}
    ~String() { clang_disposeString(s_); }
    String(const String&) = delete;
    String& operator=(const String&) = delete;
    const char* c_str() const {
        const char* p = clang_getCString(s_);
        return p ? p : "";
    }
    std::string str() const { return c_str(); }

private:
    CXString s_;
};

/// "the class definition Options": what a fallback's reason names.
std::string describe(CXCursor cursor) {
    std::string text = "the ";
    text += String(clang_getCursorKindSpelling(clang_getCursorKind(cursor))).str();
    if (clang_isCursorDefinition(cursor))
        text += " definition";
    return text + " " + String(clang_getCursorSpelling(cursor)).str();
}

struct FileIdHash {
    size_t operator()(const CXFileUniqueID& id) const {
        return std::hash<unsigned long long>()(id.data[0] * 31 + id.data[1]) ^ id.data[2];
    }
};
struct FileIdEqual {
    bool operator()(const CXFileUniqueID& a, const CXFileUniqueID& b) const {
        return std::memcmp(a.data, b.data, sizeof a.data) == 0;
    }
};

SymbolKind symbolKind(CXIdxEntityKind kind) {
    switch (kind) {
    case CXIdxEntity_Typedef:
        return SymbolKind::Typedef;
    case CXIdxEntity_Function:
        return SymbolKind::Function;
    case CXIdxEntity_Variable:
        return SymbolKind::Variable;
    case CXIdxEntity_Field:
        return SymbolKind::Field;
    case CXIdxEntity_EnumConstant:
        return SymbolKind::EnumConstant;
    case CXIdxEntity_Enum:
        return SymbolKind::Enum;
    case CXIdxEntity_Struct:
        return SymbolKind::Struct;
    case CXIdxEntity_Union:
        return SymbolKind::Union;
    case CXIdxEntity_CXXClass:
        return SymbolKind::Class;
    case CXIdxEntity_CXXNamespace:
        return SymbolKind::Namespace;
    case CXIdxEntity_CXXNamespaceAlias:
        return SymbolKind::NamespaceAlias;
    case CXIdxEntity_CXXStaticVariable:
        return SymbolKind::StaticMember;
    case CXIdxEntity_CXXStaticMethod:
        return SymbolKind::StaticMethod;
    case CXIdxEntity_CXXInstanceMethod:
        return SymbolKind::Method;
    case CXIdxEntity_CXXConstructor:
        return SymbolKind::Constructor;
    case CXIdxEntity_CXXDestructor:
        return SymbolKind::Destructor;
    case CXIdxEntity_CXXConversionFunction:
        return SymbolKind::ConversionFunction;
    case CXIdxEntity_CXXTypeAlias:
        return SymbolKind::TypeAlias;
    case CXIdxEntity_CXXConcept:
        return SymbolKind::Concept;
    default:
        return SymbolKind::Unknown;
    }
}

bool isScope(SymbolKind kind) {
    switch (kind) {
    case SymbolKind::Namespace:
    case SymbolKind::Class:
    case SymbolKind::Struct:
    case SymbolKind::Union:
    case SymbolKind::Enum:
        return true;
    default:
        return false;
    }
}

std::string typeSpelling(CXType type) {
    return type.kind == CXType_Invalid ? std::string() : String(clang_getTypeSpelling(type)).str();
}

/// The direct children of `cursor` of one kind (parameters, template parameters, bases).
std::vector<CXCursor> childrenOfKind(CXCursor cursor, std::initializer_list<CXCursorKind> kinds) {
    struct Visit {
        std::initializer_list<CXCursorKind> kinds;
        std::vector<CXCursor> found;
    } visit{kinds, {}};
    clang_visitChildren(
        cursor,
        [](CXCursor child, CXCursor, CXClientData data) {
            auto* v = static_cast<Visit*>(data);
            if (std::find(v->kinds.begin(), v->kinds.end(), clang_getCursorKind(child)) !=
                v->kinds.end())
                v->found.push_back(child);
            return CXChildVisit_Continue;
        },
        &visit);
    return std::move(visit.found);
}

/// "T name", "const Slice &key", "DB **dbptr": clang's spelling of the type, then the name.
std::string declarator(CXType type, const std::string& name) {
    std::string out = typeSpelling(type);
    if (!name.empty())
        out += (out.ends_with('&') || out.ends_with('*') ? "" : " ") + name;
    return out;
}

/// Symbol::signature: the declaration without its body, as clang prints its types.
std::string signatureOf(CXCursor cursor, SymbolKind kind, const std::string& name) {
    // libclang's indexer hands over a template's pattern, not the template: no template head.
    std::string out;
    if (isFunctionLike(kind)) {
        if (kind == SymbolKind::StaticMethod)
            out += "static ";
        else if (clang_CXXMethod_isVirtual(cursor))
            out += "virtual ";
        const CXType type = clang_getCursorType(cursor);
        if (kind != SymbolKind::Constructor && kind != SymbolKind::Destructor &&
            kind != SymbolKind::ConversionFunction)
            if (std::string result = typeSpelling(clang_getResultType(type)); !result.empty())
                out += result + " ";
        out += name + "(";
        bool first = true;
        for (CXCursor param : childrenOfKind(cursor, {CXCursor_ParmDecl})) {
            if (!first)
                out += ", ";
            first = false;
            out += declarator(clang_getCursorType(param),
                              String(clang_getCursorSpelling(param)).str());
        }
        if (type.kind == CXType_FunctionProto && clang_isFunctionTypeVariadic(type))
            out += first ? "..." : ", ...";
        out += ")";
        if (clang_CXXMethod_isConst(cursor))
            out += " const";
        if (clang_CXXMethod_isPureVirtual(cursor))
            out += " = 0";
        else if (clang_CXXMethod_isDeleted(cursor))
            out += " = delete";
        else if (clang_CXXMethod_isDefaulted(cursor))
            out += " = default";
        return out;
    }
    switch (kind) {
    case SymbolKind::Variable:
    case SymbolKind::StaticMember:
    case SymbolKind::Field:
        return (kind == SymbolKind::StaticMember ? "static " : "") +
               declarator(clang_getCursorType(cursor), name);
    case SymbolKind::Typedef:
        return "typedef " + declarator(clang_getTypedefDeclUnderlyingType(cursor), name);
    case SymbolKind::TypeAlias:
        return "using " + name + " = " + typeSpelling(clang_getTypedefDeclUnderlyingType(cursor));
    case SymbolKind::EnumConstant:
        return name + " = " + std::to_string(clang_getEnumConstantDeclValue(cursor));
    case SymbolKind::Enum:
        return (clang_EnumDecl_isScoped(cursor) ? "enum class " : "enum ") + name;
    case SymbolKind::Class:
    case SymbolKind::Struct:
    case SymbolKind::Union: {
        out += kind == SymbolKind::Struct  ? "struct "
               : kind == SymbolKind::Union ? "union "
                                           : "class ";
        out += name;
        bool first = true;
        for (CXCursor base : childrenOfKind(cursor, {CXCursor_CXXBaseSpecifier})) {
            out += first ? " : " : ", ";
            first = false;
            switch (clang_getCXXAccessSpecifier(base)) {
            case CX_CXXPublic:
                out += "public ";
                break;
            case CX_CXXProtected:
                out += "protected ";
                break;
            case CX_CXXPrivate:
                out += "private ";
                break;
            default:
                break;
            }
            if (clang_isVirtualBase(base))
                out += "virtual ";
            out += typeSpelling(clang_getCursorType(base));
        }
        return out;
    }
    default:
        return {};
    }
}

uint8_t templateFlags(CXIdxEntityCXXTemplateKind kind) {
    switch (kind) {
    case CXIdxEntity_Template:
        return kTemplate;
    case CXIdxEntity_TemplatePartialSpecialization:
    case CXIdxEntity_TemplateSpecialization:
        return kSpecialization;
    default:
        return 0;
    }
}

/// The state of one parse. libclang calls back on its parse thread; nothing here is shared.
class TuExtractor {
public:
    TuExtractor(const CompileCommand& command, size_t rank, FileClaimer& claimer,
                CountedSharedMutex* extractionLock, ProbeRecording& probes)
        : command_(command), rank_(rank), claimer_(claimer), extractionLock_(extractionLock),
          probes_(probes) {}

    /// Called from the callbacks that come first: they run on the thread libclang parses on.
    void bindProbes() { probes_.bindThisThread(); }

    /// --lock-mode global: the store-wide lock, held while extracting (KDevelop holds its DUChain
    /// write lock while its builders record each declaration). Not held in per-file mode.
    std::unique_lock<CountedSharedMutex> holdExtractionLock() {
        return extractionLock_ ? std::unique_lock(*extractionLock_)
                               : std::unique_lock<CountedSharedMutex>();
    }

    struct Extracted {
        IndexedFile file;
        std::shared_ptr<const std::atomic<size_t>> owner; ///< see FileClaim
    };

    struct FileState {
        std::string path;
        CXFile file = nullptr;    ///< valid while the parse's translation unit lives
        Extracted* out = nullptr; ///< null when another TU (or the store) has this file
        bool pch = false;         ///< a file of the PCH the parse is against (never extracted)
        uint32_t pchIndex = 0;    ///< its index in the PCH's manifest
    };

    /// Error diagnostics of the parse so far, anywhere, and the first of them.
    uint32_t errors() const { return allDiagnostics_.errors; }
    const std::string& firstError() const { return allDiagnostics_.firstError; }

    /// Parses against `pch` (pch.h): its files are neither claimed nor listed until checkPch().
    void usePch(const LoadedPch* pch) { pch_ = pch; }
    /// Builds a PCH: claims nothing, and keeps what the manifest needs.
    void buildPch() { building_ = true; }

    /// Where the symbols of `state`'s file go; null if this TU does not extract it (any more).
    IndexedFile* output(FileState* state) {
        if (!state || !state->out)
            return nullptr;
        if (state->out->owner->load(std::memory_order_relaxed) != rank_) {
            // Taken over by a lower rank: stop extracting it here.
            state->out->file.symbols.clear();
            state->out->file.references.clear();
            state->out = nullptr;
            return nullptr;
        }
        return &state->out->file;
    }

    FileState* fileState(CXFile file) {
        if (!file)
            return nullptr;
        CXFileUniqueID id;
        if (clang_getFileUniqueID(file, &id) != 0)
            return nullptr;
        auto it = byId_.find(id);
        if (it != byId_.end())
            return it->second;
        FileState& state = states_.emplace_back();
        state.file = file;
        // libclang's real path has symlinks and ".." resolved; the name as looked up may not
        // (".../x86_64-linux-gnu/12/../../../../include/c++/12/vector" through /lib -> usr/lib).
        state.path = String(clang_File_tryGetRealPathName(file)).str();
        const std::string spelled = String(clang_getFileName(file)).str();
        if (state.path.empty()) {
            state.path = canonicalPath(absolutePath(spelled, command_.directory));
        } else if (!spelled.empty()) {
            // Reached through a symlink (lexically, the name is not the real path): the TU
            // depends on where the name leads, not only on the file it led to. The name is kept
            // as spelled, since ".." after a symlink is not what it looks like lexically.
            std::string name =
                spelled.front() == '/' ? spelled : command_.directory + "/" + spelled;
            if (absolutePath(name, "/") != state.path)
                aliases_.emplace_back(std::move(name), state.path);
        }
        if (pch_) {
            // Against a PCH, libclang may name a file by the path the PCH recorded, which is not
            // always its real path (/usr/lib/clang/16/include through a symlink): the store
            // knows files by their real paths.
            state.path = canonicalPath(state.path);
            if (auto found = pch_->fileIndex.find(state.path); found != pch_->fileIndex.end()) {
                state.pch = true;
                state.pchIndex = found->second;
                byId_.emplace(id, &state);
                return &state;
            }
        }
        if (!seenPaths_.contains(state.path)) {
            seenPaths_[state.path] = &state;
            includedFiles_.push_back(state.path);
            if (std::optional<FileClaim> claim =
                    building_ ? std::nullopt : claimer_.claim(state.path, rank_)) {
                Extracted& extracted = extracted_.emplace_back();
                extracted.owner = std::move(claim->owner);
                IndexedFile& out = extracted.file;
                out.file.path = state.path;
                out.file.contentHash = claim->stamp.contentHash;
                out.file.mtimeNs = claim->stamp.mtimeNs;
                out.file.size = claim->stamp.size;
                out.file.ctimeNs = claim->stamp.ctimeNs;
                out.file.inode = claim->stamp.inode;
                out.file.asciiOnly = claim->stamp.asciiOnly;
                out.priority = state.path == command_.file ? 0 : uint32_t(rank_ + 1);
                state.out = &extracted;
            }
        } else {
            // The same path reached through another file entry (a symlink, say): one owner.
            state.out = seenPaths_[state.path]->out;
        }
        byId_.emplace(id, &state);
        return &state;
    }

    /// Against a PCH: what this TU extracts uses `target`; if it is in a file of the PCH, the TU
    /// must include that file (checkPch). Or, for a declaration that is not the definition,
    /// include the file of the definition: the entity is the same (one USR) whichever of its
    /// declarations the PCH's order made the one libclang names (`class Slice;` in
    /// comparator.h, read before slice.h).
    void notePchUse(CXCursor target) {
        const FileState* state = fileOfCursor(target);
        if (!state || !state->pch || clang_getCursorKind(target) == CXCursor_Namespace)
            return; // a namespace is one entity however many files open it
        pchUsed_.resize(pch_->manifest.files.size(), clang_getNullCursor());
        if (clang_isDeclaration(clang_getCursorKind(target)) && !clang_isCursorDefinition(target)) {
            const CXCursor definition = clang_getCursorDefinition(target);
            const FileState* where =
                clang_Cursor_isNull(definition) ? nullptr : fileOfCursor(definition);
            if (where && where != state) {
                if (!where->pch)
                    return; // in this TU's own files, which a plain parse reads too
                const uint64_t key = uint64_t(state->pchIndex) << 32 | where->pchIndex;
                if (pchUsedOrSeen_.insert(key).second)
                    pchUsedOr_.push_back({state->pchIndex, where->pchIndex, target});
                return;
            }
        }
        if (clang_Cursor_isNull(pchUsed_[state->pchIndex]))
            pchUsed_[state->pchIndex] = target;
    }

    /// hash64 of stableUsr(usr): what the store keys a symbol by.
    uint64_t stableHash(const char* usr) { return hash64(stableUsr(usr, usrScratch_)); }

    /// What a reference to `entity` is to: the entity, but a class template's partial
    /// specialization counts as the template. libclang names the partial specialization only
    /// once the TU has instantiated it from there (`std::function<void()>` after another use of
    /// that type, or a PCH's), the template before: the answer would depend on what the parse
    /// read before. A partial specialization cannot be named otherwise.
    uint64_t targetHash(const CXIdxEntityInfo& entity) {
        if (clang_getCursorKind(entity.cursor) == CXCursor_ClassTemplatePartialSpecialization) {
            const CXCursor primary = clang_getSpecializedCursorTemplate(entity.cursor);
            if (!clang_Cursor_isNull(primary)) {
                String usr(clang_getCursorUSR(primary));
                if (*usr.c_str())
                    return stableHash(usr.c_str());
            }
        }
        return stableHash(entity.USR);
    }

    /// Against a PCH: a reference at `loc` in this TU's own file `from` to the function `target`
    /// in a file of the PCH; the earliest per file and PCH file. checkPch() looks whether a plain
    /// parse would have read the file before it (or, for a declaration that is not the definition,
    /// the definition's file).
    void noteOrder(CXIdxLoc loc, const FileState* from, CXCursor target) {
        // A function: a plain parse would have chosen among the overloads declared so far (a
        // class or variable named before its declaration is an error, or the same entity).
        if (!isFunctionLikeCursor(clang_getCursorKind(target)))
            return;
        const FileState* state = fileOfCursor(target);
        if (!state || !state->pch || !from)
            return;
        uint32_t alternative = UINT32_MAX;
        if (!clang_isCursorDefinition(target)) {
            const CXCursor definition = clang_getCursorDefinition(target);
            const FileState* where =
                clang_Cursor_isNull(definition) ? nullptr : fileOfCursor(definition);
            if (where && !where->pch)
                return; // in this TU's own files: read where a plain parse reads it
            if (where)
                alternative = where->pchIndex;
        }
        unsigned offset = 0;
        clang_indexLoc_getFileLocation(loc, nullptr, nullptr, nullptr, nullptr, &offset);
        auto [it, inserted] = earliestUses_.try_emplace({from, state->pchIndex},
                                                        EarliestUse{offset, alternative, target});
        if (!inserted && offset < it->second.offset)
            it->second = {offset, alternative, target};
    }

    FileState* fileOfCursor(CXCursor cursor) {
        CXFile file = nullptr;
        clang_getFileLocation(clang_getCursorLocation(cursor), &file, nullptr, nullptr, nullptr);
        return file ? fileState(file) : nullptr;
    }

    /// Building: the include graph by entry (PchManifest::nodes), from the #includes in
    /// preprocessing order. The entry an #include is in is found on the stack of entries open;
    /// a file that is not open there was entered again (an unguarded file) at its last #include.
    void addEntry(FileState* includer, FileState* file) {
        int parent = -1; // the PCH's source
        if (includer && includer->path != command_.file) {
            auto open = std::find_if(stack_.rbegin(), stack_.rend(),
                                     [&](int n) { return entries_[n].first == includer; });
            if (open != stack_.rend()) {
                stack_.erase(open.base(), stack_.end());
                parent = stack_.back();
            } else if (auto again = reentry_.find(includer); again != reentry_.end()) {
                const int n = again->second;
                reentry_.erase(again);
                // Its parent is the entry that included it, still open.
                auto up = std::find_if(stack_.rbegin(), stack_.rend(),
                                       [&](int p) { return entryParent_[n] == p; });
                stack_.erase(up == stack_.rend() ? stack_.begin() : up.base(), stack_.end());
                stack_.push_back(n);
                parent = n;
            }
        } else {
            stack_.clear();
        }
        const int n = int(entries_.size());
        entries_.push_back({file, {}});
        entryParent_.push_back(parent);
        if (parent >= 0)
            entries_[parent].second.push_back(uint32_t(n));
        if (firstEntry_.try_emplace(file, n).second)
            stack_.push_back(n);
        else
            reentry_[file] = n; // skipped by its guard, or entered again: known when it includes
    }

    /// An #include: the file it names (also one an include guard skips), in preprocessing order.
    FileState* included(const CXIdxIncludedFileInfo* info) {
        FileState* state = fileState(info->file);
        CXIdxClientFile client = nullptr;
        CXFile file = nullptr;
        unsigned offset = 0;
        clang_indexLoc_getFileLocation(info->hashLoc, &client, &file, nullptr, nullptr, &offset);
        FileState* includer = client ? static_cast<FileState*>(client) : fileState(file);
        const uint32_t seq = ++includeSeq_;
        if (!state)
            return state;
        entrySeq_.try_emplace(state, seq);
        if (includer)
            directives_[includer].push_back({offset, seq});
        if (pch_) {
            // The files open: an #include in `includer` closes every file entered after it.
            while (!open_.empty() && open_.back() != includer) {
                exitSeq_.try_emplace(open_.back(), seq - 1);
                open_.pop_back();
            }
            open_.push_back(state);
        }
        if (state->pch)
            pchReached_.push_back({seq, state->pchIndex});
        if (building_)
            addEntry(includer, state);
        if (!pch_ && includer && !building_)
            candidates_.push_back({includer, state,
                                   info->isAngled ? std::string("<") + info->filename + ">"
                                                  : std::string("\"") + info->filename + "\""});
        return state;
    }

    FileState* fileOf(CXIdxLoc loc, Position* pos) {
        CXIdxClientFile client = nullptr;
        CXFile file = nullptr;
        unsigned line = 0, column = 0;
        clang_indexLoc_getFileLocation(loc, &client, &file, &line, &column, nullptr);
        pos->line = line;
        pos->column = column;
        return client ? static_cast<FileState*>(client) : fileState(file);
    }

    FileState* fileOf(CXSourceLocation loc, Position* pos) {
        CXFile file = nullptr;
        unsigned line = 0, column = 0;
        clang_getSpellingLocation(loc, &file, &line, &column, nullptr);
        pos->line = line;
        pos->column = column;
        return fileState(file);
    }

    /// The extent of a cursor, when it lies in `state`'s file; otherwise just `at`.
    Range extentOf(CXCursor cursor, const FileState* state, Position at) {
        CXSourceRange range = clang_getCursorExtent(cursor);
        Position begin, end;
        CXFile beginFile = nullptr, endFile = nullptr;
        clang_getSpellingLocation(clang_getRangeStart(range), &beginFile, &begin.line,
                                  &begin.column, nullptr);
        clang_getSpellingLocation(clang_getRangeEnd(range), &endFile, &end.line, &end.column,
                                  nullptr);
        if (!beginFile || !endFile || fileState(beginFile) != state ||
            fileState(endFile) != state || !(begin <= at) || !(at <= end))
            return Range{at, at};
        return Range{begin, end};
    }

    void declaration(const CXIdxDeclInfo* info) {
        const CXIdxEntityInfo* entity = info->entityInfo;
        if (!entity)
            return;
        const SymbolKind kind = symbolKind(entity->kind);
        const bool named = entity->name && *entity->name;
        // Scopes get their qualified name recorded even in files this TU does not extract:
        // declarations in extracted files may live inside them.
        std::string qualifiedName;
        if (isScope(kind) && info->declAsContainer) {
            const std::string enclosing = scopeOf(info->semanticContainer);
            const std::string part = scopePart(info->cursor);
            qualifiedName = join(enclosing, named ? spelledName(info, entity) : part);
            // What this scope adds to its members' names: nothing for the scopes C++ leaves
            // unwritten (an anonymous or inline namespace, an unscoped enumeration).
            std::string& members = scopeNames_.emplace_back(
                isTransparent(info->cursor) ? enclosing : join(enclosing, part));
            clang_index_setClientContainer(info->declAsContainer, &members);
        }
        if (kind == SymbolKind::Unknown || !named || !entity->USR || !*entity->USR ||
            info->isImplicit)
            return;
        Position pos;
        FileState* state = fileOf(info->loc, &pos);
        // libclang reports declarations in token order: the first of a namespace is the one
        // clang (and clangd's go-to-definition) calls canonical in this TU.
        if (kind == SymbolKind::Namespace && state) {
            const uint64_t usrHash = stableHash(entity->USR);
            if (namespacesSeen_.insert(usrHash).second) {
                record_.namespaceStarts.push_back({usrHash, state->path, pos});
                namespaceStartFiles_.push_back({state->file, spelledName(info, entity)});
            }
        }
        IndexedFile* out = output(state);
        if (!out)
            return;
        const bool local = isLocal(info->cursor);
        if (local && inSystemHeader(info->loc))
            return;
        Symbol& symbol = out->symbols.emplace_back();
        symbol.usr = stableUsr(entity->USR, usrScratch_);
        symbol.name = spelledName(info, entity);
        // A local's name is its own (clangd's hover says `x`, not `f::x`).
        symbol.qualifiedName = !qualifiedName.empty() ? std::move(qualifiedName)
                               : local                ? symbol.name
                                       : join(scopeOf(info->semanticContainer), symbol.name);
        symbol.kind = kind;
        symbol.flags = templateFlags(entity->templateKind) |
                       (info->isDefinition ? kDefinition : 0) | (local ? kLocal : 0);
        symbol.location = pos;
        symbol.extent = extentOf(info->cursor, state, pos);
        symbol.signature = signatureOf(info->cursor, kind, symbol.name);
        relations(info, state, pos, symbol.usrHash());
        // libclang always skips system header bodies when skipping; elsewhere it means another
        // parse in this session had them, and this file's in-body references are missing.
        if ((info->flags & CXIdxDeclFlag_Skipped) && !out->bodiesSkipped &&
            !clang_Location_isInSystemHeader(clang_indexLoc_getCXSourceLocation(info->loc)))
            out->bodiesSkipped = true;
    }

    static bool isFunctionLikeCursor(CXCursorKind kind) {
        switch (kind) {
        case CXCursor_FunctionDecl:
        case CXCursor_CXXMethod:
        case CXCursor_Constructor:
        case CXCursor_Destructor:
        case CXCursor_ConversionFunction:
        case CXCursor_FunctionTemplate:
        case CXCursor_LambdaExpr:
        case CXCursor_BlockExpr:
        case CXCursor_ObjCInstanceMethodDecl:
        case CXCursor_ObjCClassMethodDecl:
            return true;
        default:
            return false;
        }
    }

    /// Declared in a function (or a lambda, or a block): a local variable or parameter, or a
    /// local class and its members, as libclang reports them with
    /// CXIndexOpt_IndexFunctionLocalSymbols.
    static bool isLocal(CXCursor cursor) {
        for (CXCursor c = clang_getCursorSemanticParent(cursor);
             !clang_Cursor_isNull(c) && clang_getCursorKind(c) != CXCursor_TranslationUnit &&
             !clang_isInvalid(clang_getCursorKind(c));
             c = clang_getCursorSemanticParent(c))
            if (isFunctionLikeCursor(clang_getCursorKind(c)))
                return true;
        return false;
    }

    /// Locals are kept where an editor's user works, not in system headers (most of them, in
    /// the bodies of the standard library's templates, and not what anyone navigates).
    static bool inSystemHeader(CXIdxLoc loc) {
        return clang_Location_isInSystemHeader(clang_indexLoc_getCXSourceLocation(loc));
    }

    /// A class definition's bases and a method's overridden methods, as references in the same
    /// file (kRoleBase at each base-specifier, kRoleOverride at the method's name; records.h).
    void relations(const CXIdxDeclInfo* info, FileState* state, Position at, uint64_t subject) {
        if (const CXIdxCXXClassDeclInfo* cls = clang_index_getCXXClassDeclInfo(info)) {
            for (unsigned i = 0; i < cls->numBases; ++i) {
                const CXIdxEntityInfo* base = cls->bases[i]->base;
                if (!base || !base->USR || !*base->USR)
                    continue;
                Position pos;
                if (fileOf(cls->bases[i]->loc, &pos) != state)
                    continue; // spelled through a macro from another file
                IndexedFile* out = output(state);
                if (!out)
                    return;
                out->references.push_back({targetHash(*base), pos, kRoleBase, subject});
            }
        }
        if (info->isRedeclaration || !isFunctionLike(symbolKind(info->entityInfo->kind)))
            return;
        CXCursor* overridden = nullptr;
        unsigned n = 0;
        clang_getOverriddenCursors(info->cursor, &overridden, &n);
        for (unsigned i = 0; i < n; ++i) {
            String usr(clang_getCursorUSR(overridden[i]));
            if (!*usr.c_str())
                continue;
            if (IndexedFile* out = output(state))
                out->references.push_back({stableHash(usr.c_str()), at, kRoleOverride, subject});
        }
        if (overridden)
            clang_disposeOverriddenCursors(overridden);
    }

    void reference(const CXIdxEntityRefInfo* info) {
        const CXIdxEntityInfo* entity = info->referencedEntity;
        if (!entity || !entity->USR || !*entity->USR)
            return;
        Position pos;
        FileState* state = fileOf(info->loc, &pos);
        IndexedFile* out = output(state);
        if (!out)
            return;
        if (pch_) {
            notePchUse(entity->cursor);
            noteOrder(info->loc, state, entity->cursor);
        }
        if (entity->kind == CXIdxEntity_Variable && inSystemHeader(info->loc) &&
            isLocal(entity->cursor))
            return; // as their declarations (declaration())
        Reference& ref = out->references.emplace_back();
        ref.usrHash = targetHash(*entity);
        ref.location = pos;
        ref.roles =
            uint16_t(info->role) | (info->kind == CXIdxEntityRef_Implicit ? kRoleImplicit : 0);
        ref.container = containerOf(info);
    }

    /// The function, method, class or variable whose body or initializer a reference is in (0
    /// at file scope). libclang's parent entity is that, with two exceptions inside function
    /// bodies, where the innermost enclosing function is the answer (as clangd's): the parent
    /// is a local variable for a reference in its initializer (a condition variable, such as
    /// gtest's `gtest_ar_` in every ASSERT_TRUE), and it is the enclosing function for a
    /// reference in a local class's method. The lexical container is that function; its USR is
    /// computed once per function, as references come in source order.
    uint64_t containerOf(const CXIdxEntityRefInfo* info) {
        if (info->container && isFunctionLikeCursor(clang_getCursorKind(info->container->cursor))) {
            const CXCursor& c = info->container->cursor;
            if (c.data[0] != lastContainer_) {
                lastContainer_ = c.data[0];
                String usr(clang_getCursorUSR(c));
                lastContainerHash_ = *usr.c_str() ? stableHash(usr.c_str()) : 0;
            }
            if (lastContainerHash_)
                return lastContainerHash_;
        }
        // libclang has the parent's USR at hand for every reference: hashing it is the cost.
        const CXIdxEntityInfo* parent = info->parentEntity;
        return parent && parent->USR && *parent->USR ? stableHash(parent->USR) : 0;
    }

    /// A diagnostic counts in the file it is in: the main file's (and the command line's) in the
    /// TU record, a header's in the header's record if this TU extracts it. A header's count
    /// depends on which function bodies this parse's session skipped; its owner's does not
    /// (header_claims.h), so only that one is kept.
    void diagnostics(CXDiagnosticSet set) {
        const unsigned n = clang_getNumDiagnosticsInSet(set);
        for (unsigned i = 0; i < n; ++i) {
            CXDiagnostic diag = clang_getDiagnosticInSet(set, i);
            CXDiagnosticSeverity severity = clang_getDiagnosticSeverity(diag);
            if (severity >= CXDiagnostic_Warning) {
                CXFile file = nullptr;
                clang_getExpansionLocation(clang_getDiagnosticLocation(diag), &file, nullptr,
                                           nullptr, nullptr);
                std::string path = file ? String(clang_File_tryGetRealPathName(file)).str() : "";
                Diagnostics& counts =
                    path.empty() || path == command_.file ? mainDiagnostics_ : byFile_[path];
                if (severity == CXDiagnostic_Warning) {
                    ++counts.warnings;
                } else {
                    std::string text =
                        String(clang_formatDiagnostic(diag, CXDiagnostic_DisplaySourceLocation |
                                                                CXDiagnostic_DisplayColumn))
                            .str();
                    if (counts.errors++ == 0)
                        counts.firstError = text;
                    if (allDiagnostics_.errors++ == 0)
                        allDiagnostics_.firstError = std::move(text);
                }
                allDiagnostics_.warnings += severity == CXDiagnostic_Warning;
            }
            clang_disposeDiagnostic(diag);
        }
    }

    /// A namespace a macro opens (fmt's `FMT_BEGIN_NAMESPACE`, defined as `namespace fmt {
    /// inline namespace v9 {`) starts where the macro's definition spells its name, as clangd
    /// answers, not at the macro's use. Needs the preprocessing record (the macro expansion under
    /// the name's position); without it, or when no `namespace NAME` is in the definition's
    /// tokens (a macro that pastes the name), the start stays at the use.
    void respellNamespaceStarts(CXTranslationUnit tu) {
        for (size_t i = 0; i < record_.namespaceStarts.size(); ++i) {
            TuRecord::NamespaceStart& start = record_.namespaceStarts[i];
            const auto& [file, name] = namespaceStartFiles_[i];
            const CXSourceLocation at =
                clang_getLocation(tu, file, start.location.line, start.location.column);
            CXCursor expansion = clang_getCursor(tu, at);
            if (clang_getCursorKind(expansion) != CXCursor_MacroExpansion)
                continue; // written in place, or not a macro we can read
            CXCursor definition = clang_getCursorReferenced(expansion);
            if (clang_Cursor_isNull(definition))
                continue;
            CXToken* tokens = nullptr;
            unsigned n = 0;
            clang_tokenize(tu, clang_getCursorExtent(definition), &tokens, &n);
            for (unsigned t = 0; t + 1 < n; ++t) {
                if (String(clang_getTokenSpelling(tu, tokens[t])).str() != "namespace" ||
                    clang_getTokenKind(tokens[t + 1]) != CXToken_Identifier ||
                    String(clang_getTokenSpelling(tu, tokens[t + 1])).str() != name)
                    continue;
                Position spelled;
                if (FileState* in = fileOf(clang_getTokenLocation(tu, tokens[t + 1]), &spelled);
                    in && spelled.line) {
                    start.path = in->path;
                    start.location = spelled;
                }
                break;
            }
            if (tokens)
                clang_disposeTokens(tu, tokens, n);
        }
    }

    /// Macro definitions and expansions, from the preprocessing record of the finished TU.
    void macros(CXTranslationUnit tu) {
        macrosVisited_ = true;
        clang_visitChildren(
            clang_getTranslationUnitCursor(tu),
            [](CXCursor cursor, CXCursor, CXClientData data) {
                auto* self = static_cast<TuExtractor*>(data);
                CXCursorKind kind = clang_getCursorKind(cursor);
                if (kind == CXCursor_MacroDefinition)
                    self->macroDefinition(cursor);
                else if (kind == CXCursor_MacroExpansion)
                    self->macroExpansion(cursor);
                return CXChildVisit_Continue;
            },
            this);
    }

    /// Hashes every file the parse read, from the buffers libclang parsed (not from the disk, which
    /// may have changed since): what this TU's up-to-date check compares against next time.
    void recordContents(CXTranslationUnit tu) {
        for (const auto& [path, state] : seenPaths_) {
            size_t size = 0;
            const char* data = clang_getFileContents(tu, state->file, &size);
            if (data)
                seenHashes_[path] = hash64(std::string_view(data, size));
        }
    }

    /// Symbol::comment of every symbol extracted, from the text of the buffers the parse read
    /// (indexer/doc_comment.h).
    void attachComments(CXTranslationUnit tu) {
        for (Extracted& extracted : extracted_) {
            IndexedFile& file = extracted.file;
            if (file.symbols.empty())
                continue;
            auto state = seenPaths_.find(file.file.path);
            if (state == seenPaths_.end())
                continue;
            size_t size = 0;
            const char* data = clang_getFileContents(tu, state->second->file, &size);
            if (!data)
                continue;
            const std::string_view text(data, size);
            const std::vector<size_t> starts = lineStarts(text);
            for (Symbol& symbol : file.symbols) {
                const uint32_t first = std::min(symbol.extent.begin.line, symbol.location.line);
                symbol.comment = docComment(text, starts, first ? first : symbol.location.line,
                                            symbol.location.line);
            }
        }
    }

    /// A reason for a TU libclang gave up on without an error diagnostic to show for it.
    void explainFailure(int rc) {
        // Nothing of it is extracted: every diagnostic is the TU's.
        record_.errorCount = allDiagnostics_.errors;
        record_.warningCount = allDiagnostics_.warnings;
        record_.firstError = allDiagnostics_.firstError;
        if (record_.errorCount > 0 || !record_.firstError.empty())
            return;
        switch (rc) {
        case CXError_Crashed:
            record_.firstError = "libclang crashed while parsing it";
            break;
        case CXError_InvalidArguments:
            record_.firstError = "libclang refused the arguments";
            break;
        case CXError_ASTReadError:
            record_.firstError = "libclang could not read a precompiled file it needs";
            break;
        default:
            record_.firstError = "libclang could not parse it: its compiler driver made no single "
                                 "compile job of the command, or clang hit a fatal error";
        }
    }

    /// PchReport::systemIncludes of a plain parse, in the order first included, include-guarded
    /// headers only, that its own (non-system) files include: system headers as spelled (one
    /// with quotes only if the includer's directory has no such file, where the PCH's source
    /// would not look), project headers by real path (a PCH's source is elsewhere: a name would
    /// not find them from there).
    std::vector<std::string> systemIncludes(CXTranslationUnit tu) const {
        std::vector<std::string> out;
        std::unordered_set<std::string> seen;
        auto isSystem = [&](const FileState* state) {
            return clang_Location_isInSystemHeader(clang_getLocation(tu, state->file, 1, 1));
        };
        for (const Candidate& c : candidates_) {
            if (!clang_isFileMultipleIncludeGuarded(tu, c.file->file) || isSystem(c.includer))
                continue;
            std::string spelling;
            if (isSystem(c.file)) {
                std::error_code error;
                const std::string name = c.spelling.substr(1, c.spelling.size() - 2);
                if (c.spelling.front() == '<' ||
                    !std::filesystem::exists(
                        std::filesystem::path(c.includer->path).parent_path() / name, error))
                    spelling = c.spelling;
            } else if (c.file->path != command_.file &&
                       std::filesystem::path(c.file->path).filename() ==
                           std::filesystem::path(c.spelling.substr(1, c.spelling.size() - 2))
                               .filename()) {
                // By real path; not one reached through a symlink of another name, whose macros'
                // USRs would name the other file.
                spelling = "\"" + c.file->path + "\"";
            }
            if (spelling.empty() || !seen.insert(spelling).second)
                continue;
            out.push_back(spelling);
        }
        return out;
    }

    /// A parse against a PCH: whether its answers are those of a plain parse (pch.h), and if so,
    /// the PCH's files join the TU's. Returns the report of the fallback otherwise.
    std::optional<PchReport> checkPch(CXTranslationUnit tu) {
        const PchManifest& m = pch_->manifest;
        // When each file of the PCH would have been included: the first #include of a PCH file
        // whose includes, followed, reach it.
        // An unguarded file this TU includes, it enters itself: what that entry includes, it
        // reports. A guarded one comes with what its first entry in the PCH included.
        std::vector<uint32_t> inclusion(m.files.size(), UINT32_MAX);
        std::vector<char> visited(m.nodes.size(), 0);
        std::vector<uint32_t> enteredAgain;
        // One that includes only once (PchManifest::File::includesOnce) is followed as a guarded
        // one: a plain parse's first entry, wherever it is, includes what the PCH's first did.
        auto once = [&](uint32_t f) { return m.files[f].guarded || m.files[f].includesOnce; };
        for (const auto& [seq, index] : pchReached_) {
            if (!once(index)) {
                // Entered again here by this TU itself, after the PCH: with the PCH's history.
                inclusion[index] = std::min(inclusion[index], seq);
                enteredAgain.push_back(index);
                continue;
            }
            inclusion[index] = std::min(inclusion[index], seq);
            std::vector<uint32_t> stack{m.files[index].node};
            while (!stack.empty()) {
                const uint32_t n = stack.back();
                stack.pop_back();
                if (visited[n])
                    continue;
                visited[n] = 1;
                const uint32_t f = m.nodes[n].file;
                if (!once(f) && m.files[f].node != n)
                    enteredAgain.push_back(f);
                inclusion[f] = std::min(inclusion[f], seq);
                stack.insert(stack.end(), m.nodes[n].children.begin(), m.nodes[n].children.end());
                if (once(f) && m.files[f].node != n)
                    stack.push_back(m.files[f].node);
            }
        }
        // An unguarded file entered again (by this TU after the PCH, or in the PCH after a first
        // time) may include other files than it did another time: the first time, past an inner
        // guard (glibc's bits/stat.h), or with other __need_ macros (stddef.h). Which this TU's
        // entry would have included depends on what came before it, which the PCH's order does
        // not tell; unless the TU reaches each of those files anyway, its file list is not known.
        for (uint32_t f : enteredAgain)
            for (uint32_t child : pch_->childFiles(f))
                if (inclusion[child] == UINT32_MAX)
                    return PchReport{PchMode::Incomplete,
                                     m.files[child].path + ", which " + m.files[f].path +
                                         " includes in another of its entries",
                                     {},
                                     {}};
        // A file of the PCH this TU does not include is only a file too many if nothing it
        // extracts uses a declaration or macro of it: a plain parse would not have seen them.
        for (uint32_t f = 0; f < pchUsed_.size(); ++f)
            if (!clang_Cursor_isNull(pchUsed_[f]) && inclusion[f] == UINT32_MAX)
                return PchReport{PchMode::Incomplete,
                                 m.files[f].path + " (for " + describe(pchUsed_[f]) + ")",
                                 {},
                                 {}};
        for (const auto& [f, definition, cursor] : pchUsedOr_)
            if (inclusion[f] == UINT32_MAX && inclusion[definition] == UINT32_MAX)
                return PchReport{PchMode::Incomplete,
                                 m.files[f].path + " (for " + describe(cursor) + ")",
                                 {},
                                 {}};
        // Order: what the TU's own files use of the PCH, a plain parse would have read before.
        for (const auto& [where, use] : earliestUses_) {
            const uint32_t at = seqAt(where.first, use.offset);
            const uint32_t file = where.second;
            if (inclusion[file] == UINT32_MAX || at >= inclusion[file] ||
                (use.alternative != UINT32_MAX && at >= inclusion[use.alternative]))
                continue;
            return PchReport{PchMode::Order,
                             describe(use.target) + " in " + m.files[file].path + ", used in " +
                                 where.first->path + " at offset " + std::to_string(use.offset) +
                                 " before it would have been included",
                             {},
                             {}};
        }
        // Macros: a name this TU defines (or undefines) before a PCH file that uses it would have
        // come, or a macro of the PCH it uses before the file defining it would have come.
        auto fallback = [](const std::string& what, const std::string& name, const FileState* in,
                           uint32_t offset, const std::string& before) {
            return PchReport{PchMode::Macros,
                             name + " " + what + " in " + in->path + " at offset " +
                                 std::to_string(offset) + ", before " + before,
                             {},
                             {}};
        };
        std::vector<std::pair<uint32_t, uint32_t>> reentered; // (seq, file) of unguarded ones
        // This TU's macro events, in its order: (sequence number, file, offset, name, kind).
        struct Event {
            uint32_t seq;
            const FileState* state;
            uint32_t offset;
            std::string name;
            char kind; // 'd' define, 'x' undef, 'u' use
        };
        std::vector<Event> events;
        for (const auto& [path, state] : seenPaths_) {
            size_t size = 0;
            const char* data = clang_getFileContents(tu, state->file, &size);
            if (!data)
                continue;
            const std::string_view text(data, size);
            const std::vector<LoadedPch::Occurrence> occurrences =
                pch_->scan(path, hash64(text), text);
            if (occurrences.empty())
                continue;
            // What the preprocessor skipped (#if 0, a branch not taken) says nothing, but for the
            // conditions that decided it: a skipped range runs from the `#if` whose condition
            // was false (or the `#elif`/`#else` after a branch taken) to the directive that ended
            // it, an `#elif` whose condition was true among them; an `#elif` inside it was
            // evaluated too, if no branch was taken before it. Those lines are read (an `#elif`
            // that was not evaluated, or one nested in a skipped block, counts as well: a
            // fallback too many at most).
            std::vector<std::pair<unsigned, unsigned>> skipped;
            if (CXSourceRangeList* ranges = clang_getSkippedRanges(tu, state->file)) {
                for (unsigned r = 0; r < ranges->count; ++r) {
                    unsigned begin = 0, end = 0;
                    clang_getFileLocation(clang_getRangeStart(ranges->ranges[r]), nullptr, nullptr,
                                          nullptr, &begin);
                    clang_getFileLocation(clang_getRangeEnd(ranges->ranges[r]), nullptr, nullptr,
                                          nullptr, &end);
                    // Past the first directive's line, up to the last one's.
                    begin = unsigned(directiveLineEnd(text, begin));
                    end = unsigned(directiveLineStart(text, std::min<size_t>(end, text.size())));
                    if (begin < end)
                        skipped.emplace_back(begin, end);
                }
                clang_disposeSourceRangeList(ranges);
            }
            for (const LoadedPch::Occurrence& o : occurrences) {
                // With the preprocessing record, the definitions that took effect are known
                // (ownDefinitions_): the text's own may sit in a branch not taken.
                if (o.kind == 'd' && macrosVisited_)
                    continue;
                if (std::any_of(skipped.begin(), skipped.end(),
                                [&](const auto& range) {
                                    return range.first <= o.offset && o.offset < range.second;
                                }) &&
                    !onElifLine(text, o.offset))
                    continue;
                events.push_back({seqAt(state, o.offset), state, o.offset, o.name, o.kind});
            }
        }
        for (const auto& [state, offset, name] : ownDefinitions_)
            if (pch_->identifiers.contains(name))
                events.push_back({seqAt(state, offset), state, offset, name, 'd'});
        // Unguarded files of the PCH this TU enters again itself: what they use, they use there.
        for (const auto& [seq, index] : pchReached_)
            if (!m.files[index].guarded)
                reentered.emplace_back(seq, index);
        std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
            return std::tie(a.seq, a.state, a.offset) < std::tie(b.seq, b.state, b.offset);
        });
        auto before = [](const Event& a, const Event& b) {
            return std::tie(a.seq, a.state, a.offset) < std::tie(b.seq, b.state, b.offset);
        };
        // A use of `name` strictly between two points of the TU: its own, or in an unguarded
        // file of the PCH it enters there.
        auto usedBetween = [&](const std::string& name, uint32_t from, uint32_t to) {
            for (const Event& e : events)
                if (e.kind == 'u' && e.name == name && from < e.seq && e.seq < to)
                    return true;
            auto users = pch_->identifiers.find(name);
            if (users == pch_->identifiers.end())
                return false;
            for (const auto& [seq, index] : reentered)
                if (from < seq && seq < to)
                    for (const auto& [f, kinds] : *users->second)
                        if (f == index && (kinds & PchManifest::kUse))
                            return true;
            return false;
        };
        for (const Event& e : events) {
            auto macro = pch_->macros.find(e.name);
            if (e.kind == 'x') {
                // An #undef. A guarded file of the PCH that uses the name and would have come
                // after it reads it undefined in a plain parse, and read it as the PCH's build
                // had it then (defined by an earlier file, by -D, or as a name in the body of a
                // macro it defines).
                if (auto users = pch_->identifiers.find(e.name); users != pch_->identifiers.end())
                    for (const auto& [f, kinds] : *users->second)
                        if ((kinds & PchManifest::kUse) && m.files[f].guarded &&
                            inclusion[f] != UINT32_MAX && e.seq < inclusion[f])
                            return fallback("undefined", e.name, e.state, e.offset,
                                            m.files[f].path);
                // Of a macro the PCH defines, before the file defining it would have come: until
                // then a plain parse had no definition either; from there on it has that file's,
                // and this parse none. It matters where the TU uses the name after that file
                // (whatever it defined itself before the #undef).
                if (macro == pch_->macros.end())
                    continue;
                const uint32_t at = inclusion[macro->second->file];
                if (at != UINT32_MAX && e.seq < at && usedBetween(e.name, at - 1, UINT32_MAX))
                    return fallback("undefined", e.name, e.state, e.offset,
                                    m.files[macro->second->file].path);
                continue;
            }
            if (e.kind == 'u') {
                // Uses a macro of the PCH before the file defining it would have come (and after
                // no definition of its own).
                if (macro == pch_->macros.end())
                    continue;
                const uint32_t at = inclusion[macro->second->file];
                const bool ownFirst =
                    std::any_of(events.begin(), events.end(), [&](const Event& d) {
                        return d.kind == 'd' && d.name == e.name && before(d, e);
                    });
                if (e.seq < at && !ownFirst)
                    return fallback("used", e.name, e.state, e.offset,
                                    m.files[macro->second->file].path);
                continue;
            }
            // A definition: until the TU undefines it again in the same file, PCH files that
            // would have come in between would have seen it.
            uint32_t closed = UINT32_MAX;
            for (const Event& x : events)
                if (x.kind == 'x' && x.name == e.name && x.state == e.state && before(e, x)) {
                    closed = x.seq;
                    break;
                }
            auto users = pch_->identifiers.find(e.name);
            if (users == pch_->identifiers.end())
                continue;
            // Or until an unguarded file of the PCH that undefines it is entered again (glibc's
            // __need_ and __GLIBC_INTERNAL_STARTING_HEADER_IMPLEMENTATION requests).
            for (const auto& [seq, index] : reentered)
                if (e.seq < seq && seq < closed)
                    for (const auto& [f, kinds] : *users->second)
                        if (f == index && (kinds & PchManifest::kUndef))
                            closed = std::min(closed, seq);
            for (const auto& [f, kinds] : *users->second) {
                const uint32_t at = inclusion[f];
                if (at == UINT32_MAX || !m.files[f].guarded || !(e.seq < at && at < closed))
                    continue;
                // The file uses the name: it would have read this definition. Or it defines or
                // undefines it: what the TU uses of it after that would differ.
                if ((kinds & PchManifest::kUse) ||
                    ((kinds & (PchManifest::kUndef | PchManifest::kDefine)) &&
                     usedBetween(e.name, at, closed)))
                    return fallback("defined", e.name, e.state, e.offset, m.files[f].path);
            }
        }
        // Owners: a file of the PCH this TU must extract is not seen through the PCH.
        for (uint32_t f = 0; f < m.files.size(); ++f)
            if (inclusion[f] != UINT32_MAX && claimer_.claim(m.files[f].path, rank_))
                return PchReport{PchMode::Owner, m.files[f].path, {}, {}};
        for (uint32_t f = 0; f < m.files.size(); ++f)
            if (inclusion[f] != UINT32_MAX && !seenPaths_.contains(m.files[f].path)) {
                includedFiles_.push_back(m.files[f].path);
                seenHashes_[m.files[f].path] = m.files[f].hash;
            }
        // Where each namespace is first opened: the PCH's files come where they would have.
        for (const PchManifest::NamespaceStart& start : m.namespaceStarts) {
            const uint32_t file = pch_->fileIndex.at(start.path);
            if (inclusion[file] == UINT32_MAX)
                continue; // in a file it does not include
            if (namespacesSeen_.insert(start.usrHash).second) {
                record_.namespaceStarts.push_back(
                    {start.usrHash, start.path, Position{start.line, start.column}});
                continue;
            }
            for (TuRecord::NamespaceStart& own : record_.namespaceStarts) {
                if (own.usrHash != start.usrHash || pch_->fileIndex.contains(own.path))
                    continue;
                auto state = seenPaths_.find(own.path);
                if (state == seenPaths_.end())
                    break;
                const CXSourceLocation at = clang_getLocation(
                    tu, state->second->file, own.location.line, own.location.column);
                unsigned offset = 0;
                clang_getFileLocation(at, nullptr, nullptr, nullptr, &offset);
                if (inclusion[file] < seqAt(state->second, offset)) {
                    own.path = start.path;
                    own.location = Position{start.line, start.column};
                }
                break;
            }
        }
        return std::nullopt;
    }

    /// The #include (its sequence number) that an offset of this TU's own file comes after, in
    /// the file's first pass.
    /// How far the parse had come (the last #include's sequence number, nested ones included)
    /// when it reached `offset` of this TU's own file, in the file's first pass: just before the
    /// file's next #include, or when the file was left.
    uint32_t seqAt(const FileState* state, uint32_t offset) {
        if (auto marks = directives_.find(state); marks != directives_.end()) {
            uint32_t previous = 0;
            for (const auto& [where, n] : marks->second) {
                if (where < previous)
                    break; // a later pass through the file
                if (where >= offset)
                    return n - 1;
                previous = where;
            }
        }
        auto left = exitSeq_.find(state);
        return left == exitSeq_.end() ? includeSeq_ : left->second;
    }

    /// The manifest of the PCH this parse built.
    PchManifest manifest(CXTranslationUnit tu, const std::vector<std::string>& headers) {
        PchManifest m;
        m.headers = headers;
        std::unordered_map<const FileState*, uint32_t> index;
        for (const std::string& path : includedFiles_) {
            if (path == command_.file)
                continue;
            const FileState* state = seenPaths_.at(path);
            index.emplace(state, uint32_t(m.files.size()));
            m.files.push_back({path, seenHash(path), {}});
        }
        auto indexOf = [&](const FileState* state) -> std::optional<uint32_t> {
            if (auto found = seenPaths_.find(state->path); found != seenPaths_.end())
                if (auto i = index.find(found->second); i != index.end())
                    return i->second;
            return std::nullopt;
        };
        for (const auto& [state, children] : entries_) {
            std::optional<uint32_t> file = indexOf(state);
            m.nodes.push_back({file.value_or(0), children});
        }
        for (uint32_t f = 0; f < m.files.size(); ++f)
            m.files[f].node = uint32_t(firstEntry_.at(seenPaths_.at(m.files[f].path)));
        std::unordered_map<std::string_view, std::vector<std::pair<uint32_t, uint8_t>>> identifiers;
        // Per file and name, the last #undef's offset: a macro its own file undefines after
        // defining it is not one of the PCH's.
        std::map<std::pair<uint32_t, std::string_view>, uint32_t> lastUndef;
        for (uint32_t f = 0; f < m.files.size(); ++f) {
            size_t size = 0;
            const FileState* state = seenPaths_.at(m.files[f].path);
            const char* data = clang_getFileContents(tu, state->file, &size);
            m.files[f].guarded = clang_isFileMultipleIncludeGuarded(tu, state->file);
            if (!data)
                continue;
            m.files[f].includesOnce =
                !m.files[f].guarded && includesOnlyOnce(std::string_view(data, size));
            for (const Token& token : scanIdentifiers(std::string_view(data, size))) {
                const uint8_t kind = token.kind == 'd'   ? PchManifest::kDefine
                                     : token.kind == 'u' ? PchManifest::kUndef
                                                         : PchManifest::kUse;
                auto& in = identifiers[token.name];
                if (in.empty() || in.back().first != f)
                    in.emplace_back(f, 0);
                in.back().second |= kind;
                if (kind == PchManifest::kUndef)
                    lastUndef[{f, token.name}] = token.offset;
            }
        }
        for (auto& [name, in] : identifiers)
            m.identifiers.emplace_back(std::string(name), std::move(in));
        std::sort(m.identifiers.begin(), m.identifiers.end());
        for (const auto& [name, cursor] : macroDefinitions_) {
            Position pos;
            const FileState* state = fileOf(clang_getCursorLocation(cursor), &pos);
            if (!state)
                continue;
            std::optional<uint32_t> file = indexOf(state);
            if (!file)
                continue;
            unsigned offset = 0;
            clang_getFileLocation(clang_getCursorLocation(cursor), nullptr, nullptr, nullptr,
                                  &offset);
            if (auto undef = lastUndef.find({*file, std::string_view(name)});
                undef != lastUndef.end() && undef->second > offset)
                continue;
            m.macros.push_back({name, *file, String(clang_getCursorUSR(cursor)).str()});
        }
        std::sort(m.macros.begin(), m.macros.end(),
                  [](const auto& a, const auto& b) { return a.name < b.name; });
        for (const TuRecord::NamespaceStart& start : record_.namespaceStarts)
            m.namespaceStarts.push_back(
                {start.usrHash, start.path, start.location.line, start.location.column});
        return m;
    }

    IndexedTu finish(TuStatus status, uint32_t parseMillis) {
        IndexedTu tu;
        tu.mainFile = command_.file;
        if (status == TuStatus::Ok) {
            record_.errorCount = mainDiagnostics_.errors;
            record_.warningCount = mainDiagnostics_.warnings;
            record_.firstError = mainDiagnostics_.firstError;
        }
        tu.record = std::move(record_);
        tu.aliases = std::move(aliases_);
        tu.record.commandHash = command_.hash();
        tu.record.status = status;
        tu.record.parseMillis = parseMillis;
        if (status == TuStatus::Ok && tu.record.errorCount > 0)
            tu.record.status = TuStatus::Errors;
        // The main file first: the store keys the TU record by it.
        tu.includedFiles.push_back(command_.file);
        for (std::string& path : includedFiles_)
            if (path != command_.file)
                tu.includedFiles.push_back(std::move(path));
        // For a TU that failed or crashed too: it is judged by them next time (no crash loop).
        for (const std::string& path : tu.includedFiles)
            tu.includedHashes.push_back(seenHash(path));
        if (status == TuStatus::Ok) {
            for (Extracted& extracted : extracted_) {
                if (extracted.owner->load(std::memory_order_relaxed) != rank_)
                    continue; // taken over during the parse
                FileRecord& record = extracted.file.file;
                const Diagnostics& counts =
                    record.path == command_.file ? mainDiagnostics_ : byFile_[record.path];
                record.errorCount = counts.errors;
                record.warningCount = counts.warnings;
                record.firstError = counts.firstError;
                const uint64_t seen = seenHash(record.path);
                if (seen != record.contentHash) {
                    // Changed between the claim's stamp and the parse: store what was parsed,
                    // and no mtime, so that the next run hashes the file again.
                    record.contentHash = seen;
                    record.mtimeNs = 0;
                    record.asciiOnly = false;
                }
                sortAndMerge(extracted.file);
                tu.files.push_back(std::move(extracted.file));
            }
        }
        return tu;
    }

private:
    /// The hash of `path` as parsed; from the disk when libclang kept no buffer for it (0 if it
    /// cannot be read: the TU is then out of date next time).
    uint64_t seenHash(const std::string& path) {
        if (auto it = seenHashes_.find(path); it != seenHashes_.end())
            return it->second;
        std::optional<FileStamp> stamp = stampFile(path);
        return seenHashes_[path] = stamp ? stamp->contentHash : 0;
    }

    /// Source order, as the store keeps them; one reference per symbol and position (a macro
    /// argument used twice is one use of it where it is spelled), with the roles merged.
    static void sortAndMerge(IndexedFile& file) {
        std::stable_sort(file.symbols.begin(), file.symbols.end(),
                         [](const Symbol& a, const Symbol& b) { return a.location < b.location; });
        auto& refs = file.references;
        std::stable_sort(refs.begin(), refs.end(), [](const Reference& a, const Reference& b) {
            return std::tie(a.location, a.usrHash) < std::tie(b.location, b.usrHash);
        });
        size_t out = 0;
        for (size_t i = 0; i < refs.size(); ++i) {
            if (out && refs[out - 1].location == refs[i].location &&
                refs[out - 1].usrHash == refs[i].usrHash) {
                refs[out - 1].roles |= refs[i].roles;
                // The first report's container: libclang indexes a local class's method bodies
                // twice, first as the method's, then as the enclosing function's.
                if (!refs[out - 1].container)
                    refs[out - 1].container = refs[i].container;
            } else
                refs[out++] = refs[i];
        }
        refs.resize(out);
    }

    static std::string join(const std::string& scope, const std::string& name) {
        return scope.empty() ? name : scope + "::" + name;
    }

    /// A declaration's own name; a class template specialization's carries its arguments as
    /// written ("Box<int>", "Box<T *>"), as clangd names it. A function template specialization
    /// keeps its plain name (clangd's too): its arguments are in its signature.
    static std::string spelledName(const CXIdxDeclInfo* info, const CXIdxEntityInfo* entity) {
        if (entity->templateKind != CXIdxEntity_TemplateSpecialization &&
            entity->templateKind != CXIdxEntity_TemplatePartialSpecialization)
            return entity->name;
        switch (clang_getCursorKind(info->cursor)) {
        case CXCursor_StructDecl:
        case CXCursor_ClassDecl:
        case CXCursor_UnionDecl:
        case CXCursor_ClassTemplatePartialSpecialization:
            return String(clang_getCursorDisplayName(info->cursor)).str();
        default:
            return entity->name;
        }
    }

    /// True for the declaration contexts C++ does not write in a qualified name: linkage
    /// specifications (`extern "C"`), `export` blocks, anonymous and inline namespaces (as
    /// clang's printer with clangd's SuppressUnwrittenScope), and unscoped enumerations, whose
    /// enumerators are declared in the enclosing scope ([dcl.enum]/10).
    static bool isTransparent(CXCursor cursor) {
        switch (clang_getCursorKind(cursor)) {
        case CXCursor_LinkageSpec:
        case CXCursor_UnexposedDecl: // an ExportDecl, in libclang 16
            return true;
        case CXCursor_Namespace:
            return clang_Cursor_isInlineNamespace(cursor) || clang_Cursor_isAnonymous(cursor);
        case CXCursor_EnumDecl:
            return !clang_EnumDecl_isScoped(cursor);
        default:
            return false;
        }
    }

    /// What a scope adds to the names inside it (when not transparent): its name, a
    /// specialization's with its arguments, "(anonymous struct)" for an unnamed record.
    static std::string scopePart(CXCursor cursor) {
        const CXCursorKind kind = clang_getCursorKind(cursor);
        if (kind == CXCursor_ClassTemplatePartialSpecialization ||
            (kind != CXCursor_ClassTemplate &&
             !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(cursor)) &&
             (kind == CXCursor_StructDecl || kind == CXCursor_ClassDecl ||
              kind == CXCursor_UnionDecl)))
            return String(clang_getCursorDisplayName(cursor)).str();
        if (clang_Cursor_isAnonymous(cursor)) {
            switch (kind) {
            case CXCursor_StructDecl:
                return "(anonymous struct)";
            case CXCursor_UnionDecl:
                return "(anonymous union)";
            case CXCursor_ClassDecl:
                return "(anonymous class)";
            default:
                return "(anonymous)";
            }
        }
        return String(clang_getCursorSpelling(cursor)).str();
    }

    /// The qualified name of the scope `container` stands for, "" at file scope. Scopes reported
    /// as declarations carry it as their client container; the rest (linkage specifications,
    /// export blocks, implicit scopes) are named by walking their semantic parents.
    std::string scopeOf(const CXIdxContainerInfo* container) {
        if (!container)
            return {};
        if (const auto* scope =
                static_cast<const std::string*>(clang_index_getClientContainer(container)))
            return *scope;
        return scopeOfCursor(container->cursor);
    }

    std::string scopeOfCursor(CXCursor cursor) {
        std::string out;
        for (CXCursor c = cursor;
             !clang_Cursor_isNull(c) && clang_getCursorKind(c) != CXCursor_TranslationUnit &&
             !clang_isInvalid(clang_getCursorKind(c));
             c = clang_getCursorSemanticParent(c)) {
            if (isTransparent(c))
                continue;
            const std::string part = scopePart(c);
            out = out.empty() ? part : part + "::" + out;
        }
        return out;
    }

    void macroDefinition(CXCursor cursor) {
        if (clang_Cursor_isMacroBuiltin(cursor))
            return;
        // Every definition is known to the bodies after it, whichever TU extracts its file.
        std::string name = String(clang_getCursorSpelling(cursor)).str();
        Position pos;
        FileState* state = fileOf(clang_getCursorLocation(cursor), &pos);
        if (pch_ && state && !state->pch) {
            unsigned offset = 0;
            clang_getSpellingLocation(clang_getCursorLocation(cursor), nullptr, nullptr, nullptr,
                                      &offset);
            ownDefinitions_.push_back({state, offset, name});
        }
        IndexedFile* out = output(state);
        if (!out) {
            macroDefinitions_[std::move(name)] = cursor;
            return;
        }
        Symbol& symbol = out->symbols.emplace_back();
        symbol.name = name;
        symbol.qualifiedName = symbol.name;
        symbol.usr = String(clang_getCursorUSR(cursor)).str();
        symbol.kind = SymbolKind::Macro;
        symbol.flags = kDefinition;
        symbol.location = pos;
        symbol.extent = extentOf(cursor, state, pos);
        if (symbol.usr.empty()) {
            out->symbols.pop_back();
            return;
        }
        macroUses(cursor, state, out);
        macroDefinitions_[std::move(name)] = cursor;
    }

    /// The macros a macro's definition uses (`#define EXPECT_EQ_POSIX(a, b) EXPECT_EQ(a, b)`), as
    /// references in its body, as clangd finds them: each identifier of the body that names a
    /// macro defined before this one. The preprocessing record has no expansions there (a body is
    /// expanded where it is used), so the tokens are read. Not in system headers, where libclang
    /// reports no references either.
    void macroUses(CXCursor definition, FileState* state, IndexedFile* out) {
        if ((macroDefinitions_.empty() && !pch_) ||
            clang_Location_isInSystemHeader(clang_getCursorLocation(definition)))
            return;
        CXTranslationUnit tu = clang_Cursor_getTranslationUnit(definition);
        CXToken* tokens = nullptr;
        unsigned n = 0;
        clang_tokenize(tu, clang_getCursorExtent(definition), &tokens, &n);
        for (unsigned t = 1; t < n; ++t) { // tokens[0] is the macro's own name
            if (clang_getTokenKind(tokens[t]) != CXToken_Identifier)
                continue;
            const std::string name = String(clang_getTokenSpelling(tu, tokens[t])).str();
            auto used = macroDefinitions_.find(name);
            // A macro of the PCH is defined before: checkPch() made sure of it.
            const PchManifest::Macro* fromPch = nullptr;
            if (used == macroDefinitions_.end()) {
                auto found =
                    pch_ ? pch_->macros.find(name) : decltype(pch_->macros)::const_iterator();
                if (!pch_ || found == pch_->macros.end())
                    continue;
                fromPch = found->second;
            }
            Position pos;
            if (fileOf(clang_getTokenLocation(tu, tokens[t]), &pos) != state)
                continue;
            // Not the compiler's predefined macros (__GNUC__): a parse against a PCH does not
            // have their definitions, and the store none either.
            if (!fromPch) {
                CXFile defined = nullptr;
                clang_getFileLocation(clang_getCursorLocation(used->second), &defined, nullptr,
                                      nullptr, nullptr);
                if (!defined)
                    continue;
            }
            const std::string usr =
                fromPch ? fromPch->usr : String(clang_getCursorUSR(used->second)).str();
            if (!usr.empty())
                out->references.push_back({hash64(usr), pos, kRoleReference, 0});
        }
        if (tokens)
            clang_disposeTokens(tu, tokens, n);
    }

    void macroExpansion(CXCursor cursor) {
        Position pos;
        FileState* state = fileOf(clang_getCursorLocation(cursor), &pos);
        IndexedFile* out = output(state);
        if (!out)
            return;
        CXCursor definition = clang_getCursorReferenced(cursor);
        if (clang_Cursor_isNull(definition) || clang_Cursor_isMacroBuiltin(definition))
            return;
        if (pch_)
            notePchUse(definition);
        String usr(clang_getCursorUSR(definition));
        if (!*usr.c_str())
            return;
        Reference& ref = out->references.emplace_back();
        ref.usrHash = hash64(usr.c_str());
        ref.location = pos;
        ref.roles = kRoleReference;
    }

    const CompileCommand& command_;
    const size_t rank_;
    FileClaimer& claimer_;
    CountedSharedMutex* extractionLock_;
    ProbeRecording& probes_;
    std::deque<FileState> states_;       // stable addresses: libclang holds them as client files
    std::deque<Extracted> extracted_;    // stable addresses: FileState::out points here
    std::deque<std::string> scopeNames_; // stable addresses: libclang holds them as containers
    std::unordered_map<CXFileUniqueID, FileState*, FileIdHash, FileIdEqual> byId_;
    std::unordered_map<std::string, FileState*> seenPaths_;
    std::vector<std::string> includedFiles_;
    const void* lastContainer_ = nullptr;         ///< containerOf(): the last function container
    uint64_t lastContainerHash_ = 0;              ///< and its USR's hash
    std::unordered_set<uint64_t> namespacesSeen_; ///< TuRecord::namespaceStarts so far
    /// Each TuRecord::namespaceStarts entry's file and namespace name (respellNamespaceStarts()).
    std::vector<std::pair<CXFile, std::string>> namespaceStartFiles_;
    /// Each macro name's latest definition, in the preprocessing record's order (valid while
    /// the translation unit lives: macros() runs before it is disposed).
    std::unordered_map<std::string, CXCursor> macroDefinitions_;
    std::unordered_map<std::string, uint64_t> seenHashes_; ///< path -> hash of the parsed buffer
    std::vector<std::pair<std::string, std::string>> aliases_; ///< see IndexedTu::aliases
    struct Diagnostics {
        uint32_t errors = 0;
        uint32_t warnings = 0;
        std::string firstError;
    };
    Diagnostics mainDiagnostics_;                         ///< the main file's, and unplaced ones
    std::unordered_map<std::string, Diagnostics> byFile_; ///< headers', by real path
    // Precompiled prefixes (pch.h).
    const LoadedPch* pch_ = nullptr; ///< the PCH this parse is against
    bool building_ = false;          ///< this parse builds a PCH
    uint32_t includeSeq_ = 0;        ///< #includes so far, in preprocessing order
    std::unordered_map<const FileState*, uint32_t> entrySeq_; ///< the #include that entered it
    /// Per file, its #includes: (offset of the directive, sequence number).
    std::unordered_map<const FileState*, std::vector<std::pair<uint32_t, uint32_t>>> directives_;
    std::vector<std::pair<uint32_t, uint32_t>> pchReached_; ///< (seq, manifest index) of PCH files
    std::vector<const FileState*> open_; ///< against a PCH: the files entered and not yet left
    std::unordered_map<const FileState*, uint32_t> exitSeq_; ///< when each was first left
    // Building: the include graph by entry (addEntry()).
    std::vector<std::pair<const FileState*, std::vector<uint32_t>>> entries_; ///< file, children
    std::vector<int> entryParent_;
    std::vector<int> stack_;
    std::unordered_map<const FileState*, int> firstEntry_, reentry_;
    struct Candidate {
        const FileState* includer;
        const FileState* file;
        std::string spelling;
    };
    std::vector<Candidate> candidates_; ///< <...> includes: PchReport::systemIncludes
    bool macrosVisited_ = false;        ///< macros() read the preprocessing record
    /// [PCH file]: the first declaration in it that what this TU extracts uses, or null
    std::vector<CXCursor> pchUsed_;
    /// Declarations in a PCH file that are not the definition, which is in another PCH file:
    /// (file, the definition's file, the declaration); the TU must include one of the two.
    struct UsedEither {
        uint32_t file, definitionFile;
        CXCursor declaration;
    };
    std::vector<UsedEither> pchUsedOr_;
    std::string usrScratch_; ///< stableUsr()
    struct EarliestUse {
        uint32_t offset;
        uint32_t alternative; ///< the PCH file of the definition, or UINT32_MAX
        CXCursor target;
    };
    std::map<std::pair<const FileState*, uint32_t>, EarliestUse> earliestUses_; ///< noteOrder()
    std::unordered_set<uint64_t> pchUsedOrSeen_; ///< (file << 32 | definition file)
    /// Against a PCH: the macro definitions of this TU's own files that took effect.
    struct OwnDefinition {
        const FileState* state;
        uint32_t offset;
        std::string name;
    };
    std::vector<OwnDefinition> ownDefinitions_;
    Diagnostics allDiagnostics_; ///< all of them, for a failed parse
    TuRecord record_;
};

IndexerCallbacks callbacks() {
    IndexerCallbacks cb{};
    cb.diagnostic = [](CXClientData data, CXDiagnosticSet set, void*) {
        static_cast<TuExtractor*>(data)->bindProbes();
        static_cast<TuExtractor*>(data)->diagnostics(set);
    };
    cb.enteredMainFile = [](CXClientData data, CXFile file, void*) -> CXIdxClientFile {
        static_cast<TuExtractor*>(data)->bindProbes();
        return static_cast<TuExtractor*>(data)->fileState(file);
    };
    cb.ppIncludedFile = [](CXClientData data,
                           const CXIdxIncludedFileInfo* info) -> CXIdxClientFile {
        static_cast<TuExtractor*>(data)->bindProbes();
        return static_cast<TuExtractor*>(data)->included(info);
    };
    cb.indexDeclaration = [](CXClientData data, const CXIdxDeclInfo* info) {
        auto* extractor = static_cast<TuExtractor*>(data);
        auto lock = extractor->holdExtractionLock();
        extractor->declaration(info);
    };
    cb.indexEntityReference = [](CXClientData data, const CXIdxEntityRefInfo* info) {
        auto* extractor = static_cast<TuExtractor*>(data);
        auto lock = extractor->holdExtractionLock();
        extractor->reference(info);
    };
    return cb;
}

} // namespace

ParseSession::ParseSession(bool skipParsedBodies, bool againstPch)
    : skipParsedBodies_(skipParsedBodies) {
    index_ = clang_createIndex(/*excludeDeclarationsFromPCH=*/againstPch ? 1 : 0,
                               /*displayDiagnostics=*/0);
    action_ = clang_IndexAction_create(index_);
    // libclang computes its resource directory lazily on first use, without a lock: parse an
    // empty buffer here, on one thread, before the session is shared by many.
    const char* name = "/symdex-warm-up.cpp";
    CXUnsavedFile empty{name, "", 0};
    CXTranslationUnit tu = nullptr;
    if (clang_parseTranslationUnit2(index_, name, nullptr, 0, &empty, 1, CXTranslationUnit_None,
                                    &tu) == CXError_Success)
        clang_disposeTranslationUnit(tu);
}

ParseSession::~ParseSession() {
    clang_IndexAction_dispose(action_);
    clang_disposeIndex(index_);
}

namespace {

/// One parse of `command`; against `pch` when given, and then `fallback` says whether its result
/// stands (nullopt) or the TU must be parsed plain. `systemIncludes`: filled by a plain parse.
IndexedTu parseOnce(ParseSession& session, const CompileCommand& command, size_t rank,
                    FileClaimer& claimer, const ParseOptions& options, const LoadedPch* pch,
                    std::optional<PchReport>* fallback, std::vector<std::string>* systemIncludes) {
    // Before libclang is called: it probes the compiler installation before the first callback.
    ProbeRecording probes;
    TuExtractor extractor(command, rank, claimer, options.extractionLock, probes);
    extractor.usePch(pch);
    std::vector<std::string> args;
    args.reserve(command.arguments.size() + 4);
    args.insert(args.end(), command.arguments.begin(), command.arguments.end());
    // No -working-directory: libclang's driver would chdir() the process. The compile database
    // reader made every path absolute instead.
    args.push_back("-Wno-unknown-warning-option");
    if (pch) {
        args.push_back("-include-pch");
        args.push_back(pch->path);
    }
    std::vector<const char*> argv;
    argv.reserve(args.size());
    for (const std::string& a : args)
        argv.push_back(a.c_str());

    // Locals and parameters too: an editor goes to their declarations and finds their uses
    // (kLocal; kept out of name search).
    unsigned indexOptions = CXIndexOpt_IndexFunctionLocalSymbols;
    if (session.skipParsedBodies())
        indexOptions |= CXIndexOpt_SkipParsedBodiesInSession;
    unsigned tuOptions = CXTranslationUnit_KeepGoing;
    if (options.indexMacros)
        tuOptions |= CXTranslationUnit_DetailedPreprocessingRecord;

    IndexerCallbacks cb = callbacks();
    CXTranslationUnit tu = nullptr;
    const auto start = std::chrono::steady_clock::now();
    // The translation unit is always kept until the end: its buffers are what the parse read.
    int rc = clang_indexSourceFileFullArgv(session.action(), &extractor, &cb, sizeof cb,
                                           indexOptions, command.file.c_str(), argv.data(),
                                           int(argv.size()), nullptr, 0, &tu, tuOptions);
    if (rc == CXError_Success && tu) {
        extractor.recordContents(tu);
        if (options.indexMacros) {
            {
                auto lock = extractor.holdExtractionLock();
                extractor.macros(tu);
            }
            // This TU's own record only: no store-wide lock needed.
            extractor.respellNamespaceStarts(tu);
        }
        // Reads this parse's own buffers into its own symbols: no store-wide lock needed.
        extractor.attachComments(tu);
        if (pch) {
            if (extractor.errors() > 0)
                *fallback = PchReport{
                    PchMode::Unusable, "errors with the PCH: " + extractor.firstError(), {}, {}};
            else
                *fallback = extractor.checkPch(tu);
        } else if (systemIncludes) {
            *systemIncludes = extractor.systemIncludes(tu);
        }
    } else if (pch) {
        *fallback =
            PchReport{PchMode::Unusable, "libclang could not parse it against the PCH", {}, {}};
    }
    if (tu)
        clang_disposeTranslationUnit(tu);
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (pch && *fallback)
        return {};

    TuStatus status = TuStatus::Ok;
    if (rc == CXError_Crashed)
        status = TuStatus::Crashed;
    else if (rc != CXError_Success)
        status = TuStatus::Failed;
    if (status != TuStatus::Ok)
        extractor.explainFailure(rc);
    if (status != TuStatus::Ok)
        claimer.release(rank);
    auto lock = extractor.holdExtractionLock();
    IndexedTu result = extractor.finish(status, uint32_t(millis.count()));

    result.absentPaths = probes.take();
    for (auto& link : probes.takeLinks())
        result.aliases.push_back(std::move(link));
    return result;
}

/// Claims nothing: a PCH's build extracts no file.
class NoClaims : public FileClaimer {
public:
    std::optional<FileClaim> claim(const std::string&, size_t) override { return std::nullopt; }
    void release(size_t) override {}
};

} // namespace

std::string_view pchModeName(PchMode mode) {
    switch (mode) {
    case PchMode::None:
        return "no PCH";
    case PchMode::Used:
        return "against a PCH";
    case PchMode::Owner:
        return "owns a PCH file";
    case PchMode::Incomplete:
        return "includes less than the PCH";
    case PchMode::Macros:
        return "macros meet the PCH's";
    case PchMode::Order:
        return "declarations meet the PCH's in another order";
    case PchMode::Unusable:
        return "PCH unusable";
    case PchMode::Built:
        return "PCH built";
    case PchMode::BuildFailed:
        return "PCH build failed";
    }
    return "?";
}

IndexedTu parseTranslationUnit(ParseSession& session, const CompileCommand& command, size_t rank,
                               FileClaimer& claimer, const ParseOptions& options) {
    PchReport report;
    if (!options.pchPath.empty() && options.pchSession) {
        if (std::shared_ptr<const LoadedPch> pch = loadPch(options.pchPath)) {
            std::optional<PchReport> fallback;
            IndexedTu tu = parseOnce(*options.pchSession, command, rank, claimer, options,
                                     pch.get(), &fallback, nullptr);
            if (!fallback) {
                if (options.pchReport)
                    options.pchReport->mode = PchMode::Used;
                return tu;
            }
            report = std::move(*fallback);
        } else {
            report.mode = PchMode::Unusable;
            report.detail = "no manifest at " + options.pchPath + ".manifest";
        }
    }
    IndexedTu tu = parseOnce(session, command, rank, claimer, options, nullptr, nullptr,
                             &report.systemIncludes);
    if (options.pchReport)
        *options.pchReport = std::move(report);
    return tu;
}

PchReport buildPrecompiledHeader(const CompileCommand& command,
                                 const std::vector<std::string>& headers,
                                 const std::string& pchPath, bool indexMacros) {
    PchReport report;
    report.mode = PchMode::BuildFailed;
    const std::string language = pchHeaderLanguage(command);
    if (language.empty() || headers.empty()) {
        report.detail = "no PCH for this language";
        return report;
    }
    CompileCommand source = command;
    source.file = pchPath + ".h";
    {
        std::string text = "// symdex: the shared prefix of a group of TUs (indexer/pch.h)\n";
        for (const std::string& header : headers)
            text += "#include " + header + "\n";
        FILE* out = std::fopen(source.file.c_str(), "w");
        if (!out || std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
            if (out)
                std::fclose(out);
            report.detail = "cannot write " + source.file;
            return report;
        }
        std::fclose(out);
    }
    std::vector<std::string> args = command.arguments;
    args.push_back("-Wno-unknown-warning-option");
    args.push_back("-x");
    args.push_back(language);
    std::vector<const char*> argv;
    for (const std::string& a : args)
        argv.push_back(a.c_str());
    ParseSession session(/*skipParsedBodies=*/true); // a fresh one: skips system bodies only
    ProbeRecording probes;
    NoClaims none;
    TuExtractor extractor(source, 0, none, nullptr, probes);
    extractor.buildPch();
    IndexerCallbacks cb = callbacks();
    unsigned tuOptions = CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete;
    if (indexMacros)
        tuOptions |= CXTranslationUnit_DetailedPreprocessingRecord;
    CXTranslationUnit tu = nullptr;
    // Function bodies in system headers are skipped, as every plain parse skips them (libclang
    // does under CXIndexOpt_SkipParsedBodiesInSession): a TU against the PCH sees what a plain
    // parse sees, and the PCH each TU loads is smaller (fmtlib's: 22%, docs/pch.md). The
    // project's headers' bodies are parsed: a session's first parse does.
    const unsigned indexOptions =
        session.skipParsedBodies() ? CXIndexOpt_SkipParsedBodiesInSession : 0;
    const int rc = clang_indexSourceFileFullArgv(session.action(), &extractor, &cb, sizeof cb,
                                                 indexOptions, source.file.c_str(), argv.data(),
                                                 int(argv.size()), nullptr, 0, &tu, tuOptions);
    if (rc != CXError_Success || !tu) {
        report.detail =
            "libclang could not parse the PCH's source (error " + std::to_string(rc) + ")";
        if (tu)
            clang_disposeTranslationUnit(tu);
        return report;
    }
    if (extractor.errors() > 0) {
        // A PCH with errors still saves: never use one.
        report.detail = extractor.firstError();
        clang_disposeTranslationUnit(tu);
        return report;
    }
    extractor.recordContents(tu);
    if (indexMacros) {
        extractor.macros(tu);
        extractor.respellNamespaceStarts(tu);
    }
    PchManifest manifest = extractor.manifest(tu, headers);
    const std::string temporary = pchPath + ".tmp";
    const int saved =
        clang_saveTranslationUnit(tu, temporary.c_str(), clang_defaultSaveOptions(tu));
    clang_disposeTranslationUnit(tu);
    if (saved != CXSaveError_None || std::rename(temporary.c_str(), pchPath.c_str()) != 0) {
        std::remove(temporary.c_str());
        report.detail = "libclang could not save the PCH to " + pchPath;
        return report;
    }
    manifest.absentPaths = probes.take();
    report.mode = PchMode::Built;
    report.manifest = encodePchManifest(manifest);
    return report;
}

} // namespace symdex
