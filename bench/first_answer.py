#!/usr/bin/env python3
"""The first answer on a fresh start, as a new user meets it: start a language server on a tree
(symdex lsp on an empty store, or clangd), open one file, ask for a definition at once, and print
the answer and how long it took from the server's start and from the request.

  bench/first_answer.py --root SRC -p BUILD --file db/db_test.cc --line 242 --column 5 \
      -- symdex lsp --root SRC -p BUILD --store /tmp/fresh-store
  bench/first_answer.py ... -- clangd-19 --compile-commands-dir=BUILD

Lines and columns are 1-based, as an editor shows them."""
import argparse, json, os, subprocess, sys, time


def send(proc, message):
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the server closed its output")
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(proc.stdout.read(length))


def call(proc, id_, method, params):
    send(proc, {"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    while True:
        m = receive(proc)
        if m.get("id") == id_ and "method" not in m:
            return m
        if "method" in m and "id" in m:  # a request from the server: answer null
            send(proc, {"jsonrpc": "2.0", "id": m["id"], "result": None})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--line", type=int, required=True)
    ap.add_argument("--column", type=int, required=True)
    ap.add_argument("server", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    server = a.server[1:] if a.server[:1] == ["--"] else a.server
    root = os.path.abspath(a.root)
    path = os.path.join(root, a.file)
    uri = "file://" + path
    started = time.monotonic()
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    call(proc, 1, "initialize", {"processId": os.getpid(), "rootUri": "file://" + root,
                                 "capabilities": {}})
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "cpp", "version": 1,
                                            "text": text}}})
    asked = time.monotonic()
    answer = call(proc, 2, "textDocument/definition",
                  {"textDocument": {"uri": uri},
                   "position": {"line": a.line - 1, "character": a.column - 1}})
    done = time.monotonic()
    result = answer.get("result") or []
    if isinstance(result, dict):
        result = [result]
    where = ["%s:%d:%d" % (os.path.relpath(r.get("uri", r.get("targetUri", ""))[7:], root),
                           (r.get("range") or r.get("targetSelectionRange"))["start"]["line"] + 1,
                           (r.get("range") or r.get("targetSelectionRange"))["start"]["character"] + 1)
             for r in result]
    print("%s: %s  (%.2f s after start, %.2f s after the request)"
          % (os.path.basename(server[0]), ", ".join(where) or "[]", done - started, done - asked))
    try:
        call(proc, 3, "shutdown", None)
        send(proc, {"jsonrpc": "2.0", "method": "exit"})
        proc.wait(timeout=10)
    except Exception:
        proc.kill()
    return 0 if where else 1


if __name__ == "__main__":
    sys.exit(main())
