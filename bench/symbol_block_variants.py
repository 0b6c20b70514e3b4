#!/usr/bin/env python3
"""What a store's blocks of declarations spend their bytes on: each block rewritten without one
field (or with the USR kept another way), a 64 KiB dictionary trained on the variant, and every
block compressed alone against it at zstd level 3, as the store does (docs/store-format.md,
SymbolBlock). Needs the zstd command (Debian's zstd).

    build/bench/symbol_block_samples STORE OUT [--every N]
    bench/symbol_block_variants.py OUT WORK_DIR

OUT holds the decompressed blocks symbol_block_samples wrote; WORK_DIR gets the variants.
Variants: all fields; without the USR, the qualified name, the signature, the name; without
locals (flag 8); the USR with what it repeats written as one-byte references ("usr refs": the
longest of the block's four USRs before it that it contains, and each component of the
qualified name it spells after an '@'; an estimate of a format that would store it so, not a
decoder's exact form). From a format-26 store the samples hold the USRs coded so already
(docs/store-format.md), and "usr refs" measures what is left.
"""
import os
import shutil
import subprocess
import sys

from store_tables import varint  # beside this script


def put_varint(v):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def declarations(block):
    """(head, [name, qualifiedName, usr, signature, comment]) of each declaration of a block."""
    i = 0
    while i < len(block):
        n, i = varint(block, i)
        record = block[i:i + n]
        i += n
        j = 2  # kind, flags
        for _ in range(6):  # line, column, extent
            _, j = varint(record, j)
        head, strings = record[:j], []
        for _ in range(5):
            m, j = varint(record, j)
            strings.append(record[j:j + m])
            j += m
        yield head, strings


def usr_refs(usr, qualified, before):
    out, best = usr, None
    for k, earlier in enumerate(reversed(before[-4:])):
        body = earlier[2:]
        if len(body) > 8 and body in out and (best is None or len(body) > len(best[1])):
            best = (k, body)
    if best:
        out = out.replace(best[1], chr(0x10 + best[0]), 1)
    components = [c for c in qualified.split("::") if c]
    for index, component in sorted(enumerate(components), key=lambda x: -len(x[1])):
        if len(component) >= 3 and "@" + component in out:
            out = out.replace("@" + component, "@" + chr(1 + (len(components) - 1 - index) % 8), 1)
    return out


def variant(name, s, before):
    if name == "all fields":
        return s
    if name == "without the USR":
        return [s[0], s[1], b"", s[3], s[4]]
    if name == "without the qualified name":
        return [s[0], b"", s[2], s[3], s[4]]
    if name == "without the signature":
        return [s[0], s[1], s[2], b"", s[4]]
    if name == "without the name":
        return [b"", s[1], s[2], s[3], s[4]]
    if name == "usr refs":
        return [s[0], s[1], usr_refs(s[2].decode(), s[1].decode(), before).encode(), s[3], s[4]]
    raise ValueError(name)


VARIANTS = ["all fields", "without the USR", "without the qualified name",
            "without the signature", "without the name", "without locals", "usr refs"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    samples, work = sys.argv[1], sys.argv[2]
    files = sorted(os.listdir(samples))
    print(f"{len(files)} blocks from {samples}")
    base = None
    for index, name in enumerate(VARIANTS):
        plain = os.path.join(work, f"v{index}")
        packed = plain + ".zst"
        for d in (plain, packed):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        for f in files:
            out, before = bytearray(), []
            for head, s in declarations(open(os.path.join(samples, f), "rb").read()):
                if name == "without locals" and head[1] & 8:
                    continue
                fields = s if name == "without locals" else variant(name, s, before)
                before.append(s[2].decode())
                record = head + b"".join(put_varint(len(x)) + x for x in fields)
                out += put_varint(len(record)) + record
            open(os.path.join(plain, f), "wb").write(out)
        dictionary = plain + ".dict"
        subprocess.run(["zstd", "-q", "-f", "--train", "-r", plain, "-o", dictionary,
                        "--maxdict=65536"], check=True, capture_output=True)
        subprocess.run(["zstd", "-q", "-f", "-3", "-D", dictionary, "-r", plain,
                        "--output-dir-flat", packed], check=True, capture_output=True)
        raw = sum(os.path.getsize(os.path.join(plain, f)) for f in os.listdir(plain))
        size = sum(os.path.getsize(os.path.join(packed, f)) for f in os.listdir(packed))
        base = base or size
        print(f"  {name:<28} {raw:>11,} bytes -> {size:>10,} compressed ({size / base:.2f})")


if __name__ == "__main__":
    main()
