// Crash isolation (indexer/parse_worker.h): TUs that crash, overflow the stack, call
// report_fatal_error, hang, or include a FIFO or a device fail alone; every other TU is committed;
// a crashed TU is not parsed again until what it read changes. Plus the worker wire format.
#include "indexer/indexer.h"
#include "indexer/parse_worker.h"
#include "indexer/worker_protocol.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <sys/stat.h>
#include <thread>

using namespace symdex;
using symdex::test::TempDir;

namespace {

/// A small tree: two good TUs sharing a header, plus whatever bad TUs a test adds.
struct Tree {
    TempDir dir;
    std::vector<std::string> sources{"a.cpp", "b.cpp"};
    std::unique_ptr<SymbolStore> store;

    Tree() {
        test::writeFile(dir / "h.h", "#pragma once\nint shared(int);\n");
        test::writeFile(dir / "a.cpp", "#include \"h.h\"\nint alpha() { return shared(1); }\n");
        test::writeFile(dir / "b.cpp", "#include \"h.h\"\nint beta() { return shared(2); }\n");
    }

    void add(const std::string& name, const std::string& text) {
        test::writeFile(dir / name, text);
        sources.push_back(name);
    }

    IndexSummary index(IndexOptions options = {}, std::vector<std::string> flags = {}) {
        flags.insert(flags.begin(), "-std=c++17");
        test::writeCompileDb(dir.path(), sources, flags);
        if (!store) {
            StoreOptions storeOptions;
            storeOptions.directory = dir.path() / ".symdex";
            store = SymbolStore::open(storeOptions);
        }
        std::string error;
        auto db = loadCompileDatabase(dir.path().string(), &error);
        REQUIRE(db);
        if (!options.threads)
            options.threads = 2;
        return Indexer(*store, options).run(*db);
    }

    /// The good TUs and their header are all in the store.
    void requireGoodTusCommitted() {
        CHECK(store->resolveName("alpha").size() == 1);
        CHECK(store->resolveName("beta").size() == 1);
        CHECK(store->resolveName("shared").size() == 1);
        CHECK(store->tu(dir / "a.cpp")->status == TuStatus::Ok);
        CHECK(store->tu(dir / "b.cpp")->status == TuStatus::Ok);
    }
};

/// F<depth>::v instantiates `depth` nested templates: deep enough, libclang's parse thread runs
/// out of stack (clang++ itself survives it by moving to a new stack; libclang does not).
std::string deepTemplates(int depth) {
    return "#include \"h.h\"\n"
           "template <int N> struct F { static constexpr int v = F<N - 1>::v + 1; };\n"
           "template <> struct F<0> { static constexpr int v = 0; };\n"
           "int deep = F<" +
           std::to_string(depth) + ">::v;\n";
}

} // namespace

TEST_CASE("a TU that overflows libclang's stack fails alone and is not parsed again",
          "[isolation]") {
    Tree tree;
    tree.add("deep.cpp", deepTemplates(15000));
    const std::vector<std::string> flags{"-ftemplate-depth=16000"};
    IndexSummary first = tree.index({}, flags);
    CHECK(first.isolated);
    CHECK(first.tusParsed == 3);
    CHECK(first.tusCrashed == 1);
    tree.requireGoodTusCommitted();
    auto deep = tree.store->tu(tree.dir / "deep.cpp");
    REQUIRE(deep);
    CHECK(deep->status == TuStatus::Crashed);
    INFO(deep->firstError);
    CHECK(deep->firstError.find("the parse worker") == 0);
    CHECK(deep->firstError.find("again when retried") != std::string::npos);
    REQUIRE(first.failures.size() == 1);
    CHECK(first.failures[0].firstError == deep->firstError);

    // No crash loop: nothing it read changed, so it is not parsed again.
    IndexSummary second = tree.index({}, flags);
    CHECK(second.tusParsed == 0);
    CHECK(second.tusUpToDate == 3);

    // The record lists what it read before it crashed (the worker's report survives it): a
    // changed header makes it parse again, with every other TU that reads it.
    CHECK(deep->fileIds.size() == 2);
    test::writeFile(tree.dir / "h.h", "#pragma once\nint shared(int);\nint moreShared();\n");
    IndexSummary afterHeader = tree.index({}, flags);
    CHECK(afterHeader.tusParsed == 3);
    CHECK(afterHeader.tusCrashed == 1);

    // Once it changes, it parses.
    test::writeFile(tree.dir / "deep.cpp", deepTemplates(50));
    IndexSummary third = tree.index({}, flags);
    CHECK(third.tusParsed == 1);
    CHECK(tree.store->tu(tree.dir / "deep.cpp")->status == TuStatus::Ok);
    CHECK(tree.store->resolveName("deep").size() == 1);
}

TEST_CASE("a TU on which libclang hits a fatal error fails alone, with the reason", "[isolation]") {
    // libclang turns llvm::report_fatal_error into a failed parse; the worker's stderr says why.
    Tree tree;
    tree.add("fatal.cpp", "#include \"h.h\"\n#pragma clang __debug llvm_fatal_error\n");
    IndexSummary summary = tree.index();
    // Failed as libclang reports it; a sanitizer build's worker may die of it instead: crashed.
    CHECK(summary.tusFailed + summary.tusCrashed == 1);
    tree.requireGoodTusCommitted();
    const std::string reason = tree.store->tu(tree.dir / "fatal.cpp")->firstError;
    INFO(reason);
    CHECK(reason.find("LIBCLANG FATAL ERROR: #pragma clang __debug llvm_fatal_error") !=
          std::string::npos);
}

TEST_CASE("a dead worker's reason is its fatal error, not a sanitizer's report after it",
          "[isolation]") {
    // What CI's ASan build once printed: libclang's crash recovery leaves abort() and ASan
    // reports a SEGV on the way out. The user is told the cause.
    CHECK(workerErrorLine("indexing a.cpp\n"
                          "LIBCLANG FATAL ERROR: #pragma clang __debug llvm_fatal_error\n"
                          "AddressSanitizer:DEADLYSIGNAL\n"
                          "==7214==ERROR: AddressSanitizer: SEGV on unknown address 0x0\n"
                          "    #0 0x7f in abort\n") ==
          "LIBCLANG FATAL ERROR: #pragma clang __debug llvm_fatal_error");
    CHECK(workerErrorLine("LLVM ERROR: out of memory\nterminate called recursively\n") ==
          "LLVM ERROR: out of memory");
    // Without a fatal error, the last line naming one.
    CHECK(workerErrorLine("warning: x\n==1==ERROR: AddressSanitizer: stack-overflow on address "
                          "0x1\nSUMMARY: AddressSanitizer: stack-overflow\n") ==
          "==1==ERROR: AddressSanitizer: stack-overflow on address 0x1");
    CHECK(workerErrorLine("terminate called after throwing an instance of 'std::bad_alloc'") ==
          "terminate called after throwing an instance of 'std::bad_alloc'");
    CHECK(workerErrorLine("nothing went wrong here\n").empty());
    CHECK(workerErrorLine("").empty());
    CHECK(workerErrorLine("LLVM ERROR: " + std::string(1000, 'x')).size() == 300);
}

TEST_CASE("a command with --save-temps indexes, and a failed TU says why", "[isolation]") {
    Tree tree;
    tree.add("temps.cpp", "#include \"h.h\"\nint withTemps();\n");
    IndexSummary summary = tree.index({}, {"--save-temps"});
    CHECK(summary.tusFailed == 0);
    CHECK(tree.store->resolveName("withTemps").size() == 1);

    // A command libclang's driver cannot turn into one compile job fails with a reason.
    tree.sources = {"a.cpp"};
    IndexSummary failed = tree.index({}, {"-xno-such-language"});
    CHECK(failed.tusFailed == 1);
    const std::string reason = tree.store->tu(tree.dir / "a.cpp")->firstError;
    INFO(reason);
    CHECK_FALSE(reason.empty());
}

TEST_CASE("a parse that runs past --tu-timeout is stopped and the run goes on", "[isolation]") {
    Tree tree;
    // A constant evaluation of 2^31 steps: minutes of work for clang.
    tree.add("slow.cpp", "constexpr long spin() { long x = 0; for (long i = 0; i < (1L << 40); "
                         "++i) x += i % 7; return x; }\nconstexpr long slow = spin();\n");
    IndexOptions options;
    options.tuTimeout = std::chrono::milliseconds(1500);
    const auto start = std::chrono::steady_clock::now();
    IndexSummary summary = tree.index(options, {"-fconstexpr-steps=2147483647"});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 30);
    CHECK(summary.tusCrashed == 1);
    tree.requireGoodTusCommitted();
    const std::string reason = tree.store->tu(tree.dir / "slow.cpp")->firstError;
    INFO(reason);
    CHECK(reason.find("timed out after 1.5 s (--tu-timeout); the worker was killed by signal 9") ==
          0);
}

TEST_CASE("cancelling a run stops a parse in progress", "[isolation]") {
    Tree tree;
    tree.sources = {"slow.cpp"};
    test::writeFile(tree.dir / "slow.cpp",
                    "constexpr long spin() { long x = 0; for (long i = 0; i < (1L << 40); ++i) x "
                    "+= i % 7; return x; }\nconstexpr long slow = spin();\n");
    std::atomic<bool> cancel{false};
    IndexOptions options;
    options.cancel = &cancel;
    options.tuTimeout = std::chrono::milliseconds(0);
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        cancel = true;
    });
    const auto start = std::chrono::steady_clock::now();
    IndexSummary summary = tree.index(options, {"-fconstexpr-steps=2147483647"});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stopper.join();
    CHECK(seconds < 5);
    CHECK(summary.cancelled);
    CHECK(summary.tusParsed == 0);
    CHECK_FALSE(tree.store->tu(tree.dir / "slow.cpp")); // not recorded: out of date next time
}

TEST_CASE("an include of a FIFO or a device is refused, not read", "[isolation]") {
    Tree tree;
    REQUIRE(mkfifo((tree.dir / "fifo.h").c_str(), 0600) == 0);
    tree.add("fifo.cpp", "#include \"fifo.h\"\n#include \"h.h\"\nint afterFifo();\n");
    tree.add("zero.cpp", "#include \"/dev/zero\"\n#include \"h.h\"\nint afterZero();\n");
    IndexOptions options;
    options.tuTimeout = std::chrono::seconds(60); // a backstop only: the guard must answer first
    const auto start = std::chrono::steady_clock::now();
    IndexSummary summary = tree.index(options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 30);
    CHECK(summary.tusCrashed == 0);
    tree.requireGoodTusCommitted();
    for (const char* name : {"fifo.cpp", "zero.cpp"}) {
        auto tu = tree.store->tu(tree.dir / name);
        REQUIRE(tu);
        INFO(name << ": " << tu->firstError);
        CHECK(tu->status == TuStatus::Errors);
        CHECK(tu->firstError.find(std::string(name) + ":1:10: fatal error: cannot open file") !=
              std::string::npos);
        CHECK(tu->firstError.find("Operation not supported") != std::string::npos);
    }
    // What follows the bad include is still indexed.
    CHECK(tree.store->resolveName("afterFifo").size() == 1);
    CHECK(tree.store->resolveName("afterZero").size() == 1);
}

TEST_CASE("in-process and worker parses store the same symbols and dependencies", "[isolation]") {
    TempDir dir;
    test::copyFixture("golden", dir.path());
    test::writeCompileDb(dir.path(),
                         {"src/circle.cpp", "src/util.cpp", "src/main.cpp", "src/broken.cpp"},
                         {"-std=c++17", "-Iinclude"});
    std::string error;
    auto db = loadCompileDatabase(dir.path().string(), &error);
    REQUIRE(db);
    std::string dumps[2];
    for (int mode = 0; mode < 2; ++mode) {
        StoreOptions storeOptions;
        storeOptions.directory = dir.path() / ("store" + std::to_string(mode));
        auto store = SymbolStore::open(storeOptions);
        IndexOptions options;
        options.threads = 2;
        options.isolation = mode == 0 ? Isolation::InProcess : Isolation::Process;
        IndexSummary summary = Indexer(*store, options).run(*db);
        CHECK(summary.isolated == (mode == 1));
        CHECK(summary.tusParsed == 4);
        std::vector<std::string> lines;
        store->forEachFile([&](uint32_t, const FileRecord& f) {
            const std::vector<Symbol> symbols = store->fileSymbols(f.path).value();
            for (const Symbol& s : symbols)
                lines.push_back(f.path + " " + s.qualifiedName + " " +
                                std::to_string(s.location.line));
            lines.push_back(f.path + " refs " +
                            std::to_string(store->fileReferences(f.path)->size()));
        });
        // What each TU depends on: the files it read and the paths it looked for in vain (the
        // in-process parse records them through a thread-local recording, the worker through its
        // memory file).
        std::map<uint32_t, std::string> absent;
        store->forEachAbsentPath(
            [&](uint32_t id, const std::string& path) { absent.emplace(id, path); });
        size_t absentPaths = 0;
        store->forEachTu([&](const std::string& path, const TuRecord& tu) {
            lines.push_back(path + " reads " + std::to_string(tu.fileIds.size()) + " files");
            for (uint32_t id : tu.absentIds)
                lines.push_back(path + " looked for " + absent.at(id));
            absentPaths += tu.absentIds.size();
        });
        CHECK(absentPaths > 0);
        std::sort(lines.begin(), lines.end());
        for (const std::string& line : lines)
            dumps[mode] += line + "\n";
    }
    CHECK(dumps[0] == dumps[1]);
}

TEST_CASE("the worker wire format round-trips and rejects damage", "[isolation]") {
    IndexedTu tu;
    tu.mainFile = "/src/a.cpp";
    tu.record.status = TuStatus::Errors;
    tu.record.errorCount = 1;
    tu.record.firstError = "a.cpp:1:1: error: x";
    tu.includedFiles = {"/src/a.cpp", "/src/a.h"};
    tu.includedHashes = {1, 0xfedcba9876543210ULL};
    IndexedFile& file = tu.files.emplace_back();
    file.file.path = "/src/a.h";
    file.file.contentHash = 0xfedcba9876543210ULL;
    file.priority = 3;
    Symbol& symbol = file.symbols.emplace_back();
    symbol.usr = "c:@F@f#";
    symbol.name = "f";
    symbol.qualifiedName = "f";
    symbol.kind = SymbolKind::Function;
    file.references.push_back(Reference{42, {3, 4}, kRoleCall});

    const std::string bytes = encodeIndexedTu(tu);
    std::optional<IndexedTu> back = decodeIndexedTu(bytes);
    REQUIRE(back);
    CHECK(back->mainFile == tu.mainFile);
    CHECK(back->record == tu.record);
    CHECK(back->includedFiles == tu.includedFiles);
    CHECK(back->includedHashes == tu.includedHashes);
    REQUIRE(back->files.size() == 1);
    CHECK(back->files[0].file == file.file);
    CHECK(back->files[0].priority == 3);
    CHECK(back->files[0].symbols == file.symbols);
    CHECK(back->files[0].references == file.references);
    for (size_t cut = 0; cut < bytes.size(); ++cut)
        CHECK_FALSE(decodeIndexedTu(bytes.substr(0, cut)));
    CHECK_FALSE(decodeIndexedTu(bytes + "x"));

    ParseRequest request;
    request.command.file = "/src/a.cpp";
    request.command.directory = "/src";
    request.command.arguments = {"clang++", "-DX=\"a b\""};
    request.rank = 7;
    request.skipParsedBodies = false;
    auto decoded = decodeParseRequest(encodeParseRequest(request));
    REQUIRE(decoded);
    CHECK(decoded->command.arguments == request.command.arguments);
    CHECK(decoded->rank == 7);
    CHECK(decoded->indexMacros);
    CHECK_FALSE(decoded->skipParsedBodies);
}
