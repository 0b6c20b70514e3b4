#include "store/lmdb_layout.h"

#include "store/encoding.h"
#include "store/zstd_frame.h"

#include <algorithm>

namespace symdex {

std::string fileIdKey(uint32_t fileId) {
    std::string key;
    appendBigEndian(key, fileId, 4);
    return key;
}

std::string rowKey(uint32_t fileId, uint32_t seq) {
    std::string key;
    key.reserve(8);
    appendBigEndian(key, fileId, 4);
    appendBigEndian(key, seq, 4);
    return key;
}

uint32_t rowSeq(std::string_view rowKey) {
    return uint32_t(readBigEndian(rowKey.substr(4, 4), 4));
}

std::string usrRunKey(uint32_t bucket) {
    std::string key;
    appendBigEndian(key, bucket, 2);
    return key;
}

std::optional<uint32_t> usrRunBucket(std::string_view key) {
    if (key.size() != 2)
        return std::nullopt;
    return uint32_t(readBigEndian(key, 2));
}

std::string encodeUsrRow(const std::vector<UsrEntry>& entries) {
    std::string out;
    Writer w(out);
    w.varint(entries.size());
    uint32_t fileId = 0;
    for (const UsrEntry& entry : entries) {
        w.varint(entry.fileId - fileId);
        fileId = entry.fileId;
        w.varint(uint64_t(entry.seq) << 2 | (entry.relation ? 2 : 0) |
                 (entry.tag == kRefTag ? 1 : 0));
    }
    return out;
}

bool decodeUsrRow(std::string_view bytes, std::vector<UsrEntry>& entries) {
    Reader r(bytes);
    const uint64_t count = r.varint();
    if (r.failed() || count > bytes.size())
        return false;
    entries.clear();
    entries.reserve(count);
    uint64_t fileId = 0;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t delta = r.varint(); // checked before the sum, which could wrap
        fileId += delta;
        const uint64_t seq = r.varint();
        const bool ref = seq & 1, relation = seq & 2;
        if (r.failed() || delta > UINT32_MAX || fileId > UINT32_MAX || (seq >> 2) > UINT32_MAX ||
            (relation && !ref))
            return false;
        entries.push_back(
            {uint32_t(fileId), ref ? kRefTag : kDeclTag, uint32_t(seq >> 2), relation});
    }
    return r.atEnd();
}

namespace {

/// How many bytes `a` and `b` start with alike: what a front-coded key or token stores once.
size_t sharedPrefix(std::string_view a, std::string_view b) {
    const size_t n = std::min(a.size(), b.size());
    return size_t(std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
}

/// The length of the UsrRow at the start of `bytes` (its count, then two varints an entry);
/// nullopt if it runs out.
std::optional<size_t> usrRowLength(std::string_view bytes) {
    Reader r(bytes);
    const uint64_t count = r.varint();
    if (r.failed() || count > bytes.size())
        return std::nullopt;
    for (uint64_t i = 0; i < 2 * count; ++i)
        r.varint();
    if (r.failed())
        return std::nullopt;
    return bytes.size() - r.rest().size();
}

/// A bucket's head in a `usrs` row: `delta` from the bucket before, `count` USRs.
void writeUsrBucketHead(Writer& w, uint64_t delta, uint64_t count) {
    w.varint(delta << 2 | std::min<uint64_t>(count - 1, 3));
    if (count >= 4)
        w.varint(count - 4);
}

size_t usrBucketHeadSize(uint64_t delta, uint64_t count) {
    return varintSize(delta << 2 | std::min<uint64_t>(count - 1, 3)) +
           (count >= 4 ? varintSize(count - 4) : 0);
}

} // namespace

std::string encodeUsrRun(std::span<const UsrRunRow> rows, uint32_t first) {
    std::string out;
    Writer w(out);
    uint32_t before = first;
    for (size_t i = 0; i < rows.size();) {
        const uint32_t bucket = usrBucketOf(rows[i].hash);
        size_t end = i;
        while (end < rows.size() && usrBucketOf(rows[end].hash) == bucket)
            ++end;
        writeUsrBucketHead(w, bucket - before, end - i);
        for (; i < end; ++i) {
            appendBigEndian(out, usrLowBits(rows[i].hash), 6);
            out += rows[i].row;
        }
        before = bucket;
    }
    return out;
}

bool UsrRunReader::next() {
    if (failed_ || (left_ == 0 && rest_.empty()))
        return false;
    Reader r(rest_);
    if (left_ == 0) {
        const uint64_t head = r.varint();
        const uint64_t delta = head >> 2;
        left_ = (head & 3) + 1;
        if (left_ == 4)
            left_ += r.varint();
        // A bucket after the first differs from the one before; the sum is checked before it
        // could wrap.
        if (r.failed() || (started_ && delta == 0) || delta >= kUsrBuckets ||
            bucket_ + delta >= kUsrBuckets || left_ > rest_.size())
            return fail();
        bucket_ += delta;
    }
    if (r.rest().size() < 6)
        return fail();
    const uint64_t hash = bucket_ << (64 - kUsrBucketBits) | readBigEndian(r.rest(), 6);
    if (started_ && hash <= hash_)
        return fail();
    const std::optional<size_t> length = usrRowLength(r.rest().substr(6));
    if (!length)
        return fail();
    hash_ = hash;
    row_ = r.rest().substr(6, *length);
    rest_ = r.rest().substr(6 + *length);
    --left_;
    started_ = true;
    return true;
}

bool decodeUsrRun(std::string_view bytes, uint32_t first, std::vector<UsrRunRow>& rows) {
    rows.clear();
    std::vector<UsrEntry> entries;
    UsrRunReader usrs(bytes, first);
    while (usrs.next()) {
        if (!decodeUsrRow(usrs.row(), entries))
            return false;
        rows.push_back({usrs.hash(), std::string(usrs.row())});
    }
    return !usrs.failed();
}

std::vector<size_t> usrRunCuts(const std::vector<UsrRunRow>& rows, uint32_t first) {
    // Each bucket's size as encoded after the bucket before; a part that starts with it codes
    // its head with a difference of 0 from the key, no longer than that.
    struct Bucket {
        size_t begin = 0;
        size_t size = 0;
    };
    std::vector<Bucket> buckets;
    size_t total = 0;
    uint32_t before = first;
    for (size_t i = 0; i < rows.size();) {
        const uint32_t bucket = usrBucketOf(rows[i].hash);
        Bucket b{i, 0};
        for (; i < rows.size() && usrBucketOf(rows[i].hash) == bucket; ++i)
            b.size += 6 + rows[i].row.size();
        b.size += usrBucketHeadSize(bucket - before, i - b.begin);
        buckets.push_back(b);
        total += b.size;
        before = bucket;
    }
    std::vector<size_t> cuts;
    if (total <= kUsrRunSplit)
        return cuts;
    const size_t parts = (total + kUsrRunSplit - 1) / kUsrRunSplit;
    const size_t target = (total + parts - 1) / parts;
    size_t filled = 0;
    for (const Bucket& bucket : buckets) {
        if (filled > 0 && filled + bucket.size > target) {
            cuts.push_back(bucket.begin);
            filled = 0;
        }
        filled += bucket.size;
    }
    return cuts;
}

std::optional<std::string_view> findUsrRow(std::string_view run, uint32_t first, uint64_t usrHash,
                                           bool& damaged) {
    UsrRunReader usrs(run, first);
    while (usrs.next()) {
        if (usrs.hash() == usrHash) {
            damaged = false;
            return usrs.row();
        }
        if (usrs.hash() > usrHash) // the USRs are by hash
            break;
    }
    damaged = usrs.failed();
    return std::nullopt;
}

bool NamesBlockReader::start(std::string_view firstKey, std::string_view block) {
    reader_ = Reader(block);
    const uint64_t count = reader_.varint();
    key_.assign(firstKey);
    first_ = true;
    left_ = 0;
    if (reader_.failed() || count == 0 || count > block.size() || firstKey.empty())
        return false;
    left_ = count;
    return true;
}

bool NamesBlockReader::next() {
    if (!first_) {
        const uint64_t shared = reader_.varint();
        const std::string_view rest = reader_.string();
        // Past the key before: where it differs, a greater byte; or the key before and more.
        if (reader_.failed() || shared > key_.size() ||
            (shared < key_.size() ? rest.empty() || uint8_t(rest[0]) <= uint8_t(key_[shared])
                                  : rest.empty()))
            return false;
        key_.resize(shared);
        key_.append(rest);
    }
    first_ = false;
    row_ = reader_.string();
    return !reader_.failed() && (--left_ != 0 || reader_.atEnd());
}

std::vector<std::pair<std::string, std::string>>
encodeNamesBlocks(const std::vector<std::pair<std::string, std::string>>& rows) {
    // Each row as it follows the one before; then blocks of about kNamesBlockBytes, as many as
    // go into the rows' bytes, evenly filled (a block the writer splits leaves two of half its
    // size, not a full one and a remainder). A row of kNamesBlockBytes or more (a name of
    // thousands of declarations) is a block of its own: its neighbours' edits do not rewrite it.
    std::vector<std::string> entries(rows.size());
    size_t small = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        Writer w(entries[i]);
        if (i != 0) {
            const std::string& before = rows[i - 1].first;
            const std::string& key = rows[i].first;
            const size_t shared = sharedPrefix(before, key);
            w.varint(shared);
            w.string(std::string_view(key).substr(shared));
        }
        w.string(rows[i].second);
        if (entries[i].size() < kNamesBlockBytes)
            small += entries[i].size();
    }
    const size_t count = std::max<size_t>(1, (small + kNamesBlockBytes / 2) / kNamesBlockBytes);
    const size_t target = small / count + 1;
    std::vector<std::pair<std::string, std::string>> blocks;
    size_t first = 0, filled = 0; // the block being filled: its first row, its bytes
    auto close = [&](size_t end) {
        std::string value;
        Writer(value).varint(end - first);
        // The first row's key is the block's: only its row.
        Reader firstRow(entries[first]);
        if (first != 0) {
            firstRow.varint();
            firstRow.string();
        }
        value += firstRow.rest();
        for (size_t j = first + 1; j < end; ++j)
            value += entries[j];
        blocks.emplace_back(rows[first].first, std::move(value));
        first = end;
        filled = 0;
    };
    for (size_t i = 0; i < rows.size(); ++i) {
        const bool big = entries[i].size() >= kNamesBlockBytes;
        if (big && i != first)
            close(i);
        filled += entries[i].size();
        if (big || filled >= target || i + 1 == rows.size())
            close(i + 1);
    }
    return blocks;
}

std::string nameBucketKey(uint32_t nameId) {
    return fileIdKey(nameId / kNamesPerBucket);
}

std::string encodeNameBucket(const std::vector<std::string>& slots) {
    size_t used = slots.size();
    while (used > 0 && slots[used - 1].empty())
        --used;
    std::string out;
    Writer w(out);
    for (size_t i = 0; i < used; ++i)
        w.string(slots[i]);
    return out;
}

namespace {

/// The slots of a NameBucket's layout, at most `capacity`; false if `bytes` is not one.
bool decodeSlots(std::string_view bytes, size_t capacity, std::vector<std::string_view>& slots) {
    slots.clear();
    Reader r(bytes);
    while (!r.atEnd()) {
        const std::string_view slot = r.string();
        if (r.failed() || slots.size() == capacity)
            return false;
        slots.push_back(slot);
    }
    return !slots.empty() && !slots.back().empty();
}

} // namespace

bool decodeNameBucket(std::string_view bytes, std::vector<std::string_view>& slots) {
    return decodeSlots(bytes, kNamesPerBucket, slots);
}

std::string encodeAbsentBucket(const std::vector<std::string>& slots) {
    const std::string plain = encodeNameBucket(slots); // its layout, slots of any number
    std::string out;
    if (!plain.empty())
        appendCompressed(out, plain);
    return out;
}

bool decodeAbsentBucket(std::string_view bytes, std::vector<std::string>& slots) {
    slots.clear();
    std::string plain;
    std::vector<std::string_view> views;
    // Paths are whatever a parse tried to open, of no length the writer limits: the bound is
    // only against a damaged frame's size (32 paths of 64 KiB).
    if (!decompress(bytes, plain, kAbsentPerBucket * (size_t(64) << 10)) ||
        !decodeSlots(plain, kAbsentPerBucket, views))
        return false;
    slots.assign(views.begin(), views.end());
    return true;
}

std::optional<std::string_view> nameInBucket(std::string_view bucket, uint32_t nameId) {
    Reader r(bucket);
    for (uint32_t slot = 0; slot <= nameId % kNamesPerBucket && !r.atEnd(); ++slot) {
        const std::string_view name = r.string();
        if (r.failed())
            return std::nullopt;
        if (slot == nameId % kNamesPerBucket && !name.empty())
            return name;
    }
    return std::nullopt;
}

std::string encodeNameRow(const std::vector<NameVariant>& variants) {
    std::string out;
    Writer w(out);
    w.varint(variants.size());
    for (const NameVariant& variant : variants) {
        w.varint(variant.nameId);
        w.varint(variant.declarations.size());
        uint32_t fileId = 0;
        for (const NameEntry& entry : variant.declarations) {
            w.varint(entry.fileId - fileId);
            fileId = entry.fileId;
            w.varint(entry.seq);
            w.varint(entry.rank);
        }
    }
    return out;
}

bool decodeNameRow(std::string_view bytes, std::vector<NameVariant>& variants) {
    Reader r(bytes);
    const uint64_t count = r.varint();
    if (r.failed() || count > bytes.size())
        return false;
    variants.assign(count, {});
    for (NameVariant& variant : variants) {
        const uint64_t nameId = r.varint(), n = r.varint();
        if (r.failed() || nameId > UINT32_MAX || n > bytes.size())
            return false;
        variant.nameId = uint32_t(nameId);
        variant.declarations.reserve(n);
        uint64_t fileId = 0;
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t delta = r.varint(); // checked before the sum, which could wrap
            fileId += delta;
            const uint64_t seq = r.varint(), rank = r.varint();
            if (r.failed() || delta > UINT32_MAX || fileId > UINT32_MAX || seq > UINT32_MAX ||
                rank > UINT32_MAX)
                return false;
            variant.declarations.push_back({uint32_t(fileId), uint32_t(seq), uint32_t(rank)});
        }
    }
    return r.atEnd();
}

std::string postingKey(std::string_view token, Posting first) {
    std::string key = postingPrefix(token);
    appendBigEndian(key, std::min<uint32_t>(first.length, 0xffff), 2);
    appendBigEndian(key, first.id, 4);
    return key;
}

std::string postingPrefix(std::string_view token) {
    std::string prefix(token);
    prefix += '\0';
    return prefix;
}

Posting postingKeyFirst(std::string_view key) {
    if (key.size() < 6)
        return {};
    return {uint32_t(readBigEndian(key.substr(key.size() - 6), 2)),
            uint32_t(readBigEndian(key.substr(key.size() - 4), 4))};
}

std::string encodePostingChunk(const std::vector<Posting>& postings) {
    std::string out;
    Writer w(out);
    w.varint(postings.size());
    for (size_t i = 0; i < postings.size(); ++i) {
        const Posting& p = postings[i];
        if (i == 0) {
            w.varint(p.length);
            w.varint(p.id);
        } else if (p.length == postings[i - 1].length) {
            w.varint(uint64_t(p.id - postings[i - 1].id - 1) << 1);
        } else {
            w.varint(uint64_t(p.length - postings[i - 1].length) << 1 | 1);
            w.varint(p.id);
        }
    }
    return out;
}

std::optional<size_t> postingChunkSize(std::string_view bytes) {
    Reader r(bytes);
    const uint64_t count = r.varint();
    if (r.failed() || count > bytes.size())
        return std::nullopt;
    return size_t(count);
}

std::string encodePostingGroup(const PostingGroup& group) {
    std::string out;
    Writer w(out);
    std::string_view before = group.empty() ? std::string_view() : group.front().first;
    for (const auto& [token, chunk] : group) {
        const size_t shared = sharedPrefix(before, token);
        w.varint(shared);
        w.string(std::string_view(token).substr(shared));
        w.string(chunk);
        before = token;
    }
    return out;
}

bool PostingGroupReader::start(std::string_view key, std::string_view value) {
    if (!isPostingGroupKey(key))
        return false;
    keyToken_.assign(key.substr(0, key.size() - 1));
    token_ = keyToken_;
    reader_ = Reader(value);
    first_ = true;
    return true;
}

bool PostingGroupReader::next(std::string_view& token, std::string_view& chunk) {
    const uint64_t shared = reader_.varint();
    const std::string_view rest = reader_.string();
    chunk = reader_.string();
    if (reader_.failed() || shared > token_.size() || rest.find('\0') != std::string_view::npos)
        return false;
    // The tokens share their first `shared` bytes: the new one is after the one before when
    // its rest is after the rest of that one.
    if (!first_ && !(rest > std::string_view(token_).substr(shared)))
        return false;
    token_.resize(shared);
    token_.append(rest);
    if (first_ && token_ != keyToken_)
        return false;
    first_ = false;
    const std::optional<size_t> size = postingChunkSize(chunk);
    if (!size || *size > kPostingsPerChunk)
        return false;
    token = token_;
    return true;
}

std::optional<std::string_view> findInPostingGroup(std::string_view key, std::string_view value,
                                                   std::string_view token, bool& damaged) {
    damaged = !isPostingGroupKey(key);
    if (damaged)
        return std::nullopt;
    // `match`: the bytes the token before shares with `token`, which it is before (its next byte
    // is smaller, or it has no more). A token that shares more than that with the one before is
    // before `token` too; one that shares less is past it.
    size_t match = 0;
    Reader r(value);
    for (bool first = true; !r.atEnd(); first = false) {
        const uint64_t shared = r.varint();
        std::string_view rest = r.string();
        const std::string_view chunk = r.string();
        if (r.failed()) {
            damaged = true;
            return std::nullopt;
        }
        if (first) {
            if (shared != key.size() - 1 || !rest.empty()) {
                damaged = true;
                return std::nullopt;
            }
            rest = key.substr(0, key.size() - 1); // the first token is the key's
        } else if (shared > match) {
            continue;
        } else if (shared < match) {
            return std::nullopt;
        }
        const std::string_view want = token.substr(match);
        const size_t same = sharedPrefix(rest, want);
        if (same == rest.size() && same == want.size())
            return chunk;
        // Bytes compare unsigned, as LMDB's keys and std::string_view do.
        if (same == want.size() ||
            (same < rest.size() && uint8_t(rest[same]) > uint8_t(want[same])))
            return std::nullopt; // past it
        match += same;
    }
    return std::nullopt;
}

bool decodePostingGroup(std::string_view key, std::string_view value, PostingGroup& group) {
    group.clear();
    PostingGroupReader reader;
    if (!reader.start(key, value) || reader.done())
        return false;
    std::string_view token, chunk;
    while (!reader.done()) {
        if (!reader.next(token, chunk))
            return false;
        group.emplace_back(std::string(token), std::string(chunk));
    }
    return true;
}

bool decodePostingChunk(std::string_view bytes, std::vector<Posting>& postings) {
    PostingChunkReader reader;
    if (!reader.start(bytes))
        return false;
    postings.clear();
    postings.reserve(reader.left());
    Posting posting;
    while (!reader.done()) {
        if (!reader.next(posting))
            return false;
        postings.push_back(posting);
    }
    return true;
}

} // namespace symdex
