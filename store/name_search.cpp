// Name search, for every store: the View gives the name keys and the declarations under a key;
// matching, ranking and choosing each symbol's best occurrence happen here.
#include "store/name_search.h"

#include "store/name_index.h"
#include "store/snapshot_view.h"

#include <queue>

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace symdex {

std::string lowerAscii(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

std::string nameKey(std::string_view name) {
    return lowerAscii(name.substr(0, kMaxNameKey));
}

namespace {

bool endsWithScope(std::string_view qualified, std::string_view tail) {
    if (qualified == tail)
        return true;
    return qualified.size() > tail.size() + 2 && qualified.ends_with(tail) &&
           qualified.substr(qualified.size() - tail.size() - 2, 2) == "::";
}

/// The last component of a possibly qualified name, ignoring "::" inside template arguments.
std::string_view lastComponent(std::string_view name) {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
        char c = name[i];
        if (c == '>')
            ++depth;
        else if (c == '<')
            --depth;
        else if (depth == 0 && c == ':' && i > 0 && name[i - 1] == ':')
            return name.substr(i + 1);
    }
    return name;
}

/// Within a rank: primary templates and plain symbols before specializations, definitions before
/// declarations, then shorter names, then shorter qualified names (std::vector before
/// std::pmr::vector).
using RankKey = std::tuple<MatchRank, bool, bool, size_t, size_t>;
RankKey rankKey(const NameMatch& m) {
    const Symbol& s = m.best.symbol;
    return {m.rank, bool(s.flags & kSpecialization), !s.isDefinition(), s.name.size(),
            s.qualifiedName.size()};
}

/// A match nothing after it in a tier's length order can outrank.
bool settled(const NameMatch& m) {
    return m.best.symbol.isDefinition() && !(m.best.symbol.flags & kSpecialization);
}

using View = StoreSnapshot::View;

/// The pairs of words the index holds are read by their start (NameSearch::pairsOf) for up to
/// kMaxPairFirstWords words of the first piece in substring runs, and in word-start cuts of two
/// pieces whose every constraint holds more than kReadPairsAbove names, for up to
/// kMaxCutFirstWords.
constexpr size_t kMaxPairFirstWords = 64;
constexpr size_t kReadPairsAbove = 256;
constexpr size_t kMaxCutFirstWords = 1024;
/// Pairs of words read by their start are read name by name (rather than token by token)
/// when they are more than a few hundred tokens, up to this many names in all.
constexpr size_t kMaxPairNames = 16384;

/// A prefix range longer than this (plus 4 per answer asked) is read from the postings instead.
constexpr size_t kLongRange = 2000;

/// Names of the index, shortest first, then by id.
class Stream {
public:
    virtual ~Stream() = default;
    /// The next name (length, id); false at the end.
    virtual bool next(uint32_t& length, uint32_t& id) = 0;
    /// The next name not before (length, id), in and out (View::Postings::skipTo).
    virtual bool skipTo(uint32_t& length, uint32_t& id) = 0;
};

/// The names holding one token.
class TokenStream final : public Stream {
public:
    explicit TokenStream(std::unique_ptr<View::Postings> postings)
        : postings_(std::move(postings)) {}
    bool next(uint32_t& length, uint32_t& id) override { return postings_->next(length, id); }
    bool skipTo(uint32_t& length, uint32_t& id) override { return postings_->skipTo(length, id); }

private:
    std::unique_ptr<View::Postings> postings_;
};

/// Names read beforehand, in order, each once.
class NamesStream final : public Stream {
public:
    explicit NamesStream(std::shared_ptr<const std::vector<View::NameRef>> names)
        : names_(std::move(names)) {}
    bool next(uint32_t& length, uint32_t& id) override {
        if (at_ == names_->size())
            return false;
        std::tie(length, id) = (*names_)[at_++];
        return true;
    }
    bool skipTo(uint32_t& length, uint32_t& id) override {
        at_ = size_t(std::lower_bound(names_->begin() + ptrdiff_t(at_), names_->end(),
                                      View::NameRef{length, id}) -
                     names_->begin());
        return next(length, id);
    }

private:
    std::shared_ptr<const std::vector<View::NameRef>> names_;
    size_t at_ = 0;
};

/// The names of any of several streams, each once: a merge.
class Union final : public Stream {
public:
    void add(std::unique_ptr<Stream> stream) {
        if (!stream)
            return;
        waiting_.push_back(streams_.size());
        streams_.push_back(std::move(stream));
    }
    bool next(uint32_t& length, uint32_t& id) override {
        for (size_t list : waiting_) {
            Head head{0, 0, list};
            if (streams_[list]->next(head.length, head.id))
                heap_.push(head);
        }
        waiting_.clear();
        return take(length, id);
    }
    bool skipTo(uint32_t& length, uint32_t& id) override {
        // The streams move on from the target: those whose name was taken last, those that
        // never moved, and those whose name is before the target.
        for (size_t list : waiting_) {
            Head head{length, id, list};
            if (streams_[list]->skipTo(head.length, head.id))
                heap_.push(head);
        }
        waiting_.clear();
        while (!heap_.empty() &&
               std::tie(heap_.top().length, heap_.top().id) < std::tie(length, id)) {
            Head head{length, id, heap_.top().list};
            heap_.pop();
            if (streams_[head.list]->skipTo(head.length, head.id))
                heap_.push(head);
        }
        return take(length, id);
    }

private:
    struct Head {
        uint32_t length, id;
        size_t list;
        bool operator>(const Head& o) const {
            return std::tie(length, id) > std::tie(o.length, o.id);
        }
    };

    /// The first name of the heads, once however many streams hold it; they move on at the
    /// next call, by next() or by skipTo() as it is asked (a stream skipped is not read).
    bool take(uint32_t& length, uint32_t& id) {
        if (heap_.empty())
            return false;
        const Head first = heap_.top();
        while (!heap_.empty() && heap_.top().length == first.length && heap_.top().id == first.id) {
            waiting_.push_back(heap_.top().list);
            heap_.pop();
        }
        length = first.length;
        id = first.id;
        return true;
    }

    std::vector<std::unique_ptr<Stream>> streams_;
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap_;
    std::vector<size_t> waiting_; ///< streams with no name in the heap: to move on first
};

/// The names of `driver` that `filter` has too: each skips to the other's name until they meet
/// (neither reads what lies between).
class Intersection final : public Stream {
public:
    Intersection(std::unique_ptr<Stream> driver, std::unique_ptr<Stream> filter)
        : driver_(std::move(driver)), filter_(std::move(filter)) {}
    bool next(uint32_t& length, uint32_t& id) override {
        return more_ && driver_->next(length, id) && meet(length, id);
    }
    bool skipTo(uint32_t& length, uint32_t& id) override {
        return more_ && driver_->skipTo(length, id) && meet(length, id);
    }

private:
    /// From the driver's name (length, id): the first name both hold.
    bool meet(uint32_t& length, uint32_t& id) {
        for (;;) {
            if (!started_ || std::tie(length_, id_) < std::tie(length, id)) {
                started_ = true;
                length_ = length;
                id_ = id;
                if (!(more_ = filter_->skipTo(length_, id_)))
                    return false;
            }
            if (length_ == length && id_ == id)
                return true;
            length = length_; // the filter is ahead: the driver follows
            id = id_;
            if (!driver_->skipTo(length, id))
                return false;
        }
    }

    std::unique_ptr<Stream> driver_, filter_;
    uint32_t length_ = 0, id_ = 0; ///< the filter's current name, once started_
    bool started_ = false;
    bool more_ = true;
};

/// The names of `driver` that hold any of a few tokens, each asked of the index.
class Asked final : public Stream {
public:
    Asked(View& view, std::unique_ptr<Stream> driver, std::vector<std::string> tokens)
        : view_(view), driver_(std::move(driver)), tokens_(std::move(tokens)) {}
    bool next(uint32_t& length, uint32_t& id) override {
        return driver_->next(length, id) && held(length, id);
    }
    bool skipTo(uint32_t& length, uint32_t& id) override {
        return driver_->skipTo(length, id) && held(length, id);
    }

private:
    /// From the driver's name (length, id) on: the first that holds a token.
    bool held(uint32_t& length, uint32_t& id) {
        do
            for (const std::string& token : tokens_)
                if (view_.hasPosting(token, length, id))
                    return true;
        while (driver_->next(length, id));
        return false;
    }

    View& view_;
    std::unique_ptr<Stream> driver_;
    std::vector<std::string> tokens_;
};

/// An index token as its kind and the text after it: a word of the vocabulary, which stays
/// while the View does (View::forEachWord), or a text a NameSearch keeps (intern()). A token's
/// string is made only to read its postings. (Token and Source are outside NameSearch: as its
/// members, clang 16 found them not default-constructible where NameSearch's own members
/// instantiate std::optional<Source>.)
struct Token {
    char kind;
    std::string_view text;
    std::string spelled() const { return kind + std::string(text); }
};
/// Index tokens whose postings together hold every candidate of some constraint, and how
/// many postings that is: a run of the vocabulary's words (a word start's, found by a
/// binary search and counted by sums, however many words it is), tokens besides, or names read
/// beforehand. Word-start cuts point at the ones NameSearch caches; substring runs combine
/// copies.
struct Source {
    char spanKind = kWordToken;
    View::WordSpan span; ///< each word a token spanKind + word
    std::vector<Token> tokens;
    /// Names besides, read beforehand (pairsOf()), in order, each once.
    std::shared_ptr<const std::vector<View::NameRef>> names;
    /// startingWith()'s piece when this is its source unchanged (the span is then every
    /// word that starts with it), else empty.
    std::string_view starts;
    size_t postings = 0;
    void add(Token token, size_t count) {
        tokens.push_back(token);
        postings += count;
    }
    /// How many streams it is.
    size_t size() const { return span.size() + tokens.size() + (names ? 1 : 0); }
    template <typename Fn> void forEachToken(View& view, Fn&& fn) const {
        for (size_t i = span.begin; i < span.end; ++i)
            fn(Token{spanKind, view.wordAt(i)});
        for (const Token& token : tokens)
            fn(token);
    }
};

/// One findSymbols() call. Names are taken rank by rank, shortest first within a rank, and
/// each name key is expanded into its declarations; the search stops once `limit` matches are
/// settled (nothing later can outrank them) or a rank ends with `limit` matches. The index
/// only proposes names: matchName() decides, for indexed and unindexed names alike.
class NameSearch {
public:
    NameSearch(View& view, std::string_view pattern, size_t limit, NameDetail detail)
        : view_(view), limit_(limit), detail_(detail) {
        while (pattern.starts_with("::"))
            pattern.remove_prefix(2);
        const std::string_view last = lastComponent(pattern);
        qualified_ = last.size() != pattern.size();
        lowerPattern_ = lowerAscii(pattern);
        query_ = makeNameQuery(last);
    }

    std::vector<NameMatch> run() {
        if (limit_ == 0)
            return {};
        if (query_.key.empty()) {
            if (qualified_)
                return {};
            // No query: the first names in key order (an editor's empty symbol search).
            view_.forEachNameKey("", [&](std::string_view key) {
                expand(key);
                return matches_.size() < limit_;
            });
            return finish();
        }
        std::vector<std::pair<uint32_t, std::string>> unindexed[4];
        view_.forEachUnindexedName([&](std::string_view name) {
            if (std::optional<MatchRank> rank = matchName(name, query_))
                unindexed[int(*rank)].emplace_back(uint32_t(name.size()), nameKey(name));
        });

        // Exact and prefix matches: a range of the names table (keys are lower case), read
        // whole to order it by length while it is short; a longer one (a query of a letter or
        // two) is read shortest first from the postings of the names' first words instead.
        std::vector<std::pair<uint32_t, std::string>> keys = std::move(unindexed[0]);
        keys.insert(keys.end(), unindexed[1].begin(), unindexed[1].end());
        const size_t rangeCap = view_.hasNameIndex() && !query_.compact.empty()
                                    ? kLongRange + 4 * limit_
                                    : std::numeric_limits<size_t>::max();
        size_t inRange = 0;
        bool longRange = false;
        view_.forEachNameKey(query_.key, [&](std::string_view key) {
            keys.emplace_back(uint32_t(key.size()), std::string(key));
            return !(longRange = ++inRange > rangeCap);
        });
        std::unique_ptr<Stream> firstWords;
        if (longRange) {
            keys.resize(keys.size() - inRange);
            firstWords = streamOf(continuing(query_.compact, kFirstWordToken));
        }
        std::sort(keys.begin(), keys.end());
        if (takeInOrder(keys, firstWords.get(), MatchRank::Prefix) || !view_.hasNameIndex())
            return finish(unindexed);

        Union wordStarts;
        addWordStarts(wordStarts);
        std::sort(unindexed[2].begin(), unindexed[2].end());
        if (takeInOrder(unindexed[2], &wordStarts, MatchRank::WordStart))
            return finish();
        Union substrings;
        addSubstrings(substrings);
        std::sort(unindexed[3].begin(), unindexed[3].end());
        takeInOrder(unindexed[3], &substrings, MatchRank::Substring);
        return finish();
    }

private:
    /// Without an index the word-start and substring names are all in `unindexed`.
    std::vector<NameMatch> finish(std::vector<std::pair<uint32_t, std::string>> (&unindexed)[4]) {
        for (int rank = 2; rank < 4 && matches_.size() < limit_; ++rank) {
            std::sort(unindexed[rank].begin(), unindexed[rank].end());
            if (takeInOrder(unindexed[rank], nullptr, MatchRank(rank)))
                break;
        }
        return finish();
    }

    std::vector<NameMatch> finish() {
        // Sorted by index with each key made once (a comparison that made both keys was 1.9K
        // instructions an answer), then moved into that order.
        std::vector<std::pair<RankKey, uint32_t>> order;
        order.reserve(matches_.size());
        for (size_t i = 0; i < matches_.size(); ++i)
            order.emplace_back(rankKey(matches_[i]), uint32_t(i));
        const size_t kept = std::min(limit_, order.size());
        auto before = [&](const std::pair<RankKey, uint32_t>& a,
                          const std::pair<RankKey, uint32_t>& b) {
            if (a.first != b.first)
                return a.first < b.first;
            // Then by name, path and place: never by the order the store keeps rows in
            // (overloads share a qualified name); last by the order found, as a stable sort.
            const SymbolHit& x = matches_[a.second].best;
            const SymbolHit& y = matches_[b.second].best;
            return std::tie(x.symbol.qualifiedName, x.path, x.symbol.location, a.second) <
                   std::tie(y.symbol.qualifiedName, y.path, y.symbol.location, b.second);
        };
        std::partial_sort(order.begin(), order.begin() + ptrdiff_t(kept), order.end(), before);
        std::vector<NameMatch> out;
        out.reserve(kept);
        for (size_t i = 0; i < kept; ++i)
            out.push_back(std::move(matches_[order[i].second]));
        return out;
    }

    /// Expands the names of one rank shortest first: `listed` (length, key) merged with what
    /// `postings` proposes and matchName() puts in `rank`. True when the search is done.
    bool takeInOrder(const std::vector<std::pair<uint32_t, std::string>>& listed, Stream* postings,
                     MatchRank rank) {
        size_t next = 0;
        // A word-start or substring match holds every letter and digit of the query: the
        // postings of names shorter than that are skipped, not read (a rare name's 19 letters
        // pass over most of a big tree's names).
        const uint32_t shortest =
            rank >= MatchRank::WordStart
                ? uint32_t(std::min<size_t>(query_.compact.size(), 0xffff)) // postings cap it so
                : 0;
        uint32_t postedLength = shortest, postedId = 0;
        bool posted = postings && (shortest ? postings->skipTo(postedLength, postedId)
                                            : postings->next(postedLength, postedId));
        std::optional<uint32_t> stopAfter; // the length at which `limit` matches settled
        for (;;) {
            const bool fromList =
                next < listed.size() && (!posted || listed[next].first <= postedLength);
            if (!fromList && !posted)
                break;
            const uint32_t length = fromList ? listed[next].first : postedLength;
            if (stopAfter && length > *stopAfter)
                return true;
            if (fromList) {
                const std::string& key = listed[next++].second;
                if (mayRankHigh(key, length))
                    expand(key);
            } else {
                if (std::optional<std::string_view> name = view_.indexedName(postedId))
                    if (std::optional<MatchRank> found = matchName(*name, query_);
                        found && *found <= rank) {
                        ranked(*name, found);
                        const std::string key = nameKey(*name);
                        if (mayRankHigh(key, length, postedId))
                            expand(key, postedId); // a better rank's was expanded already
                    }
                posted = postings->next(postedLength, postedId);
            }
            if (!stopAfter && settled_ >= limit_) {
                // The rest of this length can still outrank what was taken (by a shorter
                // qualified name): best first, up to the first that cannot.
                stopAfter = length;
                std::vector<std::tuple<RankKey, std::string, uint32_t>> rest;
                auto consider = [&](std::string key, uint32_t id) {
                    if (expanded_.contains(key))
                        return;
                    if (std::optional<RankKey> bound = boundOf(key, length, id))
                        rest.emplace_back(*bound, std::move(key), id);
                    else
                        expand(key, id);
                };
                while (next < listed.size() && listed[next].first == length)
                    consider(listed[next++].second, View::kNoNameId);
                while (posted && postedLength == length) {
                    if (std::optional<std::string_view> name = view_.indexedName(postedId))
                        if (std::optional<MatchRank> found = matchName(*name, query_);
                            found && *found <= rank) {
                            ranked(*name, found);
                            consider(nameKey(*name), postedId);
                        }
                    posted = postings->next(postedLength, postedId);
                }
                std::sort(rest.begin(), rest.end());
                for (const auto& [bound, key, id] : rest) {
                    if (boundary() < bound)
                        break;
                    expand(key, id);
                }
                return true;
            }
        }
        return stopAfter || matches_.size() >= limit_;
    }

    /// The best key a match under `key` (a name of `length` letters) can have: its rank at
    /// best, and the best of the ranks the names index keeps beside each declaration
    /// (View::bestEntryRank), read without decoding them; nullopt when the store keeps none.
    std::optional<RankKey> boundOf(const std::string& key, uint32_t length, uint32_t id) {
        const std::optional<EntryRank> entry = view_.bestEntryRank(key, id);
        if (!entry)
            return std::nullopt;
        // Exact and prefix matches are told by the key; anything else is a word start at best.
        const MatchRank best = key == query_.key             ? MatchRank::Exact
                               : key.starts_with(query_.key) ? MatchRank::Prefix
                                                             : MatchRank::WordStart;
        return RankKey{best, entry->specialization, entry->declaration, length,
                       entry->qualifiedLength};
    }

    /// False when no declaration under `key` can be among the `limit` best: `limit` matches rank
    /// above its boundOf(), so its symbol blocks need not be decoded. A tie is expanded: the
    /// order then falls to the qualified name and the place.
    bool mayRankHigh(const std::string& key, uint32_t length, uint32_t id = View::kNoNameId) {
        if (matches_.size() < limit_ || expanded_.contains(key))
            return true;
        const std::optional<RankKey> bound = boundOf(key, length, id);
        return !bound || !(boundary() < *bound);
    }

    /// The key of the `limit`-th best match so far (matches only improve: the final one is no
    /// worse). Recomputed after expansions changed the matches.
    RankKey boundary() {
        if (boundaryOf_ != expansions_) {
            boundaryKeys_.clear();
            for (const NameMatch& m : matches_)
                boundaryKeys_.push_back(rankKey(m));
            std::nth_element(boundaryKeys_.begin(), boundaryKeys_.begin() + (limit_ - 1),
                             boundaryKeys_.end());
            boundary_ = boundaryKeys_[limit_ - 1];
            boundaryOf_ = expansions_;
        }
        return boundary_;
    }

    /// Adds the declarations under a name key that match; `id` is the name of the index the
    /// key was found by, when it was (View::kNoNameId when not).
    void expand(std::string_view key, uint32_t id = View::kNoNameId) {
        if (!expanded_.emplace(key).second)
            return;
        ++expansions_;
        // A USR's declarations share its name and qualified name: they match alike.
        view_.forEachUsrNamed(key, id, detail_, [&](View::NamedUsr&& named) {
            const Symbol& symbol = named.best.symbol;
            std::optional<MatchRank> rank = rankOf(symbol.name);
            if (!rank && !query_.key.empty())
                return;
            if (qualified_ &&
                lowerAscii(symbol.qualifiedName).find(lowerPattern_) == std::string::npos)
                return;
            auto [it, inserted] = byUsr_.try_emplace(named.usrHash, matches_.size());
            if (inserted) {
                matches_.push_back(
                    {rank.value_or(MatchRank::Prefix), std::move(named.best), named.count});
                settled_ += settled(matches_.back());
                return;
            }
            NameMatch& match = matches_[it->second];
            match.occurrences += named.count;
            if (betterOccurrence(symbol, named.best.path, match.best)) {
                const bool was = settled(match);
                match.best = std::move(named.best);
                settled_ += settled(match) && !was;
            }
        });
    }

    /// matchName() of `name`, the last one's kept: a name proposed and then its declarations
    /// under the same key (mostly of that very name) are checked once, not once each (a
    /// substring or word start splits the name into words: ~1.2K instructions).
    std::optional<MatchRank> rankOf(std::string_view name) {
        if (!lastRanked_ || name != *lastRanked_)
            ranked(name, matchName(name, query_));
        return lastRank_;
    }
    /// Keeps matchName()'s `rank` of `name` for rankOf() (for a name about to be expanded:
    /// the many proposed that fail are not copied).
    void ranked(std::string_view name, std::optional<MatchRank> rank) {
        if (!lastRanked_)
            lastRanked_.emplace();
        lastRanked_->assign(name); // (the string's room is kept from name to name)
        lastRank_ = rank;
    }

    /// How many names hold `token` (cached: the ways to cut a query share their pairs and
    /// initials, and each count is a seek).
    size_t postingCount(const std::string& token) {
        auto [it, inserted] = postingCounts_.try_emplace(token, 0);
        if (inserted)
            it->second = view_.postingCount(token);
        return it->second;
    }

    /// Where `piece` lies in the compact query, if it is a part of it (the pieces of word-start
    /// cuts and substring runs are). Places are cache keys of 16 bits: none in a longer query.
    std::optional<size_t> offsetInQuery(std::string_view piece) const {
        const std::string& q = query_.compact;
        const std::less<const char*> before;
        if (q.size() > 0xFFFF || before(piece.data(), q.data()) ||
            before(q.data() + q.size(), piece.data()) ||
            size_t(q.data() + q.size() - piece.data()) < piece.size())
            return std::nullopt;
        return size_t(piece.data() - q.data());
    }

    /// Whether any word of the index starts with `piece`. For a part of the query, from the
    /// longest such part at its offset, found once (View::longestWordStart): a word that
    /// starts with a piece starts with each shorter one. The cuts of a query ask about the same
    /// few offsets hundreds of times.
    bool startsWord(std::string_view piece) {
        const std::optional<size_t> at = offsetInQuery(piece);
        if (!at)
            return view_.wordsStarting(piece).size() > 0;
        if (longestWordStart_.empty())
            longestWordStart_.assign(query_.compact.size(), kUnknown);
        size_t& longest = longestWordStart_[*at];
        if (longest == kUnknown)
            longest = view_.longestWordStart(std::string_view(query_.compact).substr(*at));
        return piece.size() <= longest;
    }

    /// A text kept for the whole search (a deque: what it holds never moves).
    std::string_view intern(std::string text) { return texts_.emplace_back(std::move(text)); }

    /// The names holding a word that starts with `piece` (with kFirstWordToken: as their first
    /// word; the count is then only an upper bound).
    const Source& startingWith(std::string_view piece, char kind = kWordToken) {
        // Cached: the ways to cut a query share their pieces. A part of the query by its place.
        const std::optional<size_t> at = offsetInQuery(piece);
        auto [source, inserted] = [&]() -> std::pair<Source*, bool> {
            if (at) {
                auto [it, added] = startingWithPart_.try_emplace(
                    uint64_t(uint8_t(kind)) << 48 | uint64_t(*at) << 24 | piece.size());
                return {&it->second, added};
            }
            auto [it, added] = startingWith_.try_emplace(kind + std::string(piece));
            return {&it->second, added};
        }();
        if (inserted) {
            source->spanKind = kind;
            source->span = view_.wordsStarting(piece);
            source->postings = view_.namesOfWords(source->span);
            if (kind == kWordToken)
                source->starts = at ? piece : intern(std::string(piece));
        }
        return *source;
    }

    /// The names with words that `rest` starts the way a word start does: a word starting with
    /// all of it, or a whole word that begins it (its first piece).
    Source continuing(std::string_view rest, char kind = kWordToken) {
        Source source = startingWith(rest, kind);
        source.starts = {};
        for (size_t k = 1; k < rest.size(); ++k)
            view_.forEachWord(rest.substr(0, k), [&](std::string_view word, uint32_t names) {
                if (word.size() == k)
                    source.add({kind, word}, names);
                return false;
            });
        return source;
    }

    std::unique_ptr<Stream> streamOf(const Source& source) {
        auto out = std::make_unique<Union>();
        source.forEachToken(view_, [&](const Token& token) {
            if (std::unique_ptr<View::Postings> postings = view_.postings(token.spelled()))
                out->add(std::make_unique<TokenStream>(std::move(postings)));
        });
        if (source.names)
            out->add(std::make_unique<NamesStream>(source.names));
        return out;
    }

    /// The names every source has: the rarest read; each other source filters it, read along
    /// when that costs little more, else asked name by name when it is a few tokens and the
    /// names are not in memory, else not at all (a name is checked with matchName() anyway:
    /// with the names in memory that costs ~1.1K instructions, an ask of the index 2-5K).
    std::unique_ptr<Stream> allOf(std::vector<const Source*> sources) {
        std::sort(sources.begin(), sources.end(),
                  [](const Source* a, const Source* b) { return a->postings < b->postings; });
        std::unique_ptr<Stream> stream = streamOf(*sources[0]);
        if (sources[0]->postings <= small_)
            return stream;
        for (size_t i = 1; i < sources.size(); ++i) {
            const Source& source = *sources[i];
            if (source.postings <= kFilterRatio * sources[0]->postings)
                stream = std::make_unique<Intersection>(std::move(stream), streamOf(source));
            else if (source.size() <= kAskedTokens && !source.names && !inMemory_) {
                std::vector<std::string> tokens;
                source.forEachToken(view_,
                                    [&](const Token& token) { tokens.push_back(token.spelled()); });
                stream = std::make_unique<Asked>(view_, std::move(stream), std::move(tokens));
            }
        }
        return stream;
    }
    static constexpr size_t kFilterRatio = 32, kAskedTokens = 4;

    /// The names whose three consecutive words have these initials (cached: the ways to cut a
    /// query share them).
    const Source& initialsOf(char a, char b, char c) {
        auto [it, inserted] = initials_.try_emplace(uint32_t(uint8_t(a)) << 16 |
                                                    uint32_t(uint8_t(b)) << 8 | uint8_t(c));
        if (inserted) {
            const std::string token{kInitialsToken, a, b, c};
            it->second.add({kInitialsToken, intern(token.substr(1))}, postingCount(token));
        }
        return it->second;
    }

    /// Word-start candidates: for each way to cut the query into pieces that start words, the
    /// names with a word each piece starts and, for three pieces or more, the first three
    /// pieces' initials on consecutive words (allOf() says what is read).
    void addWordStarts(Union& out) {
        constexpr size_t kMaxCuts = 64;
        // The sources the cuts share are kept for the whole search (startingWith(),
        // pairsOfParts(), initialsOf()) and a cut points at them. A constraint that a few names
        // meet is enough: those names are what the cut proposes (matchName() checks them), so
        // the constraints after it are not worked out, and a rare name's dozens of cuts, which
        // mostly come down to the same initials or pair of words of a name or two, read them
        // once.
        ReadAlone alone;
        std::vector<std::vector<const Source*>> plans; // cuts whose constraints all hold many
        std::vector<const Source*> sources;
        // A piece must be able to follow the one before it (some name has such a pair of
        // words, when they are few enough to count) and the two before it (some name has those
        // initials): the ways that cannot are not counted against kMaxCuts, so a long query's
        // cuts are those names could have ("faitftnlorte": fa|i|t|f|t|n|lo|re|te, where the
        // first 64 cuts were fai|... and fa|it|...).
        auto fits = [&](const std::vector<std::string_view>& before, std::string_view piece) {
            return before.size() < 2 ||
                   initialsOf(before[before.size() - 2][0], before.back()[0], piece[0]).postings >
                       0;
        };
        for (const std::vector<std::string_view>& cut : wordStartCuts(
                 query_.compact, [&](std::string_view p) { return startsWord(p); }, kMaxCuts,
                 fits)) {
            // A cut with a constraint no name meets proposes nothing (allOf() would read that
            // empty source first): the rest of it is not worked out either.
            sources.clear();
            bool none = false;
            const Source* few = nullptr;
            auto consider = [&](const Source& source) {
                sources.push_back(&source);
                none = source.postings == 0;
                if (source.postings <= small_)
                    few = &source;
                return !none && !few;
            };
            bool more = true;
            // Pieces go to consecutive words: each three in a row are initials a name has.
            for (size_t i = 0; more && i + 2 < cut.size(); ++i)
                more = consider(initialsOf(cut[i][0], cut[i + 1][0], cut[i + 2][0]));
            for (size_t i = 0; more && i < cut.size(); ++i)
                more = consider(startingWith(cut[i]));
            // Each two in a row are a pair of words a name has (when the words they start are
            // few).
            std::vector<size_t> unpaired; // pieces whose pairs with the next were not worked out
            for (size_t i = 0; more && i + 1 < cut.size(); ++i) {
                if (const std::optional<Source>& pairs = pairsOfParts(cut[i], cut[i + 1]))
                    more = consider(*pairs);
                else
                    unpaired.push_back(i);
            }
            // When every constraint still holds many names ("locl": lo|cl, a few hundred
            // words each side), the pairs the index holds are read by their start: the names
            // read are then about those the cut finds, not every name with such words.
            if (more && !unpaired.empty() && cut.size() == 2 &&
                (*std::min_element(
                     sources.begin(), sources.end(), [](const Source* a, const Source* b) {
                         return a->postings < b->postings;
                     }))->postings > kReadPairsAbove) {
                for (size_t i : unpaired)
                    if (const std::optional<Source>& pairs =
                            pairsOfParts(cut[i], cut[i + 1], kMaxCutFirstWords);
                        pairs && !(more = consider(*pairs)))
                        break;
            }
            if (none)
                continue;
            if (few) {
                alone.read(*this, *few);
                continue;
            }
            // (pairsScratch_ changes with the next cut: a cut pointing at it is worked out now.)
            if (pairsScratch_ &&
                std::find(sources.begin(), sources.end(), &*pairsScratch_) != sources.end())
                out.add(allOf(sources));
            else
                plans.push_back(sources);
        }
        addPlans(plans, alone, out);
    }

    /// The constraint of `plan` that the fewest names meet (allOf() reads it).
    static const Source* rarest(const std::vector<const Source*>& plan) {
        return *std::min_element(plan.begin(), plan.end(), [](const Source* a, const Source* b) {
            return a->postings < b->postings;
        });
    }

    /// What a Source holds, as a key: the constraints of different cuts and runs that are
    /// the same names (Sources cached or copied) have the same one.
    static std::string identity(const Source& source) {
        std::string key{source.spanKind};
        auto number = [&](uint64_t n) { key.append(reinterpret_cast<const char*>(&n), sizeof n); };
        number(source.span.begin);
        number(source.span.end);
        number(uint64_t(reinterpret_cast<uintptr_t>(source.names.get())));
        for (const Token& token : source.tokens) {
            key += token.kind;
            key += token.text;
            key += '\0';
        }
        return key;
    }

    /// The constraints read alone for one rank, each once, and the names they hold.
    struct ReadAlone {
        std::unordered_set<const Source*> seen; ///< by place first: most are cached Sources
        std::unordered_set<std::string> done;   ///< by identity()
        std::shared_ptr<std::vector<View::NameRef>> names =
            std::make_shared<std::vector<View::NameRef>>();
        void read(NameSearch& search, const Source& source) {
            // (pairsScratch_ changes: never known by its place.)
            const bool scratch = search.pairsScratch_ && &source == &*search.pairsScratch_;
            if ((scratch || seen.insert(&source).second) && done.insert(identity(source)).second)
                search.readInto(source, *names);
        }
    };

    /// Adds the candidates of `plans` (each the constraints of a cut or run, every one
    /// holding more than small_ names) and of the constraints read alone to `out`. A plan is
    /// allOf() its constraints unless its rarest is the rarest of another plan too and holds
    /// at most sharedAlone_ names: that one is read alone, once (the cuts of a query of a
    /// name's middle come down to a few pairs and initials of a few hundred names each,
    /// every one in several cuts: intersected per cut, each cost ~200K instructions at 2M
    /// names, and all of them found nothing).
    void addPlans(const std::vector<std::vector<const Source*>>& plans, ReadAlone& alone,
                  Union& out) {
        std::vector<std::string> ids(plans.size()); // of each plan's rarest, when few enough
        std::unordered_map<std::string_view, size_t> rarestOf; // identity -> plans
        for (size_t i = 0; i < plans.size(); ++i)
            if (const Source* r = rarest(plans[i]); r->postings <= sharedAlone_)
                ++rarestOf[ids[i] = identity(*r)];
        for (size_t i = 0; i < plans.size(); ++i) {
            if (!ids[i].empty() && rarestOf[ids[i]] > 1)
                alone.read(*this, *rarest(plans[i]));
            else
                out.add(allOf(plans[i]));
        }
        // The names read alone, read whole and merged by a sort: a stream each, merged name
        // by name, cost ~500 instructions a name.
        std::shared_ptr<std::vector<View::NameRef>>& names = alone.names;
        std::sort(names->begin(), names->end());
        names->erase(std::unique(names->begin(), names->end()), names->end());
        if (!names->empty())
            out.add(std::make_unique<NamesStream>(std::move(names)));
    }

    /// Appends every name of `source` (a few: at most small_ postings) to `names`.
    void readInto(const Source& source, std::vector<View::NameRef>& names) {
        source.forEachToken(view_, [&](const Token& token) {
            if (std::unique_ptr<View::Postings> postings = view_.postings(token.spelled()))
                for (uint32_t length = 0, id = 0; postings->next(length, id);)
                    names.emplace_back(length, id);
        });
        if (source.names)
            names.insert(names.end(), source.names->begin(), source.names->end());
    }

    /// The names where a word of `first` comes right before one of `second` (nullopt: not
    /// worked out). Each pair of words is counted when that is a few pairs; else, when `first`
    /// is at most `maxFirstWords` words and `second` the words a piece starts, the pairs the
    /// index holds are read, for each word of `first`, as the run of tokens that start with
    /// that word and the piece: the pairs no name has cost nothing ("easeRe": a few words end
    /// with "ease", a hundred start with "re", a dozen pairs of them are some name's). Substring
    /// runs read them (a quarter of the instructions); word-start cuts do not (they share
    /// their pairs across many cuts of rare names, and reading them cost those more).
    std::optional<Source> pairsOf(const Source& first, const Source& second,
                                  size_t maxFirstWords = 0) {
        constexpr size_t kMaxPairs = 16;
        if (first.size() * second.size() <= kMaxPairs) {
            Source pairs;
            first.forEachToken(view_, [&](const Token& a) {
                second.forEachToken(view_, [&](const Token& b) {
                    const std::string token = pairToken(a.text, b.text);
                    if (const size_t count = postingCount(token))
                        pairs.add({kPairToken, intern(token.substr(1))}, count);
                });
            });
            return pairs;
        }
        if (first.size() > maxFirstWords || second.starts.empty())
            return std::nullopt;
        // More pairs than a few: each would be a stream of its own to read, where the words'
        // streams are fewer.
        constexpr size_t kMaxPairTokens = 256;
        Source pairs;
        bool many = false;
        first.forEachToken(view_, [&](const Token& a) {
            if (!many)
                view_.forEachTokenStarting(
                    pairToken(a.text, second.starts), [&](std::string_view token, size_t count) {
                        many = pairs.tokens.size() == kMaxPairTokens;
                        if (!many)
                            pairs.add({kPairToken, intern(std::string(token.substr(1)))}, count);
                        return !many;
                    });
        });
        if (!many)
            return pairs;
        // More pairs than streams can merge cheaply ("sc|s": a dozen words start with "sc",
        // and each comes before hundreds that start with "s"): their names, read once, sorted.
        auto names = std::make_shared<std::vector<View::NameRef>>();
        bool within = true;
        first.forEachToken(view_, [&](const Token& a) {
            within = within && view_.namesOfTokensStarting(pairToken(a.text, second.starts), *names,
                                                           kMaxPairNames - names->size());
        });
        if (!within)
            return std::nullopt;
        std::sort(names->begin(), names->end());
        names->erase(std::unique(names->begin(), names->end()), names->end());
        pairs = {};
        pairs.postings = names->size();
        pairs.names = std::move(names);
        return pairs;
    }

    /// pairsOf() the words two pieces of the query start, cached by the pieces' places: the
    /// ways to cut a query share their neighbouring pieces.
    const std::optional<Source>& pairsOfParts(std::string_view first, std::string_view second,
                                              size_t maxFirstWords = 0) {
        const std::optional<size_t> a = offsetInQuery(first), b = offsetInQuery(second);
        if (!a || !b) { // not parts of the query: not cached
            pairsScratch_ = pairsOf(startingWith(first), startingWith(second), maxFirstWords);
            return pairsScratch_;
        }
        const uint64_t key =
            uint64_t(*a) << 48 | uint64_t(first.size()) << 32 | uint64_t(*b) << 16 | second.size();
        auto [it, inserted] = (maxFirstWords ? pairsRead_ : pairsOfParts_).try_emplace(key);
        if (inserted)
            it->second = pairsOf(startingWith(first), startingWith(second), maxFirstWords);
        return it->second;
    }

    /// The names holding exactly `word`, if the vocabulary has it.
    std::optional<Source> wholeWord(std::string_view word) {
        std::optional<Source> found;
        view_.forEachWord(word, [&](std::string_view w, uint32_t names) {
            if (w == word) {
                found.emplace();
                found->add({kWordToken, w}, names);
            }
            return false;
        });
        return found;
    }

    /// Every way `rest` is whole words of the vocabulary and then the start of one (at most
    /// `cap`): the sources of each way's words, appended to `prefix`.
    void wordRuns(std::string_view rest, std::vector<Source>& prefix,
                  std::vector<std::vector<Source>>& out, size_t cap) {
        if (out.size() >= cap)
            return;
        if (startsWord(rest)) {
            out.push_back(prefix);
            out.back().push_back(startingWith(rest));
        }
        for (size_t k = 1; k < rest.size() && out.size() < cap && startsWord(rest.substr(0, k));
             ++k) {
            if (std::optional<Source> word = wholeWord(rest.substr(0, k))) {
                prefix.push_back(std::move(*word));
                wordRuns(rest.substr(k), prefix, out, cap);
                prefix.pop_back();
            }
        }
    }

    /// Substring candidates. At a word's start a substring is a word start, so it begins inside
    /// a word w, at some letter after the first: either w holds it all (the names holding w),
    /// or w ends with its first L letters and the rest is whole words and the start of one
    /// (allOf() the names holding such a w and those words).
    /// The vocabulary is read whole: it grows far slower than the names.
    void addSubstrings(Union& out) {
        const std::string_view q = query_.compact;
        if (q.size() < kMinSubstring)
            return;
        Source inside;
        if (q.size() < view_.longestWord()) // else no word is long enough to hold it
            for (size_t i : view_.wordsHolding(q))
                inside.add({kWordToken, view_.wordAt(i)}, view_.namesOfWords({i, i + 1}));
        out.add(streamOf(inside));
        // [L]: the words longer than L whose tail is q's first L letters, in key order.
        std::vector<Source> endingWith(q.size());
        for (size_t L = 1; L < q.size(); ++L)
            for (size_t i : view_.wordsEnding(q.substr(0, L)))
                if (const std::string_view word = view_.wordAt(i); word.size() > L)
                    endingWith[L].add({kWordToken, word}, view_.namesOfWords({i, i + 1}));
        constexpr size_t kMaxRuns = 16;
        std::deque<std::vector<Source>> kept; // the runs' sources, while plans point at them
        std::vector<std::vector<const Source*>> plans;
        ReadAlone alone;
        for (size_t L = 1; L < q.size(); ++L) {
            if (endingWith[L].size() == 0)
                continue;
            std::vector<Source> first{endingWith[L]};
            std::vector<std::vector<Source>> runs;
            wordRuns(q.substr(L), first, runs, kMaxRuns);
            if (runs.size() >= kMaxRuns) // too many ways: what any of them starts with
                runs = {{endingWith[L], continuing(q.substr(L))}};
            for (std::vector<Source>& run : runs) {
                for (size_t i = 0, words = run.size(); i + 1 < words; ++i)
                    if (std::optional<Source> pairs =
                            pairsOf(run[i], run[i + 1], kMaxPairFirstWords))
                        run.push_back(std::move(*pairs));
                std::vector<const Source*>& sources = plans.emplace_back();
                for (const Source& source : kept.emplace_back(std::move(run)))
                    sources.push_back(&source);
                if (const Source* r = rarest(sources); r->postings <= small_) {
                    alone.read(*this, *r);
                    plans.pop_back();
                }
            }
        }
        addPlans(plans, alone, out);
    }

    View& view_;
    size_t limit_;
    NameDetail detail_;
    /// A constraint of at most this many names is read alone: its names are checked with
    /// matchName() rather than filtered by the others. Where a name is an LMDB look-up (2.2K
    /// instructions) a filter pays from a few dozen; with the names in memory (a few
    /// instructions and matchName()'s ~0.5K) from a hundred or so, where it costs ~5K a name
    /// (callgrind at 300k names, 20 queries a kind: 16 -> 128 took the median substring
    /// request from 838K instructions to 586K, the median abbreviation from 1.57M to 1.33M;
    /// 512 was no better).
    const bool inMemory_ = view_.namesInMemory();
    const size_t small_ = inMemory_ ? 128 : 16;
    /// A constraint of at most this many names that is the rarest of several plans is read
    /// alone (addPlans()).
    const size_t sharedAlone_ = inMemory_ ? 512 : small_;
    bool qualified_ = false;
    std::string lowerPattern_;
    NameQuery query_;
    std::vector<NameMatch> matches_;
    std::optional<std::string> lastRanked_; ///< rankOf()'s last name
    std::optional<MatchRank> lastRank_;
    std::unordered_map<uint64_t, size_t> byUsr_;
    std::set<std::string, std::less<>> expanded_;
    size_t settled_ = 0;
    uint64_t expansions_ = 0; ///< expand() calls that did expand
    uint64_t boundaryOf_ = UINT64_MAX;
    RankKey boundary_{};
    std::vector<RankKey> boundaryKeys_;
    std::unordered_map<std::string, size_t> postingCounts_;
    std::unordered_map<std::string, Source> startingWith_;
    std::unordered_map<uint64_t, Source> startingWithPart_;            ///< kind, offset and length
    std::unordered_map<uint64_t, std::optional<Source>> pairsOfParts_; ///< places of two parts
    std::unordered_map<uint64_t, std::optional<Source>> pairsRead_;    ///< the same, read by start
    std::optional<Source> pairsScratch_;
    std::unordered_map<uint32_t, Source> initials_; ///< initialsOf(), by its three letters
    static constexpr size_t kUnknown = std::numeric_limits<size_t>::max();
    std::vector<size_t> longestWordStart_; ///< per offset of the compact query; kUnknown
    std::deque<std::string> texts_;        ///< intern()'s
};

} // namespace

bool betterOccurrence(const Symbol& symbol, const std::string& path, const SymbolHit& best) {
    if (symbol.isDefinition() != best.symbol.isDefinition())
        return symbol.isDefinition();
    return std::tie(path, symbol.location) < std::tie(best.path, best.symbol.location);
}

std::pair<size_t, bool> StoreSnapshot::View::UsrSlots::slot(uint64_t usrHash) {
    if (byUsr_.empty()) {
        for (size_t i = 0; i < usrs_.size(); ++i)
            if (usrs_[i] == usrHash)
                return {i, false};
        if (usrs_.size() == kLookedThrough)
            for (size_t i = 0; i < usrs_.size(); ++i)
                byUsr_.emplace(usrs_[i], i);
    }
    if (!byUsr_.empty()) {
        auto [it, inserted] = byUsr_.try_emplace(usrHash, usrs_.size());
        if (!inserted)
            return {it->second, false};
    }
    usrs_.push_back(usrHash);
    return {usrs_.size() - 1, true};
}

void StoreSnapshot::View::NamedUsrs::add(uint64_t usrHash, Symbol&& symbol,
                                         const std::string& path) {
    const auto [at, added] = slots_.slot(usrHash);
    if (added) {
        usrs_.push_back({usrHash, {std::move(symbol), path}, 1});
        return;
    }
    NamedUsr& named = usrs_[at];
    ++named.count;
    if (betterOccurrence(symbol, path, named.best))
        named.best = {std::move(symbol), path};
}

void StoreSnapshot::View::forEachUsrNamed(std::string_view key, uint32_t, NameDetail,
                                          const std::function<void(NamedUsr&&)>& fn) {
    NamedUsrs usrs;
    forEachSymbolNamed(key, [&](uint64_t usrHash, Symbol&& symbol, const std::string& path) {
        usrs.add(usrHash, std::move(symbol), path);
    });
    for (NamedUsr& named : usrs.all())
        fn(std::move(named));
}

std::vector<uint64_t> StoreSnapshot::resolveName(std::string_view name) const {
    while (name.starts_with("::"))
        name.remove_prefix(2);
    const std::string_view last = lastComponent(name);
    const bool qualified = last.size() != name.size();

    struct Candidate {
        uint64_t usrHash;
        Symbol symbol;
    };
    std::vector<Candidate> candidates;
    view_->forEachSymbolNamed(nameKey(last),
                              [&](uint64_t usrHash, Symbol&& symbol, const std::string&) {
                                  candidates.push_back({usrHash, std::move(symbol)});
                              });
    // By USR hash: an order that does not follow how the store keeps its rows.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.usrHash < b.usrHash; });
    auto collect = [&](bool caseSensitive) {
        std::vector<uint64_t> out;
        const std::string lowerName = lowerAscii(name), lowerLast = lowerAscii(last);
        for (const Candidate& c : candidates) {
            bool match;
            if (caseSensitive)
                match = c.symbol.name == last &&
                        (!qualified || endsWithScope(c.symbol.qualifiedName, name));
            else
                match =
                    lowerAscii(c.symbol.name) == lowerLast &&
                    (!qualified || endsWithScope(lowerAscii(c.symbol.qualifiedName), lowerName));
            if (match && std::find(out.begin(), out.end(), c.usrHash) == out.end())
                out.push_back(c.usrHash);
        }
        return out;
    };
    std::vector<uint64_t> exact = collect(true);
    return exact.empty() ? collect(false) : exact;
}

std::vector<NameMatch> StoreSnapshot::findSymbols(std::string_view pattern, size_t limit,
                                                  NameDetail detail) const {
    return NameSearch(*view_, pattern, limit, detail).run();
}

} // namespace symdex
