#!/usr/bin/env python3
"""textDocument/definition at the calls of a few TUs, through `symdex lsp` (the editors' path),
one request at a time, each TU opened first: prints each request's milliseconds, a line per TU,
and p50/p99/max over all. Run it twice to see a cold page cache against a warm one (the store is
mapped, not loaded: a request that reads pages not yet in memory waits for the disk).

  bench/definition_probe.py --symdex build/cli/symdex --root TREE -p BUILD --store STORE \
      [--files 10] [--per-file 11] [--settle SECONDS] [--symbols re,flushbuf,...]

Calls are identifiers followed by '(' on lines holding ';', in every Nth TU of the database."""
import argparse, json, os, re, subprocess, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdex", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("-p", dest="build", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--per-file", type=int, default=11)
    ap.add_argument("--settle", type=float, default=0,
                    help="seconds to wait after initialized, before anything else")
    ap.add_argument("--symbols", default="",
                    help="comma-separated workspace/symbol queries to send before the definitions")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    proc = subprocess.Popen([a.symdex, "lsp", "--root", root, "-p", os.path.abspath(a.build),
                             "--store", os.path.abspath(a.store)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(m):
        body = json.dumps(m).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def receive():
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            header += proc.stdout.read(1)
        n = int(re.search(rb"Content-Length: (\d+)", header).group(1))
        return json.loads(proc.stdout.read(n))

    ids = [0]

    def request(method, params):
        ids[0] += 1
        send({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": params})
        while True:
            m = receive()
            if "method" in m:
                if "id" in m:
                    send({"jsonrpc": "2.0", "id": m["id"], "result": None})
                continue
            if m.get("id") == ids[0]:
                return m

    def notify(method, params):
        send({"jsonrpc": "2.0", "method": method, "params": params})

    request("initialize", {"processId": None, "rootUri": "file://" + root, "capabilities": {}})
    notify("initialized", {})
    time.sleep(a.settle)
    for query in filter(None, a.symbols.split(",")):
        start = time.perf_counter()
        request("workspace/symbol", {"query": query})
        print("workspace/symbol %s %.2f ms" % (query, (time.perf_counter() - start) * 1000))
    with open(os.path.join(os.path.abspath(a.build), "compile_commands.json")) as f:
        entries = json.load(f)
    step = max(1, len(entries) // a.files)
    files = [os.path.join(e["directory"], e["file"]) for e in entries][::step][:a.files]
    call = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\(")
    all_ms = []
    for path in files:
        with open(path) as f:
            text = f.read()
        uri = "file://" + path
        notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "cpp",
                                                         "version": 1, "text": text}})
        sites = [(n, m.start()) for n, line in enumerate(text.split("\n")) if ";" in line
                 for m in call.finditer(line)][:a.per_file]
        ms = []
        for line, column in sites:
            start = time.perf_counter()
            request("textDocument/definition", {"textDocument": {"uri": uri},
                                                "position": {"line": line, "character": column}})
            ms.append((time.perf_counter() - start) * 1000)
        print(os.path.basename(path), " ".join("%.2f" % x for x in ms))
        all_ms += ms
        notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    request("shutdown", None)
    notify("exit", None)
    all_ms.sort()
    pick = lambda q: all_ms[min(len(all_ms) - 1, int(q * len(all_ms)))]
    print("%d requests: p50 %.2f ms, p99 %.2f ms, max %.2f ms"
          % (len(all_ms), pick(0.5), pick(0.99), all_ms[-1]))


if __name__ == "__main__":
    main()
