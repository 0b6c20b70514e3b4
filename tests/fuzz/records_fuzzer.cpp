// Fuzzes the record decoders with bytes as a damaged or foreign store could hold them. The first
// byte picks the record type, the rest is the record.
//
// Checked beyond "no crash, no sanitizer report": what decodes re-encodes to bytes that decode to
// the same value, and re-encoding that is stable (the encoding of a value is canonical).
#include "store/lmdb_layout.h"
#include "store/records.h"
#include "store/ref_blocks.h"
#include "store/symbol_blocks.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace symdex;

namespace {

template <typename Record, typename Decode, typename Encode>
void roundTrip(std::string_view bytes, Decode decode, Encode encode, const char* name) {
    std::optional<Record> value = decode(bytes);
    if (!value)
        return;
    const std::string encoded = encode(*value);
    std::optional<Record> again = decode(encoded);
    if (!again || !(*again == *value) || encode(*again) != encoded) {
        std::fprintf(stderr, "records_fuzzer: %s does not round-trip\n", name);
        std::abort();
    }
}

/// A block of references read against a table of USR hashes, both from the input (the table as
/// `u32 targets` and 0-7 hashes of 8 bytes): what decodes encodes again, with a table of its
/// own, to blocks that decode to the same references, and that table holds each target's
/// `usrs` bucket and each container's hash.
void refBlockRoundTrip(std::string_view bytes) {
    const size_t tableBytes = bytes.empty() ? 0 : 4 + 8 * (uint8_t(bytes[0]) % 8);
    if (bytes.size() < 1 + tableBytes)
        return;
    const std::string_view table = bytes.substr(1, tableBytes);
    const uint32_t targets = uint32_t(readBigEndian(table, 4));
    const size_t size = (tableBytes - 4) / 8;
    if (targets > size)
        return;
    const UsrAt usrAt = [&](uint32_t index) -> std::optional<uint64_t> {
        if (index >= size)
            return std::nullopt;
        return readBigEndian(table.substr(4 + 8 * index), 8);
    };
    std::vector<Reference> refs;
    decodeRefBlock(bytes.substr(1 + tableBytes), size, targets, usrAt, refs); // never crashes
    refs.clear();
    // The rows as they are before compression: what decodes encodes to the same references.
    if (!decodeRefRows(bytes.substr(1 + tableBytes), size, targets, usrAt, refs))
        return;
    const RefBlocks encoded = encodeRefBlocks(refs);
    std::optional<UsrTable> again = UsrTable::parse(encoded.usrTable);
    bool same = again && again->size() == encoded.usrs.size() &&
                again->targets() == encoded.targets && encoded.blocks.size() == 1;
    for (size_t i = 0; same && i < encoded.usrs.size(); ++i)
        same = i < encoded.targets ? again->bucket(i) == encoded.usrs[i] >> (64 - kUsrBucketBits)
                                   : again->container(i) == encoded.usrs[i];
    std::vector<Reference> decoded;
    const UsrAt encodedAt = [&](uint32_t index) -> std::optional<uint64_t> {
        if (index >= encoded.usrs.size())
            return std::nullopt;
        return encoded.usrs[index];
    };
    if (!same ||
        !decodeRefBlock(encoded.blocks[0], again->size(), again->targets(), encodedAt, decoded) ||
        decoded != refs) {
        std::fprintf(stderr, "records_fuzzer: a reference block does not round-trip\n");
        std::abort();
    }
}

/// A block of declarations: what decodes compresses again to a block with the same rows.
void symbolBlockRoundTrip(std::string_view bytes) {
    std::optional<SymbolBlock> block = SymbolBlock::decode(bytes);
    if (!block)
        return;
    std::vector<std::string_view> rows;
    for (size_t i = 0; i < block->size(); ++i)
        rows.push_back(block->row(i));
    const std::string encoded = encodeSymbolBlock(rows, symbolBlockFirstLine(bytes).value_or(0));
    std::optional<SymbolBlock> again = SymbolBlock::decode(encoded);
    bool same = again && again->size() == block->size() &&
                symbolBlockFirstLine(encoded) == symbolBlockFirstLine(bytes);
    for (size_t i = 0; same && i < block->size(); ++i)
        same = again->row(i) == block->row(i);
    if (!same) {
        std::fprintf(stderr, "records_fuzzer: a symbol block does not round-trip\n");
        std::abort();
    }
    // Its first rows alone (what a search expands) are the same rows.
    for (size_t rows = 1; rows < block->size(); ++rows) {
        std::optional<SymbolBlock> first = SymbolBlock::decode(bytes, nullptr, rows);
        bool agrees = first && first->size() == rows && first->count() == block->size();
        for (size_t i = 0; agrees && i < rows; ++i)
            agrees = first->row(i) == block->row(i);
        if (!agrees) {
            std::fprintf(stderr, "records_fuzzer: a block's first rows differ from its rows\n");
            std::abort();
        }
    }
}

/// A `usrs` row: what decodes encodes to the same bytes (the encoding is canonical).
void usrRowRoundTrip(std::string_view bytes) {
    std::vector<UsrEntry> entries;
    if (!decodeUsrRow(bytes, entries))
        return;
    const std::string encoded = encodeUsrRow(entries);
    std::vector<UsrEntry> again;
    if (!decodeUsrRow(encoded, again) || again != entries) {
        std::fprintf(stderr, "records_fuzzer: a usrs row does not round-trip\n");
        std::abort();
    }
}

/// A `names` row: what decodes encodes to the same bytes (the encoding is canonical).
void nameRowRoundTrip(std::string_view bytes) {
    std::vector<NameVariant> variants;
    if (!decodeNameRow(bytes, variants))
        return;
    const std::string encoded = encodeNameRow(variants);
    std::vector<NameVariant> again;
    if (!decodeNameRow(encoded, again) || again != variants) {
        std::fprintf(stderr, "records_fuzzer: a names row does not round-trip\n");
        std::abort();
    }
}

/// A `names` block under a key, both from the input (the first byte: the key's length): what
/// decodes encodes again to blocks that decode to the same rows.
void namesBlockRoundTrip(std::string_view bytes) {
    if (bytes.empty())
        return;
    const size_t keyBytes = uint8_t(bytes[0]) % 32;
    if (bytes.size() < 1 + keyBytes)
        return;
    NamesBlockReader reader;
    if (!reader.start(bytes.substr(1, keyBytes), bytes.substr(1 + keyBytes)))
        return;
    std::vector<std::pair<std::string, std::string>> rows;
    while (!reader.done()) {
        if (!reader.next())
            return;
        if (!rows.empty() && !(rows.back().first < reader.key())) {
            std::fprintf(stderr, "records_fuzzer: a names block decodes out of order\n");
            std::abort();
        }
        rows.emplace_back(reader.key(), std::string(reader.row()));
    }
    std::vector<std::pair<std::string, std::string>> again;
    for (const auto& [key, block] : encodeNamesBlocks(rows)) {
        NamesBlockReader decoded;
        bool ok = decoded.start(key, block);
        while (ok && !decoded.done())
            if ((ok = decoded.next()))
                again.emplace_back(decoded.key(), std::string(decoded.row()));
        if (!ok)
            again.clear();
    }
    if (again != rows) {
        std::fprintf(stderr, "records_fuzzer: a names block does not round-trip\n");
        std::abort();
    }
}

/// A `postings` chunk: what decodes encodes to the same bytes (the encoding is canonical).
void postingChunkRoundTrip(std::string_view bytes) {
    std::vector<Posting> postings;
    if (!decodePostingChunk(bytes, postings))
        return;
    if (postingChunkSize(bytes) != postings.size() ||
        !std::is_sorted(postings.begin(), postings.end()) ||
        std::adjacent_find(postings.begin(), postings.end()) != postings.end()) {
        std::fprintf(stderr, "records_fuzzer: a postings chunk decodes out of order\n");
        std::abort();
    }
    const std::string encoded = encodePostingChunk(postings);
    std::vector<Posting> again;
    if (!decodePostingChunk(encoded, again) || again != postings) {
        std::fprintf(stderr, "records_fuzzer: a postings chunk does not round-trip\n");
        std::abort();
    }
}

/// A `usrs` row keyed by the first two bytes: what decodes encodes to bytes that decode the same
/// (varints may be overlong), every USR is found, and the cuts leave no part past kUsrRunSplit but
/// a bucket's own and split no bucket.
void usrRunRoundTrip(std::string_view bytes) {
    if (bytes.size() < 2)
        return;
    const uint32_t first = uint32_t(readBigEndian(bytes, 2)) % kUsrBuckets;
    bytes.remove_prefix(2);
    std::vector<UsrRunRow> rows;
    if (!decodeUsrRun(bytes, first, rows))
        return;
    const std::string encoded = encodeUsrRun(rows, first);
    std::vector<UsrRunRow> again;
    bool same = decodeUsrRun(encoded, first, again) && again == rows;
    for (const UsrRunRow& row : rows) {
        bool damaged = false;
        same = same && findUsrRow(encoded, first, row.hash, damaged) == std::string_view(row.row) &&
               !damaged;
    }
    const std::vector<size_t> cuts = usrRunCuts(rows, first);
    for (size_t part = 0, begin = 0; same && !rows.empty() && part <= cuts.size(); ++part) {
        const size_t end = part < cuts.size() ? cuts[part] : rows.size();
        same = begin < end &&
               (begin == 0 || usrBucketOf(rows[begin].hash) != usrBucketOf(rows[begin - 1].hash));
        const std::vector<UsrRunRow> slice(rows.begin() + begin, rows.begin() + end);
        const uint32_t key = part == 0 ? first : usrBucketOf(slice.front().hash);
        const bool oneBucket = usrBucketOf(slice.back().hash) == usrBucketOf(slice.front().hash);
        same = same && (oneBucket || encodeUsrRun(slice, key).size() <= kUsrRunSplit);
        begin = end;
    }
    if (!same) {
        std::fprintf(stderr, "records_fuzzer: a usrs row does not round-trip\n");
        std::abort();
    }
}

/// A `nameText` bucket: what decodes encodes to the same bytes, and every name is found.
void nameBucketRoundTrip(std::string_view bytes) {
    std::vector<std::string_view> slots;
    if (!decodeNameBucket(bytes, slots))
        return;
    const std::vector<std::string> names(slots.begin(), slots.end());
    const std::string encoded = encodeNameBucket(names);
    std::vector<std::string_view> again;
    bool same = decodeNameBucket(encoded, again) && again == slots;
    for (uint32_t slot = 0; same && slot < kNamesPerBucket; ++slot) {
        const std::optional<std::string_view> found = nameInBucket(encoded, slot);
        same = slot < names.size() && !names[slot].empty() ? found == names[slot] : !found;
    }
    if (!same) {
        std::fprintf(stderr, "records_fuzzer: a name bucket does not round-trip\n");
        std::abort();
    }
}

/// An `absent` bucket: a zstd frame of slots; what decodes encodes to a frame of the same slots,
/// and a bucket of free slots only to nothing (its row is deleted).
void absentBucketRoundTrip(std::string_view bytes) {
    std::vector<std::string> slots;
    if (!decodeAbsentBucket(bytes, slots))
        return;
    const std::string encoded = encodeAbsentBucket(slots);
    std::vector<std::string> again;
    if (!decodeAbsentBucket(encoded, again) || again != slots ||
        encodeAbsentBucket(again) != encoded) {
        std::fprintf(stderr, "records_fuzzer: an absent bucket does not round-trip\n");
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 13) {
    case 0:
        roundTrip<Symbol>(bytes, decodeSymbol, encodeSymbol, "Symbol");
        break;
    case 1:
        roundTrip<Reference>(bytes, decodeReference, encodeReference, "Reference");
        break;
    case 2:
        roundTrip<FileRecord>(bytes, decodeFileRecord, encodeFileRecord, "FileRecord");
        break;
    case 3:
        roundTrip<TuRecord>(
            bytes, [](std::string_view b) { return decodeTuRecord(b); },
            [](const TuRecord& tu) { return encodeTuRecord(tu); }, "TuRecord");
        break;
    case 4:
        refBlockRoundTrip(bytes);
        break;
    case 5:
        symbolBlockRoundTrip(bytes);
        break;
    case 6:
        usrRowRoundTrip(bytes);
        break;
    case 7:
        nameRowRoundTrip(bytes);
        break;
    case 8:
        postingChunkRoundTrip(bytes);
        break;
    case 9:
        usrRunRoundTrip(bytes);
        break;
    case 10:
        nameBucketRoundTrip(bytes);
        break;
    case 11:
        namesBlockRoundTrip(bytes);
        break;
    case 12:
        absentBucketRoundTrip(bytes);
        break;
    }
    return 0;
}
