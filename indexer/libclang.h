// libclang, loaded when a parse first needs it rather than when the program starts.
//
// libclang-16 and the libLLVM-16 it links take ~120 ms and ~60 MiB to map, relocate and
// initialise. symdexd serves queries from the store and parses only when the tree changes (and
// then, by default, in symdex-worker processes), so it must not pay that before it can answer:
// at 2M names, issue 17 asks for the first correct answer within 0.3 s of a restart. No program
// links libclang; the code that calls it (tu_parser.cpp, symdexd's --version) includes this header
// last, and each `clang_*` call there goes through a table of function pointers that the first
// call fills with dlopen() and dlsym() (the same library the build found: SYMDEX_LIBCLANG_FILE).
//
// Every function called must be in SYMDEX_LIBCLANG_FUNCTIONS: one missing is an undefined
// reference at link time (nothing links libclang), so the list cannot fall behind the code.
// libLLVM's calls to open()/stat() still bind to probe_log.cpp's: the executable comes first in
// the lookup scope of a dlopen()ed library too.
#pragma once

#include <clang-c/Index.h>

#include <atomic>

// clang-format off
#define SYMDEX_LIBCLANG_FUNCTIONS(X) \
    X(clang_CXXMethod_isConst) \
    X(clang_CXXMethod_isDefaulted) \
    X(clang_CXXMethod_isDeleted) \
    X(clang_CXXMethod_isPureVirtual) \
    X(clang_CXXMethod_isVirtual) \
    X(clang_Cursor_getTranslationUnit) \
    X(clang_Cursor_isAnonymous) \
    X(clang_Cursor_isInlineNamespace) \
    X(clang_Cursor_isMacroBuiltin) \
    X(clang_Cursor_isNull) \
    X(clang_EnumDecl_isScoped) \
    X(clang_File_tryGetRealPathName) \
    X(clang_IndexAction_create) \
    X(clang_IndexAction_dispose) \
    X(clang_Location_isInSystemHeader) \
    X(clang_createIndex) \
    X(clang_defaultSaveOptions) \
    X(clang_disposeDiagnostic) \
    X(clang_disposeIndex) \
    X(clang_disposeOverriddenCursors) \
    X(clang_disposeSourceRangeList) \
    X(clang_disposeString) \
    X(clang_disposeTokens) \
    X(clang_disposeTranslationUnit) \
    X(clang_formatDiagnostic) \
    X(clang_getCString) \
    X(clang_getCXXAccessSpecifier) \
    X(clang_getClangVersion) \
    X(clang_getCursor) \
    X(clang_getCursorDefinition) \
    X(clang_getCursorDisplayName) \
    X(clang_getCursorExtent) \
    X(clang_getCursorKind) \
    X(clang_getCursorKindSpelling) \
    X(clang_getCursorLocation) \
    X(clang_getCursorReferenced) \
    X(clang_getCursorSemanticParent) \
    X(clang_getCursorSpelling) \
    X(clang_getCursorType) \
    X(clang_getCursorUSR) \
    X(clang_getDiagnosticInSet) \
    X(clang_getDiagnosticLocation) \
    X(clang_getDiagnosticSeverity) \
    X(clang_getEnumConstantDeclValue) \
    X(clang_getExpansionLocation) \
    X(clang_getFileContents) \
    X(clang_getFileLocation) \
    X(clang_getFileName) \
    X(clang_getFileUniqueID) \
    X(clang_getLocation) \
    X(clang_getNullCursor) \
    X(clang_getNumDiagnosticsInSet) \
    X(clang_getOverriddenCursors) \
    X(clang_getRangeEnd) \
    X(clang_getRangeStart) \
    X(clang_getResultType) \
    X(clang_getSkippedRanges) \
    X(clang_getSpecializedCursorTemplate) \
    X(clang_getSpellingLocation) \
    X(clang_getTokenKind) \
    X(clang_getTokenLocation) \
    X(clang_getTokenSpelling) \
    X(clang_getTranslationUnitCursor) \
    X(clang_getTypeSpelling) \
    X(clang_getTypedefDeclUnderlyingType) \
    X(clang_indexLoc_getCXSourceLocation) \
    X(clang_indexLoc_getFileLocation) \
    X(clang_indexSourceFileFullArgv) \
    X(clang_index_getCXXClassDeclInfo) \
    X(clang_index_getClientContainer) \
    X(clang_index_setClientContainer) \
    X(clang_isCursorDefinition) \
    X(clang_isDeclaration) \
    X(clang_isFileMultipleIncludeGuarded) \
    X(clang_isFunctionTypeVariadic) \
    X(clang_isInvalid) \
    X(clang_isVirtualBase) \
    X(clang_parseTranslationUnit2) \
    X(clang_saveTranslationUnit) \
    X(clang_tokenize) \
    X(clang_visitChildren)
// clang-format on

namespace symdex::libclang {

struct Functions {
#define SYMDEX_LIBCLANG_MEMBER(name) decltype(&::name) name = nullptr;
    SYMDEX_LIBCLANG_FUNCTIONS(SYMDEX_LIBCLANG_MEMBER)
#undef SYMDEX_LIBCLANG_MEMBER
};

/// The table once loaded; null before.
extern std::atomic<const Functions*> loadedFunctions;

/// Loads libclang and fills the table (once, under a lock; later calls return it). When the
/// library or one of its functions cannot be found, prints which and why (dlerror()) and aborts:
/// the calls that need it cannot go on, and an installation without libclang cannot parse.
const Functions& load();

inline const Functions& functions() {
    const Functions* f = loadedFunctions.load(std::memory_order_acquire);
    return f ? *f : load();
}

} // namespace symdex::libclang

#ifndef SYMDEX_LIBCLANG_LOADER
// clang-format off
#define clang_CXXMethod_isConst (::symdex::libclang::functions().clang_CXXMethod_isConst)
#define clang_CXXMethod_isDefaulted (::symdex::libclang::functions().clang_CXXMethod_isDefaulted)
#define clang_CXXMethod_isDeleted (::symdex::libclang::functions().clang_CXXMethod_isDeleted)
#define clang_CXXMethod_isPureVirtual (::symdex::libclang::functions().clang_CXXMethod_isPureVirtual)
#define clang_CXXMethod_isVirtual (::symdex::libclang::functions().clang_CXXMethod_isVirtual)
#define clang_Cursor_getTranslationUnit (::symdex::libclang::functions().clang_Cursor_getTranslationUnit)
#define clang_Cursor_isAnonymous (::symdex::libclang::functions().clang_Cursor_isAnonymous)
#define clang_Cursor_isInlineNamespace (::symdex::libclang::functions().clang_Cursor_isInlineNamespace)
#define clang_Cursor_isMacroBuiltin (::symdex::libclang::functions().clang_Cursor_isMacroBuiltin)
#define clang_Cursor_isNull (::symdex::libclang::functions().clang_Cursor_isNull)
#define clang_EnumDecl_isScoped (::symdex::libclang::functions().clang_EnumDecl_isScoped)
#define clang_File_tryGetRealPathName (::symdex::libclang::functions().clang_File_tryGetRealPathName)
#define clang_IndexAction_create (::symdex::libclang::functions().clang_IndexAction_create)
#define clang_IndexAction_dispose (::symdex::libclang::functions().clang_IndexAction_dispose)
#define clang_Location_isInSystemHeader (::symdex::libclang::functions().clang_Location_isInSystemHeader)
#define clang_createIndex (::symdex::libclang::functions().clang_createIndex)
#define clang_defaultSaveOptions (::symdex::libclang::functions().clang_defaultSaveOptions)
#define clang_disposeDiagnostic (::symdex::libclang::functions().clang_disposeDiagnostic)
#define clang_disposeIndex (::symdex::libclang::functions().clang_disposeIndex)
#define clang_disposeOverriddenCursors (::symdex::libclang::functions().clang_disposeOverriddenCursors)
#define clang_disposeSourceRangeList (::symdex::libclang::functions().clang_disposeSourceRangeList)
#define clang_disposeString (::symdex::libclang::functions().clang_disposeString)
#define clang_disposeTokens (::symdex::libclang::functions().clang_disposeTokens)
#define clang_disposeTranslationUnit (::symdex::libclang::functions().clang_disposeTranslationUnit)
#define clang_formatDiagnostic (::symdex::libclang::functions().clang_formatDiagnostic)
#define clang_getCString (::symdex::libclang::functions().clang_getCString)
#define clang_getCXXAccessSpecifier (::symdex::libclang::functions().clang_getCXXAccessSpecifier)
#define clang_getClangVersion (::symdex::libclang::functions().clang_getClangVersion)
#define clang_getCursor (::symdex::libclang::functions().clang_getCursor)
#define clang_getCursorDefinition (::symdex::libclang::functions().clang_getCursorDefinition)
#define clang_getCursorDisplayName (::symdex::libclang::functions().clang_getCursorDisplayName)
#define clang_getCursorExtent (::symdex::libclang::functions().clang_getCursorExtent)
#define clang_getCursorKind (::symdex::libclang::functions().clang_getCursorKind)
#define clang_getCursorKindSpelling (::symdex::libclang::functions().clang_getCursorKindSpelling)
#define clang_getCursorLocation (::symdex::libclang::functions().clang_getCursorLocation)
#define clang_getCursorReferenced (::symdex::libclang::functions().clang_getCursorReferenced)
#define clang_getCursorSemanticParent (::symdex::libclang::functions().clang_getCursorSemanticParent)
#define clang_getCursorSpelling (::symdex::libclang::functions().clang_getCursorSpelling)
#define clang_getCursorType (::symdex::libclang::functions().clang_getCursorType)
#define clang_getCursorUSR (::symdex::libclang::functions().clang_getCursorUSR)
#define clang_getDiagnosticInSet (::symdex::libclang::functions().clang_getDiagnosticInSet)
#define clang_getDiagnosticLocation (::symdex::libclang::functions().clang_getDiagnosticLocation)
#define clang_getDiagnosticSeverity (::symdex::libclang::functions().clang_getDiagnosticSeverity)
#define clang_getEnumConstantDeclValue (::symdex::libclang::functions().clang_getEnumConstantDeclValue)
#define clang_getExpansionLocation (::symdex::libclang::functions().clang_getExpansionLocation)
#define clang_getFileContents (::symdex::libclang::functions().clang_getFileContents)
#define clang_getFileLocation (::symdex::libclang::functions().clang_getFileLocation)
#define clang_getFileName (::symdex::libclang::functions().clang_getFileName)
#define clang_getFileUniqueID (::symdex::libclang::functions().clang_getFileUniqueID)
#define clang_getLocation (::symdex::libclang::functions().clang_getLocation)
#define clang_getNullCursor (::symdex::libclang::functions().clang_getNullCursor)
#define clang_getNumDiagnosticsInSet (::symdex::libclang::functions().clang_getNumDiagnosticsInSet)
#define clang_getOverriddenCursors (::symdex::libclang::functions().clang_getOverriddenCursors)
#define clang_getRangeEnd (::symdex::libclang::functions().clang_getRangeEnd)
#define clang_getRangeStart (::symdex::libclang::functions().clang_getRangeStart)
#define clang_getResultType (::symdex::libclang::functions().clang_getResultType)
#define clang_getSkippedRanges (::symdex::libclang::functions().clang_getSkippedRanges)
#define clang_getSpecializedCursorTemplate (::symdex::libclang::functions().clang_getSpecializedCursorTemplate)
#define clang_getSpellingLocation (::symdex::libclang::functions().clang_getSpellingLocation)
#define clang_getTokenKind (::symdex::libclang::functions().clang_getTokenKind)
#define clang_getTokenLocation (::symdex::libclang::functions().clang_getTokenLocation)
#define clang_getTokenSpelling (::symdex::libclang::functions().clang_getTokenSpelling)
#define clang_getTranslationUnitCursor (::symdex::libclang::functions().clang_getTranslationUnitCursor)
#define clang_getTypeSpelling (::symdex::libclang::functions().clang_getTypeSpelling)
#define clang_getTypedefDeclUnderlyingType (::symdex::libclang::functions().clang_getTypedefDeclUnderlyingType)
#define clang_indexLoc_getCXSourceLocation (::symdex::libclang::functions().clang_indexLoc_getCXSourceLocation)
#define clang_indexLoc_getFileLocation (::symdex::libclang::functions().clang_indexLoc_getFileLocation)
#define clang_indexSourceFileFullArgv (::symdex::libclang::functions().clang_indexSourceFileFullArgv)
#define clang_index_getCXXClassDeclInfo (::symdex::libclang::functions().clang_index_getCXXClassDeclInfo)
#define clang_index_getClientContainer (::symdex::libclang::functions().clang_index_getClientContainer)
#define clang_index_setClientContainer (::symdex::libclang::functions().clang_index_setClientContainer)
#define clang_isCursorDefinition (::symdex::libclang::functions().clang_isCursorDefinition)
#define clang_isDeclaration (::symdex::libclang::functions().clang_isDeclaration)
#define clang_isFileMultipleIncludeGuarded (::symdex::libclang::functions().clang_isFileMultipleIncludeGuarded)
#define clang_isFunctionTypeVariadic (::symdex::libclang::functions().clang_isFunctionTypeVariadic)
#define clang_isInvalid (::symdex::libclang::functions().clang_isInvalid)
#define clang_isVirtualBase (::symdex::libclang::functions().clang_isVirtualBase)
#define clang_parseTranslationUnit2 (::symdex::libclang::functions().clang_parseTranslationUnit2)
#define clang_saveTranslationUnit (::symdex::libclang::functions().clang_saveTranslationUnit)
#define clang_tokenize (::symdex::libclang::functions().clang_tokenize)
#define clang_visitChildren (::symdex::libclang::functions().clang_visitChildren)
// clang-format on
#endif
