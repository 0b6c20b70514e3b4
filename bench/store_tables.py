#!/usr/bin/env python3
"""Where a store's bytes are: each table's entries and pages, and a closer look at the tables
whose per-entry overhead matters (postings by token kind, refUsrs' rows against their pages).

    bench/store_tables.py STORE_DIR

Reads the store with lmdb-utils' mdb_stat and mdb_dump (read-only; a daemon may be serving it).
An LMDB node costs 8 bytes of header and 2 of page index besides its key and value; a pair token
kept in a group row (format 25) pays its share of one.
"""
import subprocess
import sys
from collections import Counter

PAGE = 4096
NODE = 10  # LMDB node header (8) and the page's index slot (2)


def mib(n):
    return f"{n / 1048576:.1f} MiB"


def tables(store):
    out = subprocess.run(["mdb_stat", "-a", store], capture_output=True, text=True, check=True)
    rows, name, fields = [], None, {}
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("Status of "):
            if name:
                rows.append((name, fields))
            name, fields = line[len("Status of "):], {}
        elif ":" in line and name:
            key, _, value = line.partition(":")
            fields[key.strip()] = int(value) if value.strip().isdigit() else value.strip()
    if name:
        rows.append((name, fields))
    return rows


def varint(b, i):
    value = shift = 0
    while True:
        byte = b[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def dump(store, table):
    out = subprocess.run(["mdb_dump", "-s", table, store], capture_output=True, text=True,
                         check=True)
    lines = out.stdout.split("\n")
    i = lines.index("HEADER=END") + 1
    while i + 1 < len(lines) and lines[i].startswith(" "):
        yield bytes.fromhex(lines[i].strip()), bytes.fromhex(lines[i + 1].strip())
        i += 2


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    store = sys.argv[1]
    total = 0
    print(f"{'table':<12} {'entries':>9} {'pages':>8} {'size':>10}")
    for name, f in tables(store):
        pages = f.get("Branch pages", 0) + f.get("Leaf pages", 0) + f.get("Overflow pages", 0)
        total += pages
        if not name.startswith("Main"):
            print(f"{name:<12} {f.get('Entries', 0):>9} {pages:>8} {mib(pages * PAGE):>10}")
    print(f"{'all tables':<12} {'':>9} {total:>8} {mib(total * PAGE):>10}")

    # Format 25: a key that ends at its 0 byte is a group row of tokens (format 25: pair tokens;
    # 26: any), each with its one chunk; any other key is a chunk's (the token, 0, then six bytes
    # of its first posting).
    kinds, keys, values, tokens = Counter(), Counter(), Counter(), {}
    groups = grouped = group_bytes = 0
    for k, v in dump(store, "postings"):
        end = k.index(0)
        if end == len(k) - 1:
            groups += 1
            group_bytes += len(k) + len(v) + NODE
            i = 0
            while i < len(v):
                _, i = varint(v, i)
                n, i = varint(v, i)
                i += n
                n, i = varint(v, i)
                i += n
                grouped += 1
            continue
        kind = chr(k[0])
        kinds[kind] += 1
        keys[kind] += len(k)
        values[kind] += len(v)
        tokens.setdefault(kind, set()).add(k[1:end])
    print("\npostings by token kind (bytes with each chunk's node)")
    for kind in sorted(kinds):
        print(f"  {kind}: {len(tokens[kind]):>7} tokens {kinds[kind]:>7} chunks, key "
              f"{keys[kind] / kinds[kind]:.1f} B, value {values[kind] / kinds[kind]:.1f} B a chunk: "
              f"{mib(keys[kind] + values[kind] + NODE * kinds[kind])}")
    if groups:
        print(f"  grouped: {grouped:>7} tokens {groups:>7} rows, {group_bytes / groups:.0f} B a "
              f"row with its key and node: {mib(group_bytes)}")

    blocks = rows = stored = 0
    for _, v in dump(store, "names"):
        blocks += 1
        stored += len(v) + NODE
        rows += varint(v, 0)[0]
    print(f"\nnames: {rows} rows in {blocks} blocks, {mib(stored)} with their nodes "
          f"({stored / max(rows, 1):.1f} B a row)")

    # Format 28: per bucket of a row a varint head (the bucket's difference << 2 | its USRs less
    # one, 3 for four or more, then a varint of the count less four), then per USR 6 bytes and
    # its UsrRow (a count, then two varints an entry).
    rows = stored = usrs = buckets = 0
    for _, v in dump(store, "usrs"):
        rows += 1
        stored += len(v) + NODE
        at = 0
        while at < len(v):
            head, at = varint(v, at)
            count = (head & 3) + 1
            if count == 4:
                more, at = varint(v, at)
                count += more
            buckets += 1
            for _ in range(count):
                at += 6
                entries, at = varint(v, at)
                for _ in range(2 * entries):
                    at = varint(v, at)[1]
                usrs += 1
    print(f"usrs: {usrs} USRs of {buckets} buckets in {rows} rows, {mib(stored)} with their nodes "
          f"({stored / max(usrs, 1):.1f} B a USR)")

    # Format 26: u32 targets, their usrs buckets packed 16 bits each, 8 bytes a container.
    rows = stored = targets = containers = 0
    for _, v in dump(store, "refUsrs"):
        rows += 1
        stored += len(v)
        n = int.from_bytes(v[:4], "big")
        targets += n
        containers += (len(v) - 4 - (n * 16 + 7) // 8) // 8
    print(f"refUsrs: {rows} rows, {mib(stored)}: {targets} targets (16-bit buckets), "
          f"{containers} containers (8-byte hashes)")


if __name__ == "__main__":
    main()
