#!/usr/bin/env python3
"""Latency of one LSP request asked again and again through `symdex lsp` (the editors' path),
one at a time, after a request no handler serves (the bridge and the daemon's own thread alone):

  bench/lsp_repeat.py --symdex build/cli/symdex --root SRC -p BUILD --store STORE \
      --file db/db_impl.cc --line 1528 --column 11 -n 3000

Prints p50/p90/p99 in ms per method. Lines and columns are 1-based. With --direct, the same
requests are then asked again on a connection of their own to the daemon's socket (the one
`symdex lsp` bridges to), to tell what the bridge adds."""
import argparse, json, os, socket, subprocess, sys, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdex", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("-p", dest="build", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--line", type=int, required=True)
    ap.add_argument("--column", type=int, required=True)
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--direct", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    proc = subprocess.Popen([a.symdex, "lsp", "--root", root, "-p", os.path.abspath(a.build),
                             "--store", os.path.abspath(a.store)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def session(label, write, readline, read):
        def send(m):
            body = json.dumps(m).encode()
            write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

        def receive():
            n = None
            while True:
                line = readline()
                if not line:
                    raise SystemExit(label + " closed its output")
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":")[1])
            return json.loads(read(n))

        def call(i, method, params):
            send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
            while True:
                m = receive()
                if m.get("id") == i and "method" not in m:
                    return m

        call(0, "initialize", {"capabilities": {}})
        at = {"textDocument": {"uri": "file://" + os.path.join(root, a.file)},
              "position": {"line": a.line - 1, "character": a.column - 1}}
        next_id = 1
        for method, params in [("symdex/none", {}), ("textDocument/definition", at),
                               ("textDocument/hover", at)]:
            times = []
            for _ in range(a.n):
                start = time.perf_counter()
                call(next_id, method, params)
                times.append((time.perf_counter() - start) * 1000)
                next_id += 1
            times.sort()
            print("%-8s %-26s n %d  p50 %.3f  p90 %.3f  p99 %.3f ms" % (
                label, method, a.n, times[len(times) // 2], times[int(len(times) * .9)],
                times[int(len(times) * .99)]))
        send({"jsonrpc": "2.0", "id": next_id, "method": "shutdown"})

    def write(data):
        proc.stdin.write(data)
        proc.stdin.flush()

    session("bridge", write, proc.stdout.readline, proc.stdout.read)
    if a.direct:
        # The daemon's lock file: its pid, then its socket's path.
        with open(os.path.join(os.path.abspath(a.store), "daemon.lock")) as f:
            path = f.read().split("\n")[1]
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)
        stream = sock.makefile("rb")
        session("direct", sock.sendall, stream.readline, stream.read)
        sock.close()
    proc.stdin.close()
    proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
