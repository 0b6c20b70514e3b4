// What the store holds, as C++ values, and their byte encodings. Layout and version rules are
// documented in docs/store-format.md; bump kStoreFormatVersion whenever an encoding changes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symdex {

/// Version of every record encoding and key layout. A store with another version is refused.
inline constexpr uint32_t kStoreFormatVersion = 30;

enum class SymbolKind : uint8_t {
    Unknown = 0,
    Namespace,
    NamespaceAlias,
    Class,
    Struct,
    Union,
    Enum,
    EnumConstant,
    Typedef,
    TypeAlias,
    Function,
    Method,
    StaticMethod,
    Constructor,
    Destructor,
    ConversionFunction,
    Variable,
    StaticMember,
    Field,
    Concept,
    Macro,
};

/// Functions, methods, constructors, destructors and conversion functions.
inline bool isFunctionLike(SymbolKind kind) {
    return kind >= SymbolKind::Function && kind <= SymbolKind::ConversionFunction;
}

/// Classes, structs and unions: what can have bases.
inline bool isClassLike(SymbolKind kind) {
    return kind == SymbolKind::Class || kind == SymbolKind::Struct || kind == SymbolKind::Union;
}

/// Lower-case name of a kind, as printed ("class", "static method", ...).
std::string_view kindName(SymbolKind kind);

/// Bits of Symbol::flags.
enum SymbolFlag : uint8_t {
    kDefinition = 1 << 0,
    kTemplate = 1 << 1,       ///< a class or function template (the primary template)
    kSpecialization = 1 << 2, ///< an explicit or partial specialization
    /// A function's local variable or parameter: found by position (definition, references,
    /// hover), never by name (name search, outlines), as clangd treats them.
    kLocal = 1 << 3,
};

/// "class template", "function template", "method", ...
std::string kindDisplayName(SymbolKind kind, uint8_t flags);

/// Bits of Reference::roles; the same values as libclang's CXSymbolRole.
enum RefRole : uint16_t {
    kRoleDeclaration = 1 << 0,
    kRoleDefinition = 1 << 1,
    kRoleReference = 1 << 2,
    kRoleRead = 1 << 3,
    kRoleWrite = 1 << 4,
    kRoleCall = 1 << 5,
    kRoleDynamic = 1 << 6,
    kRoleAddressOf = 1 << 7,
    kRoleImplicit = 1 << 8,
    // symdex's own, above libclang's: relations, stored as references so that a file's
    // relations are replaced with its references and found both ways through the same index.
    /// A base-specifier: the referenced class is a base of the container (the derived class).
    kRoleBase = 1 << 12,
    /// At an overriding method's name: the referenced method is one it overrides directly; the
    /// container is the overriding method. Not a use written in the source: reference lists
    /// leave these out (isWrittenUse).
    kRoleOverride = 1 << 13,
};

/// "call", "read", "write", "address", "base", "override", "reference" (the most specific role
/// set).
std::string roleName(uint16_t roles);

/// False for the relation-only references (kRoleOverride alone), which no source text spells.
inline bool isWrittenUse(uint16_t roles) {
    return roles != kRoleOverride;
}

/// A position in a file; both 1-based, the column in bytes (libclang's convention).
struct Position {
    uint32_t line = 0;
    uint32_t column = 0;
    friend auto operator<=>(const Position&, const Position&) = default;
};

struct Range {
    Position begin;
    Position end;
    friend bool operator==(const Range&, const Range&) = default;
};

/// One declaration or definition of a symbol, in the file that holds it.
struct Symbol {
    std::string usr;           ///< libclang's Unified Symbol Resolution string
    std::string name;          ///< unqualified name ("Open")
    std::string qualifiedName; ///< "leveldb::DB::Open"
    SymbolKind kind = SymbolKind::Unknown;
    uint8_t flags = 0; ///< SymbolFlag bits
    Position location; ///< where the name is spelled
    Range extent;      ///< the whole declaration, for outlines
    /// The declaration as C++ spells it, without a body or initializer: "Status Open(const
    /// Options &options, DB **dbptr)", "int counter", "class Circle : public Shape", "Red = 0";
    /// types as clang prints them. Empty for namespaces and macros.
    std::string signature;
    /// The first paragraph of the comment that documents it: the `//` lines or `/* */` block
    /// right above it, or a trailing `///<` (indexer/doc_comment.h), without comment markers.
    std::string comment;
    bool isDefinition() const { return flags & kDefinition; }
    bool isLocal() const { return flags & kLocal; }
    uint64_t usrHash() const;
    friend bool operator==(const Symbol&, const Symbol&) = default;
};

/// One use of a symbol in the file that holds it.
struct Reference {
    uint64_t usrHash = 0; ///< hash64 of the referenced symbol's USR
    Position location;
    uint16_t roles = 0; ///< RefRole bits
    /// hash64 of the USR of the entity whose declaration, body or initializer the reference is
    /// in (the calling function, the class of a base-specifier, the variable initialized, the
    /// overriding method); 0 for none (a macro expansion, a reference at file scope).
    uint64_t container = 0;
    friend bool operator==(const Reference&, const Reference&) = default;
};

/// Per-file bookkeeping, one per path the store knows.
struct FileRecord {
    std::string path;         ///< absolute, normalised
    uint64_t contentHash = 0; ///< hash64 of the contents that were indexed; 0 if never indexed
    int64_t mtimeNs = 0;      ///< modification time seen when the contents were hashed
    uint64_t size = 0;
    /// Status-change time and inode seen then: an edit that keeps size and mtime (`touch -d`,
    /// `cp -p`, `rsync -t`) still moves the ctime, a file replaced by rename the inode (git
    /// compares both for the same reason).
    int64_t ctimeNs = 0;
    uint64_t inode = 0;
    uint32_t symbolCount = 0;
    uint32_t referenceCount = 0;
    /// The TU whose parse extracted these contents: the file id of its main file (0: none yet).
    /// A header's symbols depend on the configuration of the TU that extracted it (its flags,
    /// what it defined before the include), so the owner is part of what the contents depend on
    /// (docs/dependencies.md).
    uint32_t ownerFileId = 0;
    /// The owner's parse's diagnostics located in this file. A diagnostic counts in the file it
    /// is in, as its owner's parse saw it: another TU's libclang session may have skipped the
    /// function bodies an error is in, so only the owner's count is the same in every run.
    uint32_t errorCount = 0;
    uint32_t warningCount = 0;
    std::string firstError; ///< "path:line:col: message" of the first error, if any
    /// The indexed contents hold no byte >= 0x80, so a byte column is also a UTF-16 column:
    /// the daemon answers in UTF-16 without reading a file whose stat fields are still these
    /// (false: not known to, or a non-ASCII byte).
    bool asciiOnly = false;
    friend bool operator==(const FileRecord&, const FileRecord&) = default;
};

enum class TuStatus : uint8_t {
    Ok = 0,      ///< parsed without errors
    Errors = 1,  ///< parsed with error diagnostics; what parsed is indexed
    Failed = 2,  ///< libclang could not parse it at all
    Crashed = 3, ///< libclang crashed on it
};

std::string_view tuStatusName(TuStatus status);

/// One translation unit of the compile database, as last indexed.
struct TuRecord {
    uint64_t commandHash = 0; ///< hash of the parse arguments and directory
    TuStatus status = TuStatus::Ok;
    uint32_t errorCount = 0;
    uint32_t warningCount = 0;
    uint32_t parseMillis = 0; ///< wall time of the last parse (not used to schedule: ranks come
                              ///< from the tree alone, docs/dependencies.md)
    std::string firstError;   ///< "path:line:col: message" of the first error, if any
    std::vector<uint32_t> fileIds; ///< every file the TU read (main file first)
    /// filesDigest() of the content hash of each file in fileIds as this TU's parse read it (0:
    /// one of them unknown). The up-to-date check compares the files with what *this* TU saw,
    /// not with the shared FileRecord, which another TU of an interrupted run may have updated
    /// already. (Before format 27 each file's hash: 8 bytes a file, half of LevelDB's `tus` table.)
    uint64_t filesDigest = 0;
    /// Paths the parse looked for and did not find (include candidates, include directories,
    /// the driver's probes), as ids of the store's table of absent paths: the TU is out of date
    /// once any of them exists.
    std::vector<uint32_t> absentIds;
    /// Files the parse reached through a symlink: (id of the name it looked up, in the table of
    /// absent paths, which interns every path a TU depends on by name; index into fileIds of the
    /// file that name resolved to). The TU is out of date once the name resolves elsewhere (a
    /// retargeted link) or nowhere.
    struct Alias {
        uint32_t nameId = 0;
        uint32_t fileIndex = 0;
        friend bool operator==(const Alias&, const Alias&) = default;
    };
    std::vector<Alias> aliases;
    /// Where the parse first opened each namespace, in token order: what go-to-definition on a
    /// namespace answers in the TU's main file, as clangd does (clang's canonical declaration),
    /// instead of every `namespace std {` of every header.
    struct NamespaceStart {
        uint64_t usrHash = 0;
        std::string path;
        Position location;
        friend bool operator==(const NamespaceStart&, const NamespaceStart&) = default;
    };
    std::vector<NamespaceStart> namespaceStarts;
    friend bool operator==(const TuRecord&, const TuRecord&) = default;
};

/// It parsed (with or without errors): only such a TU owns the files it read
/// (docs/dependencies.md).
inline bool parsedWell(const TuRecord& record) {
    return record.status == TuStatus::Ok || record.status == TuStatus::Errors;
}

std::string encodeSymbol(const Symbol& symbol);
std::optional<Symbol> decodeSymbol(std::string_view bytes);
std::string encodeReference(const Reference& ref);
std::optional<Reference> decodeReference(std::string_view bytes);
/// The line of an encoded symbol's or reference's location, read without decoding the rest (a
/// binary search over a file's rows, which are in source order); nullopt if malformed.
std::optional<uint32_t> encodedSymbolLine(std::string_view bytes);
std::optional<uint32_t> encodedReferenceLine(std::string_view bytes);
std::string encodeFileRecord(const FileRecord& file);
std::optional<FileRecord> decodeFileRecord(std::string_view bytes);
/// One hash of the content hashes, in order (TuRecord::filesDigest); 0 when there are none or
/// one of them is 0 (unknown), so that a TU with a file of unknown content is never up to date.
uint64_t filesDigest(const std::vector<uint64_t>& contentHashes);

/// `filePaths`, parallel to tu.fileIds (the store's writer has them): a namespace start in one of
/// those files is stored as its index (a string per start was a fifth of LevelDB's `tus` table);
/// without them, or in another file, as the path.
std::string encodeTuRecord(const TuRecord& tu, const std::vector<std::string>& filePaths = {});
/// The path of a file id, for namespace starts stored as an index into fileIds; without it such
/// a record does not decode.
using FilePathOf = std::function<std::string(uint32_t fileId)>;
std::optional<TuRecord> decodeTuRecord(std::string_view bytes, const FilePathOf& pathOf = {});

} // namespace symdex
