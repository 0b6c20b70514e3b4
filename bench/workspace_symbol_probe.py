#!/usr/bin/env python3
"""workspace/symbol latency per query through `symdex lsp`, the first ask apart from its repeats:

  bench/workspace_symbol_probe.py SYMDEX TREE STORE QUERIES [REPEAT] [--daemon SYMDEXD]

QUERIES holds one query a line (the last word of each line). With --daemon, SYMDEXD (symdexd,
or a wrapper such as `valgrind --tool=callgrind ... symdexd "$@"`) is started first on the store
and waited for $WAIT seconds (default 25), and its minor/major faults and CPU time are printed;
`symdex lsp` then hands its stdio to it. UTF8=1 offers the "utf-8" position encoding."""
import json, os, subprocess, sys, time, statistics
sym, tree, store, qf = sys.argv[1:5]
rep = int(sys.argv[5]) if len(sys.argv) > 5 and not sys.argv[5].startswith('--') else 5
wrapper = sys.argv[sys.argv.index('--daemon') + 1] if '--daemon' in sys.argv else None
common = ["--root", tree, "-p", tree, "--store", store, "--threads", "2"]
d = None
if wrapper:
    d = subprocess.Popen([wrapper] + common, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(float(os.environ.get('WAIT', '25')))
p = subprocess.Popen([sym, "lsp"] + common, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    b = json.dumps(m).encode(); p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def recv():
    n = None
    while True:
        l = p.stdout.readline()
        if l in (b"\r\n", b"\n"): break
        if l.lower().startswith(b"content-length:"): n = int(l.split(b":")[1])
    return json.loads(p.stdout.read(n))
rid = 0
def minflt():
    if not d: return 0
    f = open('/proc/%d/stat' % d.pid).read().rsplit(')',1)[1].split(); return int(f[7]) + 1000000 * int(f[9])
def call(method, params):
    global rid; rid += 1
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    while True:
        m = recv()
        if m.get("id") == rid: return m
call("initialize", {"processId": None, "rootUri": "file://" + tree, "capabilities": ({"general": {"positionEncodings": ["utf-8"]}} if os.environ.get("UTF8") else {})})
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
qs = [l.split() for l in open(qf) if l.strip()]
allmed = []; firsts = []
def cpu():
    if not d: return 0
    f = open('/proc/%d/stat' % d.pid).read().rsplit(')',1)[1].split(); return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
c0 = cpu()
for kind_q in qs:
    q = kind_q[-1]
    ts = []
    f0 = minflt()
    for _ in range(rep):
        t = time.perf_counter(); r = call("workspace/symbol", {"query": q}); ts.append((time.perf_counter() - t) * 1000)
        if len(ts) == 1: f1 = minflt()
    med = statistics.median(ts[1:]) if len(ts) > 1 else ts[0]; allmed.append(med); firsts.append(ts[0])
    print("%-14s first %7.3f  then %7.3f ms  %4d answers" % (q, ts[0], med, len(r.get("result") or [])), "faults", f1 - f0, minflt() - f1)
print("daemon cpu %.3f s, sum of first latencies %.3f s" % (cpu() - c0, sum(firsts) / 1000))
print("median first %.3f ms, median of later medians %.3f ms over %d" % (statistics.median(firsts), statistics.median(allmed), len(allmed)))
call("shutdown", None); send({"jsonrpc": "2.0", "method": "exit"})
p.wait()
if d:
    d.terminate(); d.wait()
