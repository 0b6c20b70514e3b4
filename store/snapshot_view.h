// Private to store/: what a store implementation gives StoreSnapshot. Each store reads its own
// records and indexes here; the queries built on them (store/snapshot.cpp, store/name_search.cpp)
// are written once for all stores, so both answer the same way.
#pragma once

#include "store/name_index.h"
#include "store/store.h"

#include <unordered_map>

namespace symdex {

/// Whether (symbol, path) shows a symbol better than `best`: a definition before a declaration,
/// then the first by path and position. Never the order the store keeps rows in, which follows
/// the order files were first written: a namespace defined in many files would show a different
/// one after each run.
bool betterOccurrence(const Symbol& symbol, const std::string& path, const SymbolHit& best);

class StoreSnapshot::View {
public:
    virtual ~View() = default;

    virtual std::optional<FileRecord> file(const std::string& path) = 0;
    /// StoreSnapshot::indexedAscii().
    virtual std::optional<bool> indexedAscii(const std::string& /*path*/) { return std::nullopt; }
    virtual void forEachFile(const std::function<void(uint32_t, const FileRecord&)>& fn) = 0;
    virtual std::optional<TuRecord> tu(const std::string& mainFile) = 0;
    virtual void forEachTu(const std::function<void(const std::string&, const TuRecord&)>& fn) = 0;
    virtual void forEachAbsentPath(const std::function<void(uint32_t, const std::string&)>& fn) = 0;
    virtual std::optional<std::string> metaValue(const std::string& key) = 0;

    /// Every name key (nameKey(), store/name_search.h) of a declaration that starts with
    /// `prefix`, in any order (a key may come more than once), until fn returns false.
    virtual void forEachNameKey(std::string_view prefix,
                                const std::function<bool(std::string_view)>& fn) = 0;

    // The name index (store/name_index.h). A store without one (hasNameIndex() false) gives
    // every name through forEachUnindexedName, and name search checks them all.
    virtual bool hasNameIndex() = 0;
    /// The names of declarations the index does not hold (SymbolStore: those of staged files).
    virtual void forEachUnindexedName(const std::function<void(std::string_view)>& fn) = 0;
    /// The index's words that start with `prefix`, in order, with the number of names holding
    /// each, until fn returns false. The words stay valid as long as the View.
    virtual void forEachWord(std::string_view prefix,
                             const std::function<bool(std::string_view, uint32_t)>& fn) = 0;
    /// The same words by position in the vocabulary: [begin, end), in key order.
    struct WordSpan {
        size_t begin = 0, end = 0;
        size_t size() const { return end - begin; }
    };
    /// The positions of the words that start with `prefix` (none without a name index).
    virtual WordSpan wordsStarting(std::string_view) { return {}; }
    /// The length of the longest start of `text` that starts a word (0: none does, or no name
    /// index).
    virtual size_t longestWordStart(std::string_view) { return 0; }
    /// The word at a position wordsStarting() gave; valid as long as the View.
    virtual std::string_view wordAt(size_t) { return {}; }
    /// The positions of the words that end with `suffix`, in key order (none without a name
    /// index).
    virtual std::vector<size_t> wordsEnding(std::string_view) { return {}; }
    /// The positions of the words that hold `inner` after their first letter, in key order
    /// (none without a name index).
    virtual std::vector<size_t> wordsHolding(std::string_view /*inner*/) { return {}; }
    /// The length of the longest word (0 without a name index).
    virtual size_t longestWord() { return 0; }
    /// How many names hold the words of `span`, summed over the words.
    virtual uint64_t namesOfWords(WordSpan) { return 0; }
    /// The names holding an index token, shortest first (then by id).
    class Postings {
    public:
        virtual ~Postings() = default;
        /// The next (name length, name id); false at the end.
        virtual bool next(uint32_t& length, uint32_t& id) = 0;
        /// The next name not before (length, id), passing over those before it; in and out
        /// parameters. Only forward: the target is never before a name already returned.
        virtual bool skipTo(uint32_t& length, uint32_t& id) = 0;
        /// How many there are in all.
        virtual size_t size() = 0;
    };
    /// nullptr when no name holds `token`.
    virtual std::unique_ptr<Postings> postings(std::string_view token) = 0;
    /// How many names hold `token` (postings(token)->size(), without opening a stream).
    virtual size_t postingCount(std::string_view token) {
        std::unique_ptr<Postings> p = postings(token);
        return p ? p->size() : 0;
    }
    /// The index tokens that start with `prefix`, in key order, each with how many names hold
    /// it, until fn returns false (none without a name index). The token stays valid until fn
    /// returns.
    virtual void forEachTokenStarting(std::string_view /*prefix*/,
                                      const std::function<bool(std::string_view, size_t)>&) {}
    /// A name of the index: its length and id, the order postings come in.
    using NameRef = std::pair<uint32_t, uint32_t>;
    /// Appends the names holding each token that starts with `prefix` (a name holding several
    /// comes once per token, each token's in order); false, with `out` as it was, when they
    /// are more than `cap` (or the store has no name index).
    virtual bool namesOfTokensStarting(std::string_view /*prefix*/, std::vector<NameRef>& /*out*/,
                                       size_t /*cap*/) {
        return false;
    }
    /// Whether the name (length, id) holds `token`.
    virtual bool hasPosting(std::string_view token, uint32_t length, uint32_t id) = 0;
    /// The name the index holds under `id`; it stays while the View does.
    virtual std::optional<std::string_view> indexedName(uint32_t id) = 0;
    /// Whether indexedName() is a look-up in memory (a few instructions), not in the store:
    /// a search then checks the names its rarest constraint proposes rather than filtering them.
    virtual bool namesInMemory() { return false; }
    /// What a search knows of a name key besides its text: the id of a name of the index under
    /// it (`nameId`, from its postings), or kNoNameId. A store that keeps its names'
    /// declarations in memory by id reads them there.
    static constexpr uint32_t kNoNameId = UINT32_MAX;
    /// The best EntryRank (name_index.h) of the declarations whose name key is `key`, read from
    /// the names index without decoding them; nullopt when there are none or the store keeps no
    /// ranks (then name search expands the name to know).
    virtual std::optional<EntryRank> bestEntryRank(std::string_view /*key*/, uint32_t /*nameId*/) {
        return std::nullopt;
    }
    /// Every declaration whose name key is `key`: fn(usrHash, symbol, path), in any order.
    virtual void
    forEachSymbolNamed(std::string_view key,
                       const std::function<void(uint64_t, Symbol&&, const std::string&)>& fn) = 0;
    /// A USR's declarations under one name key as name search shows them: the best one
    /// (betterOccurrence) and how many there are.
    struct NamedUsr {
        uint64_t usrHash = 0;
        SymbolHit best;
        uint32_t count = 0;
    };
    /// Every USR with declarations under `key`, once each, in any order. From
    /// forEachSymbolNamed here; a store that can tell which declarations belong to a USR
    /// already shown by its definition need not decode them. With NameDetail::Brief the best
    /// declaration may come without its USR string, extent, signature and comment.
    virtual void forEachUsrNamed(std::string_view key, uint32_t nameId, NameDetail detail,
                                 const std::function<void(NamedUsr&&)>& fn);
    /// The USRs met among a name's declarations, each at its index in the order first met. A
    /// name has a USR or two, mostly: those are looked through, a map made only past a few.
    class UsrSlots {
    public:
        /// The index of `usrHash`, and whether it is new (then the next index: size() - 1).
        std::pair<size_t, bool> slot(uint64_t usrHash);

    private:
        static constexpr size_t kLookedThrough = 16;
        std::vector<uint64_t> usrs_;
        std::unordered_map<uint64_t, size_t> byUsr_; // past kLookedThrough: usrHash -> index
    };
    /// Declarations gathered into NamedUsrs, one per USR, in the order USRs first came.
    class NamedUsrs {
    public:
        void add(uint64_t usrHash, Symbol&& symbol, const std::string& path);
        /// The USRs so far, by index; a group's count may grow without add().
        std::vector<NamedUsr>& all() { return usrs_; }

    private:
        std::vector<NamedUsr> usrs_;
        UsrSlots slots_;
    };
    /// Every declaration of a USR: fn(symbol, path), in any order.
    virtual void forEachOccurrence(uint64_t usrHash,
                                   const std::function<void(Symbol&&, const std::string&)>& fn) = 0;
    /// The name of a declaration of a USR (any one: they share it), reading no other; nullopt
    /// if the store has none.
    virtual std::optional<std::string> nameOf(uint64_t usrHash) = 0;
    /// Every reference to a USR: fn(reference, path), in any order.
    virtual void
    forEachReference(uint64_t usrHash,
                     const std::function<void(const Reference&, const std::string&)>& fn) = 0;
    /// At least every reference to a USR that has kRoleBase or kRoleOverride, perhaps with
    /// others (the caller filters): a store that knows which files hold those reads only them.
    virtual void
    forEachRelationReference(uint64_t usrHash,
                             const std::function<void(const Reference&, const std::string&)>& fn) {
        forEachReference(usrHash, fn);
    }

    virtual std::optional<std::vector<Symbol>> fileSymbols(const std::string& path) = 0;
    virtual std::optional<std::vector<Reference>> fileReferences(const std::string& path) = 0;
    /// What fileSymbols() and fileReferences() hold on lines [first, last] (their location's),
    /// found by a binary search over the rows (they are in source order) rather than by reading
    /// them all.
    virtual std::optional<std::vector<Symbol>>
    fileSymbolsInLines(const std::string& path, uint32_t first, uint32_t last) = 0;
    virtual std::optional<std::vector<Reference>>
    fileReferencesInLines(const std::string& path, uint32_t first, uint32_t last) = 0;
    virtual StoreStats stats() = 0;
};

} // namespace symdex
