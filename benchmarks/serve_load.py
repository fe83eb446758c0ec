"""`thmforge serve` under load on loopback: a bounded Python client, one server process per run.

Starts `thmforge serve CORPUS --port 0` from each given checkout (so an older server, e.g. a
`git worktree` of main, runs on the same corpus), waits for it to print its address, then at each
concurrency keeps that many keep-alive connections busy with `POST /search` for `--seconds`.
The servers are loaded in turn at each mode and concurrency (back to back, so that a shared
machine's load drifts as little as possible between the runs compared). Prints requests/s,
p50/p99 latency, errors, the server's thread count (peak while loaded), resident memory before
and after, the machine's 1-minute load average, and each server's requests/s as a ratio to the first one.

    .venv/bin/python benchmarks/serve_load.py out/demo --checkout OLD=/path/to/main-worktree --checkout NEW=.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time

QUERIES = ["every bounded monotone sequence converges", "a closed subset of a compact space is compact",
           "the kernel of a group homomorphism is a normal subgroup", "finite group order divides",
           "continuous function on a compact set attains its maximum", "prime ideal of a commutative ring",
           "Cauchy sequence in a complete metric space", "fixed point of a contraction"]
START_TIMEOUT_S = 600


def proc_status(pid: int) -> dict:
    """Threads and VmRSS (KiB) of a process, from /proc."""
    fields = {}
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Threads", "VmRSS"):
            fields[key] = int(value.split()[0])
    return fields


def start_server(checkout: pathlib.Path, corpus: str, mode_args: list[str]) -> tuple[subprocess.Popen, int]:
    """`thmforge serve` of `checkout` on a free loopback port; (process, port) once it listens."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    code = "import sys; from runners.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", corpus, "--port", "0", *mode_args], cwd=checkout,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    for line in proc.stderr:                 # the server prints its address once it listens
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if match:
            threading.Thread(target=proc.stderr.read, daemon=True).start()    # keep the pipe drained
            return proc, int(match.group(1))
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit(f"{checkout}: the server did not start")


def load(port: int, pid: int, concurrency: int, seconds: float, mode: str) -> dict:
    """`concurrency` clients for `seconds`; latencies, errors and the server's peak thread count."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        n = index
        while time.monotonic() < stop:
            body = json.dumps({"query": QUERIES[n % len(QUERIES)], "n_results": 10, "mode": mode})
            n += 1
            began = time.perf_counter()
            try:
                conn.request("POST", "/search", body=body, headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                payload = response.read()
                ok = response.status == 200 and b'"results"' in payload
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            elapsed = time.perf_counter() - began
            with lock:
                if ok:
                    latencies.append(elapsed)
                else:
                    errors[0] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(concurrency)]
    began = time.monotonic()
    for t in threads:
        t.start()
    peak_threads = 0
    while any(t.is_alive() for t in threads):
        peak_threads = max(peak_threads, proc_status(pid)["Threads"])
        threads[0].join(timeout=0.5)
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")
    return {"rps": len(latencies) / wall, "p50": pick(0.50), "p99": pick(0.99), "errors": errors[0],
            "threads": peak_threads}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", help="output directory of build-corpus")
    parser.add_argument("--checkout", action="append", metavar="NAME=PATH", required=True,
                        help="a checkout whose `thmforge serve` to load (repeat; the first is the baseline)")
    parser.add_argument("--concurrency", default="1,8,64")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--mode", default="vector", help="vector, lexical, hybrid, or several: vector,lexical")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    modes = args.mode.split(",")
    if not set(modes) <= {"vector", "lexical", "hybrid"}:
        parser.error("--mode: vector, lexical or hybrid (comma-separated)")
    corpus = str(pathlib.Path(args.corpus).resolve())
    servers = []     # (name, process, port)
    try:
        for spec in args.checkout:
            name, _, path = spec.partition("=")
            proc, port = start_server(pathlib.Path(path).resolve(), corpus, [])
            servers.append((name, proc, port))
        before = {}
        for name, proc, port in servers:
            for mode in modes:
                load(port, proc.pid, 1, 2.0, mode)       # warm-up: first queries load lazy state
            before[name] = proc_status(proc.pid)
        for mode in modes:
            for concurrency in levels:
                baseline = None     # requests/s of the first checkout
                for name, proc, port in servers:
                    result = load(port, proc.pid, concurrency, args.seconds, mode)
                    after = proc_status(proc.pid)
                    baseline = baseline or result["rps"] or float("nan")
                    print(f"{mode:>7} {name:>6} c={concurrency:<3} {result['rps']:8.1f} req/s  p50 {result['p50']:8.1f} ms"
                          f"  p99 {result['p99']:8.1f} ms  errors {result['errors']:<5} threads {result['threads']:<5} "
                          f"RSS {before[name]['VmRSS'] / 1024:.0f} -> {after['VmRSS'] / 1024:.0f} MiB  "
                          f"load {os.getloadavg()[0]:5.1f}  x{result['rps'] / baseline:.2f} of {servers[0][0]}",
                          flush=True)
    finally:
        for _, proc, _ in servers:
            proc.terminate()
            proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
