#include "store/block_cache.h"
#include "store/encoding.h"
#include "store/lmdb_layout.h"
#include "store/records.h"
#include "store/ref_blocks.h"
#include "store/symbol_blocks.h"
#include "store/zstd_frame.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace symdex;

TEST_CASE("varints and strings round-trip, and truncation is detected", "[records]") {
    std::string bytes;
    Writer w(bytes);
    const uint64_t values[] = {
        0, 1, 127, 128, 300, 1ull << 35, std::numeric_limits<uint64_t>::max()};
    for (uint64_t v : values)
        w.varint(v);
    w.svarint(-1);
    w.svarint(std::numeric_limits<int64_t>::min());
    w.string("héllo");
    w.fixed64(0x0123456789abcdefULL);
    Reader r(bytes);
    for (uint64_t v : values)
        CHECK(r.varint() == v);
    CHECK(r.svarint() == -1);
    CHECK(r.svarint() == std::numeric_limits<int64_t>::min());
    CHECK(r.string() == "héllo");
    CHECK(r.fixed64() == 0x0123456789abcdefULL);
    CHECK(r.atEnd());
    CHECK_FALSE(r.failed());

    Reader truncated(std::string_view(bytes).substr(0, bytes.size() - 3));
    for (int i = 0; i < 9; ++i)
        truncated.varint();
    truncated.string();
    truncated.fixed64();
    CHECK(truncated.failed());
}

TEST_CASE("big-endian keys sort numerically", "[records]") {
    std::string a, b;
    appendBigEndian(a, 255, 4);
    appendBigEndian(b, 256, 4);
    CHECK(a < b);
    CHECK(readBigEndian(b, 4) == 256);
}

TEST_CASE("hash64 is stable", "[records]") {
    // Persisted in stores: these values must never change without a format version bump.
    CHECK(hash64("c:@N@geo@S@Circle") != hash64("c:@N@geo@S@Circle "));
    CHECK(hash64("abcdefgh") != hash64("abcdefgi"));
    CHECK(hash64("c:@N@geo@S@Circle") == 0x502419ce5c5b99c7ULL);
}

TEST_CASE("records round-trip", "[records]") {
    Symbol s;
    s.usr = "c:@N@geo@S@Circle@F@area#1";
    s.name = "area";
    s.qualifiedName = "geo::Circle::area";
    s.kind = SymbolKind::Method;
    s.flags = kDefinition | kTemplate;
    s.location = {11, 14};
    s.extent = {{11, 1}, {13, 2}};
    s.signature = "virtual Area area() const";
    s.comment = "The area, in square units.";
    CHECK(decodeSymbol(encodeSymbol(s)) == s);

    // An extent that starts after the location still round-trips (delta signs).
    s.extent = {{12, 3}, {10, 1}};
    CHECK(decodeSymbol(encodeSymbol(s)) == s);

    Reference ref{hash64(s.usr), {400000, 7}, kRoleCall | kRoleDynamic};
    CHECK(decodeReference(encodeReference(ref)) == ref);
    ref.container = hash64("c:@F@main#");
    ref.roles = kRoleOverride;
    CHECK(decodeReference(encodeReference(ref)) == ref);

    FileRecord f;
    f.path = "/src/a b.cc";
    f.contentHash = 0xfeedULL;
    f.mtimeNs = -5;
    f.size = 1234;
    f.ctimeNs = 1700000000123456789;
    f.inode = 0xfffffffffULL;
    f.symbolCount = 7;
    f.referenceCount = 9;
    f.ownerFileId = 12;
    f.errorCount = 3;
    f.warningCount = 70000;
    f.firstError = "/src/a b.cc:2:30: error: use of undeclared identifier 'x'";
    CHECK(decodeFileRecord(encodeFileRecord(f)) == f);
    f.asciiOnly = true;
    CHECK(decodeFileRecord(encodeFileRecord(f)) == f);
    std::string badFlag = encodeFileRecord(f);
    badFlag.back() = 2;
    CHECK_FALSE(decodeFileRecord(badFlag));

    TuRecord tu;
    tu.commandHash = 42;
    tu.status = TuStatus::Errors;
    tu.errorCount = 2;
    tu.warningCount = 1;
    tu.parseMillis = 812;
    tu.firstError = "a.cc:1:2: error: x";
    tu.fileIds = {7, 1, 1000000};
    tu.filesDigest = filesDigest({0x0123456789abcdefULL, 1, ~0ULL});
    tu.absentIds = {3, 4, 900000, 4000000000u};
    tu.aliases = {{5, 2}, {4000000001u, 0}};
    tu.namespaceStarts = {{hash64("c:@N@std"), "/usr/include/c++/12/bits/c++config.h", {296, 11}},
                          {~0ULL, "", {4000000000u, 1}}};
    CHECK(decodeTuRecord(encodeTuRecord(tu)) == tu);

    // The digest: of every hash, in order; 0 when one is unknown or there are none.
    CHECK(tu.filesDigest != 0);
    CHECK(filesDigest({0x0123456789abcdefULL, 1, ~0ULL}) == tu.filesDigest);
    CHECK(filesDigest({1, 0x0123456789abcdefULL, ~0ULL}) != tu.filesDigest);
    CHECK(filesDigest({0x0123456789abcdefULL, 1}) != tu.filesDigest);
    CHECK(filesDigest({0x0123456789abcdefULL, 0, ~0ULL}) == 0);
    CHECK(filesDigest({}) == 0);

    // A namespace start in one of the TU's files is stored as that file's index; the reader
    // gives the path of a file id back.
    const std::vector<std::string> paths = {"/t/a.cc", "/usr/include/c++/12/bits/c++config.h",
                                            "/t/b.h"};
    const std::string indexed = encodeTuRecord(tu, paths);
    CHECK(indexed.size() + 1 + paths[1].size() == encodeTuRecord(tu).size()); // no length, no path
    const FilePathOf pathOf = [&](uint32_t id) {
        return id == 7 ? paths[0] : id == 1 ? paths[1] : id == 1000000 ? paths[2] : "";
    };
    CHECK(decodeTuRecord(indexed, pathOf) == tu);
    CHECK_FALSE(decodeTuRecord(indexed)); // an index, and no way to read it
    CHECK(decodeTuRecord(encodeTuRecord(tu), pathOf) == tu);

    // Absent ids as differences or as a bitmap, whichever is shorter: dense ones as a bitmap
    // (here 2 bytes of count, 2 of first id, 1 + 63 of bitmap, where the differences take 2 +
    // 300), sparse ones and repeats as differences.
    {
        TuRecord dense = tu;
        dense.absentIds.clear();
        for (uint32_t id = 500; id < 1000; id += 5)
            dense.absentIds.insert(dense.absentIds.end(), {id, id + 1, id + 3});
        const std::string bitmap = encodeTuRecord(dense);
        CHECK(decodeTuRecord(bitmap) == dense);
        TuRecord none = dense;
        none.absentIds.clear();
        CHECK(bitmap.size() == encodeTuRecord(none).size() - 1 + 2 + 2 + 1 + 63); // none: 1 byte
        dense.absentIds.push_back(4000000000u); // far: differences again
        CHECK(decodeTuRecord(encodeTuRecord(dense)) == dense);
        dense.absentIds = {UINT32_MAX - 9, UINT32_MAX - 8, UINT32_MAX - 1, UINT32_MAX};
        CHECK(decodeTuRecord(encodeTuRecord(dense)) == dense);
        dense.absentIds = {3, 3, 4, 5, 6, 7, 8, 9, 10}; // a repeat: no bitmap holds it
        CHECK(decodeTuRecord(encodeTuRecord(dense)) == dense);
    }

    // An alias must name one of the TU's files.
    TuRecord bad = tu;
    bad.aliases = {{5, 3}};
    CHECK_FALSE(decodeTuRecord(encodeTuRecord(bad)));
}

TEST_CASE("corrupt records decode to nothing", "[records]") {
    Symbol s;
    s.usr = "c:@F@f#";
    s.name = "f";
    s.qualifiedName = "f";
    s.kind = SymbolKind::Function;
    std::string bytes = encodeSymbol(s);
    CHECK_FALSE(decodeSymbol(bytes.substr(0, bytes.size() - 1)));
    CHECK_FALSE(decodeSymbol(bytes + "x"));
    bytes[0] = char(200); // no such kind
    CHECK_FALSE(decodeSymbol(bytes));
    CHECK_FALSE(decodeReference("abc"));
    CHECK_FALSE(decodeTuRecord(""));
}

TEST_CASE("a symbol whose extent deltas are out of range decodes without overflow", "[records]") {
    // Found by tests/fuzz/records_fuzzer (seed crash-symbol-line-delta-overflow): a corrupt
    // record's line deltas are any int64, and subtracting INT64_MIN from the line overflowed
    // (undefined behaviour, caught by the UBSan build). Lines are 32-bit and wrap, as encoded.
    std::string bytes;
    Writer w(bytes);
    w.byte(static_cast<uint8_t>(SymbolKind::Function));
    w.byte(0);
    w.varint(0xffffffff); // location line
    w.varint(1);
    w.svarint(std::numeric_limits<int64_t>::min()); // line - extent.begin.line
    w.varint(1);
    w.svarint(std::numeric_limits<int64_t>::max()); // extent.end.line - line
    w.varint(1);
    w.string("f");
    w.string("f");
    w.string("c:@F@f#");
    w.string("int f()"); // signature
    w.string("");        // comment
    std::optional<Symbol> s = decodeSymbol(bytes);
    REQUIRE(s);
    CHECK(s->location.line == 0xffffffffu);
    CHECK(s->extent.begin.line == 0xffffffffu); // 0xffffffff - 0 (INT64_MIN mod 2^32)
    CHECK(s->extent.end.line == 0xfffffffeu);   // 0xffffffff + 0xffffffff (mod 2^32)
    CHECK(decodeSymbol(encodeSymbol(*s)) == s);
}

TEST_CASE("names blocks: rows come back in order from blocks of about kNamesBlockBytes, a row of "
          "thousands of declarations in a block of its own",
          "[records]") {
    std::vector<std::pair<std::string, std::string>> rows;
    size_t bytes = 0;
    for (int i = 0; i < 400; ++i) {
        std::string key = "name" + std::to_string(1000 + i);
        std::string row(i == 100 ? 20000 : 10 + i % 7, char('a' + i % 26));
        bytes += i == 100 ? 0 : row.size() + 6;
        rows.emplace_back(std::move(key), std::move(row));
    }
    const auto blocks = encodeNamesBlocks(rows);
    // The small rows fill blocks evenly; the big one is alone, its neighbours not cut to one row
    // a block after it.
    CHECK(blocks.size() <= bytes / kNamesBlockBytes + 3);
    std::vector<std::pair<std::string, std::string>> again;
    size_t alone = 0;
    for (const auto& [key, value] : blocks) {
        NamesBlockReader reader;
        REQUIRE(reader.start(key, value));
        size_t n = 0;
        while (!reader.done()) {
            REQUIRE(reader.next());
            again.emplace_back(reader.key(), std::string(reader.row()));
            ++n;
        }
        if (n == 1)
            ++alone;
        CHECK(value.size() < 2 * kNamesBlockBytes + 20000);
    }
    CHECK(again == rows);
    CHECK(alone == 1);
    CHECK(encodeNamesBlocks({}).empty());
}

TEST_CASE("a USR table keeps its targets' usrs buckets packed and its containers' hashes, and "
          "refuses bytes of another length",
          "[records]") {
    uint64_t state = 0x9e3779b97f4a7c15;
    auto next = [&] { return state = hash64(std::to_string(state)); };
    for (uint32_t targets : {0u, 1u, 3u, 4u, 7u, 8u, 33u}) {
        for (size_t containers : {size_t(0), size_t(1), size_t(5)}) {
            INFO(targets << " targets, " << containers << " containers");
            std::vector<uint64_t> usrs;
            for (size_t i = 0; i < targets + containers; ++i)
                usrs.push_back(i == 0 ? ~uint64_t(0) : i == 1 ? 0 : next()); // every bit, none
            const std::string bytes = UsrTable::encode(usrs, targets);
            CHECK(bytes.size() == 4 + (targets * kUsrBucketBits + 7) / 8 + 8 * containers);
            const std::optional<UsrTable> table = UsrTable::parse(bytes);
            REQUIRE(table);
            CHECK(table->targets() == targets);
            CHECK(table->size() == usrs.size());
            for (uint32_t i = 0; i < targets; ++i)
                CHECK(table->bucket(i) == usrs[i] >> (64 - kUsrBucketBits));
            for (size_t i = targets; i < usrs.size(); ++i)
                CHECK(table->container(i) == usrs[i]);
            CHECK_FALSE(UsrTable::parse(bytes + "x"));
            if ((targets * kUsrBucketBits) % 8 != 0 || containers > 0)
                CHECK_FALSE(UsrTable::parse(bytes.substr(0, bytes.size() - 1)));
        }
    }
    CHECK_FALSE(UsrTable::parse("abc"));
}

namespace {

Symbol declaration(std::string usr, std::string qualifiedName) {
    Symbol s;
    s.usr = std::move(usr);
    s.qualifiedName = std::move(qualifiedName);
    s.name = s.qualifiedName.substr(s.qualifiedName.rfind(':') + 1);
    s.kind = SymbolKind::Function;
    s.location = {3, 5};
    s.extent = {{3, 1}, {4, 2}};
    s.signature = "void " + s.name + "()";
    return s;
}

/// A block of `symbols`' rows in the format a store keeps them.
std::string blockOf(const std::vector<Symbol>& symbols) {
    std::vector<std::string> encoded;
    for (const Symbol& s : symbols)
        encoded.push_back(encodeSymbol(s));
    return encodeSymbolBlock({encoded.begin(), encoded.end()}, 3);
}

} // namespace

TEST_CASE("a block of declarations gives back each USR byte for byte, having stored what it "
          "repeats of the USRs before it and of its qualified name in a byte",
          "[records]") {
    const std::string get = "c:@N@leveldb@S@DBImpl@F@Get#&1$@N@leveldb@S@ReadOptions#&1$@N@"
                            "leveldb@S@Slice#*$@N@std@N@__cxx11@S@basic_string>#C#";
    std::vector<Symbol> symbols{
        declaration(get, "leveldb::DBImpl::Get"),
        // Parameters: their USRs hold their function's.
        declaration("c:db_impl.cc@4403" + get.substr(2) + "@options", "options"),
        declaration("c:db_impl.cc@4434" + get.substr(2) + "@key", "key"),
        declaration("c:@N@leveldb@S@DBImpl@FI@mutex_", "leveldb::DBImpl::mutex_"),
        // Components are found where the USR spells them, not where C++ would split them.
        declaration("c:@N@leveldb@ST>1#T@Cache@F@Lookup<#t0.0>#", "leveldb::Cache<T>::Lookup<T>"),
        declaration("c:@N@a::b@S@x", "a::b::::x"),
        declaration("", "unnamed"),
        // A USR with a byte the coding uses for itself is kept as it is.
        declaration(std::string("c:@F@odd\x01\x10name"), "odd\x01\x10name"),
        declaration(std::string("c:@F@\x00", 6), ""),
        // Five rows on, the function's USR is no longer one to refer back to.
        declaration("c:db_impl.cc@4500" + get.substr(2) + "@value", "value"),
    };
    size_t plainBytes = 0;
    for (const Symbol& s : symbols)
        plainBytes += encodeSymbol(s).size() + 1;

    const std::string block = blockOf(symbols);
    std::optional<SymbolBlock> decoded = SymbolBlock::decode(block);
    REQUIRE(decoded);
    REQUIRE(decoded->size() == symbols.size());
    CHECK(decoded->complete());
    for (size_t i = 0; i < symbols.size(); ++i) {
        INFO("row " << i);
        CHECK(decodeSymbol(decoded->row(i)) == symbols[i]);
    }
    // A search expands a block's rows up to the one it shows: the same rows, and the count of
    // all.
    for (size_t rows = 1; rows <= symbols.size(); ++rows) {
        INFO("the first " << rows << " rows");
        std::optional<SymbolBlock> first = SymbolBlock::decode(block, nullptr, rows);
        REQUIRE(first);
        CHECK(first->size() == rows);
        CHECK(first->count() == symbols.size());
        CHECK(first->complete() == (rows == symbols.size()));
        for (size_t i = 0; i < rows; ++i)
            CHECK(first->row(i) == decoded->row(i));
    }
    // What zstd gets: each parameter's USR holds its function's as one byte, and the names of
    // the scopes are bytes too.
    std::optional<std::string> coded = SymbolBlock::decompressed(block);
    REQUIRE(coded);
    CHECK(coded->size() + 2 * get.size() < plainBytes);
    CHECK(coded->find("c:db_impl.cc@4403\x10@\x01") != std::string::npos);
    auto count = [&](std::string_view word) {
        size_t n = 0;
        for (size_t at = coded->find(word); at != std::string::npos; at = coded->find(word, at + 1))
            ++n;
        return n;
    };
    CHECK(count("@leveldb") == 3); // all of the last row's
    CHECK(count("@DBImpl") == 1);
    // A qualified name is the scope of one before and the row's name; a signature spells the
    // name in a byte.
    CHECK(count("leveldb::") == 2); // Get's, the first row's, and Lookup's: no scope before
    CHECK(coded->find("\x12::\x01") != std::string::npos); // mutex_'s: Get's scope, 3 back
    // All but the one with no name, the one of one letter, and the one with bytes below 0x20.
    CHECK(count("void \x01()") == symbols.size() - 3);
}

TEST_CASE("a block whose coded strings refer to what is not there, or grow past a block's "
          "size, is refused",
          "[records]") {
    // A block of rows as stored: each its coded qualified name and USR.
    auto block = [](const std::vector<std::pair<std::string, std::string>>& rows) {
        std::string plain, block;
        for (const auto& [qualified, coded] : rows) {
            std::string row;
            Writer w(row);
            w.byte(0);
            w.byte(0);
            for (int i = 0; i < 6; ++i)
                w.varint(1);
            w.string("x");
            w.string(qualified);
            w.string(coded);
            w.string("");
            w.string("");
            Writer(plain).string(row);
        }
        Writer header(block);
        header.varint(rows.size());
        header.varint(1);
        appendCompressed(block, plain, &ZstdDictionary::builtInSymbols());
        return block;
    };
    auto withUsr = [&](std::string coded, std::string qualified) {
        return block({{qualified, coded}});
    };
    REQUIRE(SymbolBlock::decode(withUsr("c:@N@\x01@F@x", "ns::x")));
    CHECK(decodeSymbol(SymbolBlock::decode(withUsr("c:@N@\x02@F@\x01", "ns::x"))->row(0))->usr ==
          "c:@N@ns@F@x");
    CHECK_FALSE(SymbolBlock::decode(withUsr("c:@N@\x03@F@x", "ns::x"))); // no third component
    CHECK_FALSE(SymbolBlock::decode(withUsr("c:@F@\x10", "x")));         // no USR before it
    CHECK_FALSE(SymbolBlock::decode(withUsr("c:@F@\x1f", "x")));         // not a code
    CHECK(
        decodeSymbol(SymbolBlock::decode(withUsr(std::string("\0c:\x1f", 4), "x"))->row(0))->usr ==
        "c:\x1f");

    // Each qualified name sixteen times the one before: refused once past the size a block may
    // have, not expanded to 8 x 16^15 bytes.
    std::vector<std::pair<std::string, std::string>> growing{{"abcdefgh", ""}};
    while (growing.size() < kSymbolsPerBlock)
        growing.emplace_back(std::string(16, '\x14'), "");
    CHECK_FALSE(SymbolBlock::decode(block(growing)));
    growing.resize(3); // 8 x 16^2 bytes
    REQUIRE(SymbolBlock::decode(block(growing)));
    CHECK(decodeSymbol(SymbolBlock::decode(block(growing))->row(2))->qualifiedName.size() ==
          8 * 16 * 16);

    // A million codes for the (empty) scope of a million-byte name: read in one pass, not one
    // pass of the name per code.
    std::optional<SymbolBlock> scopes = SymbolBlock::decode(
        block({{std::string(1 << 20, 'a'), ""}, {std::string(1 << 20, '\x10'), ""}}));
    REQUIRE(scopes);
    CHECK(decodeSymbol(scopes->row(1))->qualifiedName.empty());
}

TEST_CASE("a block of rows that fill a block's size decodes, encodes and decodes again",
          "[records]") {
    // A name of 0x05 bytes (stored as it is), spelled by the qualified name, the USR and the
    // signature: expanded, four times the name; coded again, those three kept as they are,
    // after kLiteral, each a byte longer than it.
    Symbol s;
    s.name = std::string((64u << 20) / 4 - 7, '\x05');
    s.qualifiedName = s.usr = s.signature = s.name;
    s.comment = "x";
    const std::string row = encodeSymbol(s);
    const std::string first = encodeSymbolBlock({row}, 1);
    std::optional<SymbolBlock> decoded = SymbolBlock::decode(first);
    REQUIRE(decoded);
    const std::string again = encodeSymbolBlock({decoded->row(0)}, 1);
    std::optional<SymbolBlock> twice = SymbolBlock::decode(again);
    REQUIRE(twice);
    CHECK(twice->row(0) == row);
}

TEST_CASE("a block kept with more rows stays when a reader keeps fewer of the same bytes",
          "[records]") {
    BlockCache<std::vector<int>> cache(4);
    const std::string bytes = "block bytes", other = "other bytes";
    cache.keep(1, 0, bytes, std::make_shared<const std::vector<int>>(std::vector<int>{1, 2, 3}));
    // A reader that expanded the first row only, racing with the one that expanded them all.
    cache.keep(1, 0, bytes, std::make_shared<const std::vector<int>>(std::vector<int>{1}));
    REQUIRE(cache.find(1, 0, bytes));
    CHECK(cache.find(1, 0, bytes)->size() == 3);
    // More rows of the same bytes replace fewer.
    cache.keep(2, 0, bytes, std::make_shared<const std::vector<int>>(std::vector<int>{1}));
    cache.keep(2, 0, bytes, std::make_shared<const std::vector<int>>(std::vector<int>{1, 2}));
    CHECK(cache.find(2, 0, bytes)->size() == 2);
    // Other bytes (a later commit's block) replace whatever was kept, however many rows.
    cache.keep(1, 0, other, std::make_shared<const std::vector<int>>(std::vector<int>{7}));
    CHECK(!cache.find(1, 0, bytes));
    REQUIRE(cache.find(1, 0, other));
    CHECK(*cache.find(1, 0, other) == std::vector<int>{7});
}
