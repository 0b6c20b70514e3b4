// `symdex merge --store OUT SHARD...`: the stores of `symdex index --shard K/N` made into one
// (indexer/shards.h, docs/shards.md).
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "indexer/shards.h"
#include "store/symbol_store.h"

#include <cstdio>

namespace symdex::cli {

int runMerge(const QStringList& args) {
    QCommandLineParser parser;
    parser.addPositionalArgument("SHARD", "The store of each shard (all N of them).", "SHARD...");
    parser.addOption(QCommandLineOption({"q", "quiet"}, "Print nothing but errors."));
    addStoreOption(parser);
    if (!parseCommandLine(parser, args,
                          "Merge the stores of every shard of an index (symdex index --shard K/N) "
                          "into the store: the store one machine indexing the whole compilation "
                          "database would have written. Merging again after some shards ran "
                          "takes only what they changed."))
        return kExitOk;
    std::vector<std::filesystem::path> shards;
    for (const QString& dir : parser.positionalArguments())
        shards.emplace_back(std::filesystem::absolute(dir.toStdString()).lexically_normal());
    if (shards.empty())
        throw UsageError{"merge needs the shards' stores: symdex merge --store OUT SHARD..."};
    StoreOptions options;
    options.directory = storeDirectory(parser);
    // Canonical: a symlinked path to the same directory is the same store.
    std::error_code error;
    const std::filesystem::path out = std::filesystem::weakly_canonical(options.directory, error);
    for (const auto& shard : shards)
        if (std::filesystem::weakly_canonical(shard, error) == out)
            throw UsageError{"the output store '" + out.string() + "' is one of the shards"};
    auto store = SymbolStore::open(options);
    const bool fromEmpty = store->stats().files == 0;
    MergeSummary summary;
    try {
        summary = mergeShards(*store, shards);
    } catch (const MergeError& e) {
        throw UsageError{e.what()};
    }
    // A merge into an empty store rewrites its file without free pages, as a cold index does. A
    // later merge leaves the file in place (LMDB reuses its free pages): the store a team's
    // `symdexd --read-only` serves is merged into again and again, and a daemon whose data.mdb
    // is replaced stops rather than serve a file nobody writes.
    const CompactStats compacted = fromEmpty ? store->compact(0.0) : CompactStats{};
    if (!parser.isSet("quiet")) {
        const StoreStats st = store->stats();
        std::printf("merged %zu shards (%zu ran since the last merge): %zu TUs (%zu written, %zu "
                    "removed), %zu files copied, %zu removed, in %.2f s\n",
                    summary.shards, summary.shardsMerged, summary.tus, summary.tusWritten,
                    summary.tusRemoved, summary.filesWritten, summary.filesRemoved,
                    summary.seconds);
        std::printf("store: %s: %s files, %s TUs, %s symbols, %s references, %.1f MiB%s\n",
                    displayPath(store->directory().string()).c_str(),
                    withThousands(st.files).c_str(), withThousands(st.tus).c_str(),
                    withThousands(st.symbols).c_str(), withThousands(st.references).c_str(),
                    double(st.diskBytes) / (1 << 20), compacted.compacted ? " (compacted)" : "");
    }
    return kExitOk;
}

} // namespace symdex::cli
