// symbol_block_samples: writes each block of a store's `symbols` table, decompressed, to a file
// of its own: the samples store/symbol_dictionary.zdict is trained on (scripts/
// train-symbol-dictionary.sh). A maintenance program: it changes no store.
//
//   symbol_block_samples STORE_DIR OUT_DIR [--every N]
#include "store/encoding.h"
#include "store/lmdb.h"
#include "store/zstd_frame.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

using namespace symdex;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: symbol_block_samples STORE_DIR OUT_DIR [--every N]\n");
        return 2;
    }
    size_t every = 1;
    if (argc == 5 && !std::strcmp(argv[3], "--every"))
        every = std::stoul(argv[4]);
    const std::filesystem::path out = argv[2];
    std::filesystem::create_directories(out);
    try {
        auto env = lmdb::Env::open(argv[1], size_t(1) << 40, 32, 8, MDB_RDONLY);
        lmdb::Txn txn = lmdb::Txn::begin(env, true);
        std::shared_ptr<const ZstdDictionary> own; // the store's (format 23), if it has one
        if (auto bytes = txn.get(txn.openDb("meta", 0), "symbolDictionary"))
            own = ZstdDictionary::fromBytes(std::string(*bytes));
        lmdb::Cursor cursor(txn, txn.openDb("symbols", 0));
        std::string_view k, v;
        size_t seen = 0, written = 0, bytes = 0;
        for (bool more = cursor.get(MDB_FIRST, k, v); more; more = cursor.get(MDB_NEXT, k, v)) {
            if (seen++ % every)
                continue;
            Reader header(v);
            header.varint(); // rows
            header.varint(); // first line
            std::string plain;
            // Format 17 and later compress against the built-in dictionary, format 23 against
            // the store's own once it has one, earlier formats against none.
            if (header.failed() ||
                (!decompress(header.rest(), plain, 64u << 20) &&
                 !decompress(header.rest(), plain, 64u << 20, &ZstdDictionary::builtInSymbols()) &&
                 !(own && decompress(header.rest(), plain, 64u << 20, own.get())))) {
                std::fprintf(stderr, "symbol_block_samples: a block that does not decode\n");
                return 1;
            }
            char name[32];
            std::snprintf(name, sizeof name, "%08zu", written++);
            std::ofstream(out / name, std::ios::binary) << plain;
            bytes += plain.size();
        }
        std::printf("%zu of %zu blocks, %zu bytes, in %s\n", written, seen, bytes, argv[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "symbol_block_samples: %s\n", e.what());
        return 1;
    }
    return 0;
}
