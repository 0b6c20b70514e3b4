#!/bin/bash
# Trains store/symbol_dictionary.zdict, the zstd dictionary every store compresses its blocks of
# declarations with (docs/store-format.md, SymbolBlock), on real code only: LevelDB's and fmtlib's
# declarations (bench/corpus.sh), never the generated trees the benchmarks measure it on.
#
#   scripts/train-symbol-dictionary.sh BUILD_DIR   # writes store/symbol_dictionary.zdict
#
# A dictionary changes how blocks are written: a new one needs a store format version of its own.
set -euo pipefail
build=$(realpath "${1:?usage: train-symbol-dictionary.sh BUILD_DIR}")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for corpus in leveldb fmt; do
    database=$("$repo/bench/corpus.sh" "$corpus" | tail -n1)
    "$build/cli/symdex" index -q -p "$database" --store "$work/store-$corpus" --threads 2
    "$build/bench/symbol_block_samples" "$work/store-$corpus" "$work/samples/$corpus"
done
# 32 KiB: most of the gain of 110 KiB (zstd's default) on blocks of 16 declarations, a third of
# the memory in each thread's decompression context.
zstd --train -r "$work/samples" --maxdict=32768 -o "$repo/store/symbol_dictionary.zdict"
