"""Search at scale: a synthetic corpus in the real layout, indexed and queried with the real commands.

  .venv/bin/python benchmarks/search_scale.py --rows 100000 [--queries 100] [--format json] [--keep DIR]

Writes `--rows` statements as theorems Parquet files (50,000 rows a file, Hive-partitioned by
source and year) with embedding-like vectors (`benchmarks/synthetic_vectors.py`: the packaged
model's embeddings of real LaTeX paragraphs, mixed and perturbed) and realistic metadata (kinds,
years, categories, authors), plus papers and manifest.json. Then, as a user would run them:
`thmforge index DIR` (build time, vectors/s, peak RSS, index size), a cold `thmforge search` in
vector and lexical mode, and `thmforge serve` answering `--queries` held-out paragraphs over HTTP
(p50/p95/p99, peak RSS), with and without a filter (kind lemma, years 2015-2020: about 4% of
rows). Recall@10 is against the exact top 10: one pass over the stored vectors for all queries
(`VectorIndex.exact_many`), its first VERIFY_QUERIES queries checked against `Searcher(exact=True)`,
which scans every stored vector per query (at 10M rows, 15 GB a query).
JSON keys: rows, build_s, build_vectors_per_s, index_bytes, rss_build_mb, rss_serve_mb,
cli_cold_s, p50_ms, p95_ms, p99_ms, recall_at_10, recall_at_10_filtered; and, because wall time on a
shared machine measures the load, CPU seconds: build_cpu_s, build_vectors_per_cpu_s, encode_s and
encode_vectors_per_cpu_s (the Beam job that trains and encodes, without the merge and the search
table), cli_cold_cpu_s, lexical_cold_s, lexical_cold_cpu_s, rss_search_mb (cold vector CLI), and the
server's CPU ms per request (serve_cpu_ms); merge_s (the shards merged into one index), exact_s (the
exact reference pass, wall). The p50/p95/p99 keys time the held-out paragraphs as
queries (median 100 tokens: the query embedding alone is about 55 ms of CPU); short_* time their
first SHORT_WORDS words, one client at a time and from CONCURRENT clients at once (short_c4_*).
For a quick check use a small size (`--rows 20000 --queries 20`).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from benchmarks.synthetic_vectors import perturbed, real_embeddings, real_paragraphs, too_few_paragraphs  # noqa: E402
from schemas import PAPERS, theorems_table  # noqa: E402

FILE_ROWS = 50_000
ROWS_PER_PAPER = 20
BASE_TEXTS = 2500
KIND_WEIGHTS = {"theorem": 0.3, "lemma": 0.25, "proposition": 0.15, "definition": 0.15, "corollary": 0.1,
                "remark": 0.05}
CATEGORIES = ["math.AG", "math.NT", "math.CO", "math.PR", "math.AP", "math.DG", "math.GT", "math.FA",
              "math.RT", "math.LO", "cs.DS", "hep-th"]
FILTER = {"kinds": ["lemma"], "year_from": 2015, "year_to": 2020}
VERIFY_QUERIES = 3          # queries whose exact top 10 is checked against Searcher(exact=True), per filter
SHORT_WORDS = 10    # a typed query: the first words of a held-out paragraph (about 35 tokens with its LaTeX)
CONCURRENT = 4      # clients at once for the concurrent measurement
THMFORGE = [sys.executable, "-m", "runners.cli"]


def write_corpus(root: pathlib.Path, rows: int, base: np.ndarray, seed: int = 20260, file_rows: int = FILE_ROWS,
                 years: tuple[int, int] = (1992, 2026)) -> None:
    rng = np.random.default_rng(seed)
    table = theorems_table(base.shape[1])
    kinds = np.array(list(KIND_WEIGHTS))
    weights = np.array(list(KIND_WEIGHTS.values()))
    papers = (rows + ROWS_PER_PAPER - 1) // ROWS_PER_PAPER
    paper_years = rng.integers(*years, papers)
    for part, block in enumerate(perturbed(base, rows, rng, chunk=file_rows)):
        start = part * file_rows
        n = len(block)
        ids = np.arange(start, start + n)
        paper = ids // ROWS_PER_PAPER
        columns = {
            "theorem_id": pa.array([f"arxiv:s{p}#{i}" for p, i in zip(paper, ids)]),
            "paper_id": pa.array([f"arxiv:s{p}" for p in paper]),
            "year": pa.array(paper_years[paper].astype(np.int32)),
            "ordinal": pa.array((ids % ROWS_PER_PAPER).astype(np.int32)),
            "kind": pa.array(kinds[rng.choice(len(kinds), n, p=weights / weights.sum())]),
            "statement_text": pa.array([f"Synthetic statement {i} of paper {p}." for p, i in zip(paper, ids)]),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1)), block.shape[1]),
        }
        columns["description"] = columns["statement_text"]
        columns["source"] = pa.array(["arxiv"] * n)
        data = pa.Table.from_arrays([columns.get(f.name, pa.nulls(n, f.type)) for f in table.schema],
                                    schema=table.schema)
        years = np.asarray(data.column("year"))
        for year in np.unique(years):
            folder = root / "theorems" / "source=arxiv" / f"year={year}"
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(data.filter(pa.array(years == year)).drop_columns(["source", "year"]),
                           folder / f"part-{part:05d}.parquet")
        # the papers whose first statement is in this part, a file a part: memory stays one part's
        first_paper, end_paper = -(-start // ROWS_PER_PAPER), -(-(start + n) // ROWS_PER_PAPER)
        paper_rows = [dict(paper_id=f"arxiv:s{p}", source="arxiv", source_id=f"s{p}", title=f"Synthetic paper {p}",
                           authors=[f"Author {p % 997}", f"Author {p % 389}"],
                           categories=[CATEGORIES[p % len(CATEGORIES)]],
                           primary_category=CATEGORIES[p % len(CATEGORIES)], year=int(paper_years[p]), status="ok")
                      for p in range(first_paper, end_paper)]
        (root / "papers").mkdir(parents=True, exist_ok=True)
        pq.write_table(PAPERS.to_arrow(paper_rows), root / "papers" / f"part-{part:05d}.parquet")
    (root / "manifest.json").write_text(json.dumps({"embedding": {
        "model": "sentence-transformers/all-MiniLM-L6-v2", "dim": int(base.shape[1]), "query_prompt": "",
        "document_prompt": "", "normalize": True}}))


# Run by a fresh interpreter that forks the command: a child forked from this (large) process
# would report this process's peak RSS as its own (Linux carries the forked memory's high-water
# mark across exec), which inflated rss_build_mb and rss_search_mb before.
_LAUNCH = ("import json, os, subprocess, sys; process = subprocess.Popen(sys.argv[1:]); "
           "_, status, usage = os.wait4(process.pid, 0); print(json.dumps([os.waitstatus_to_exitcode(status), "
           "usage.ru_utime + usage.ru_stime, usage.ru_maxrss]), file=sys.stderr)")


def run_measured(command: list[str], env: dict) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS MB, stderr) of one child process (and its children)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.run([sys.executable, "-c", _LAUNCH, *command], stdout=subprocess.DEVNULL, stderr=err,
                                 env=env, cwd=REPO)
        wall = time.perf_counter() - start
        err.seek(0)
        stderr = err.read().decode()
    lines = stderr.rstrip().splitlines()
    code, cpu, peak_kb = json.loads(lines[-1]) if process.returncode == 0 and lines else (process.returncode, 0, 0)
    if code:
        raise RuntimeError(f"{' '.join(command)} failed: {stderr[-2000:]}")
    return wall, cpu, peak_kb / 1024, "\n".join(lines[:-1])


def peak_rss_mb(pid: int) -> float:
    text = pathlib.Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", text).group(1)) / 1024


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (all its threads)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_queries(root: pathlib.Path, env: dict, queries: list[str]) -> dict:
    """`thmforge serve` answering the queries over HTTP: latencies (ms) and the server's CPU ms per
    request, one client at a time, for the held-out paragraphs (with and without the filter: their
    top-10 ids) and for short queries (their first SHORT_WORDS words), then the short queries from
    CONCURRENT clients at once; and the server's peak RSS MB."""
    process = subprocess.Popen(THMFORGE + ["serve", str(root), "--port", "0"], stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, env=env, cwd=REPO, text=True)
    started = queue.Queue()

    def drain():        # read stderr to the end, so that the server never blocks on a full pipe
        for line in process.stderr:
            found = re.search(r"(http://[\d.]+:\d+/search)", line)
            if found:
                started.put(found.group(1))
        started.put(None)

    threading.Thread(target=drain, daemon=True).start()
    try:
        url = started.get()
        if url is None:
            raise RuntimeError("serve did not start")

        def ask(query, extra=None):
            body = json.dumps({"query": query, "n_results": 10, **(extra or {})}).encode()
            request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
            start = time.perf_counter()
            with urllib.request.urlopen(request) as response:
                result = json.load(response)
            return (time.perf_counter() - start) * 1e3, [h["theorem_id"] for h in result["results"]]

        def measured(requests, clients=1):
            """(latencies, top-10 ids, server CPU ms per request) of `requests` (query, extra)."""
            cpu = cpu_seconds(process.pid)
            if clients == 1:
                answers = [ask(*r) for r in requests]
            else:
                with concurrent.futures.ThreadPoolExecutor(clients) as pool:
                    answers = list(pool.map(lambda r: ask(*r), requests))
            cpu_ms = (cpu_seconds(process.pid) - cpu) * 1e3 / len(requests)
            return [ms for ms, _ in answers], [ids for _, ids in answers], cpu_ms

        ask(queries[0])
        short = [" ".join(q.split()[:SHORT_WORDS]) for q in queries]
        plain = measured([(q, None) for q in queries])
        filtered = measured([(q, FILTER) for q in queries])
        alone = measured([(q, None) for q in short])
        together = measured([(q, None) for q in short], clients=CONCURRENT)
        return {"latencies": plain[0] + filtered[0], "plain": plain[1], "filtered": filtered[1],
                "cpu_ms": (plain[2] + filtered[2]) / 2, "short": alone[0], "short_cpu_ms": alone[2],
                "concurrent": together[0], "concurrent_cpu_ms": together[2], "rss": peak_rss_mb(process.pid)}
    finally:
        process.terminate()
        process.wait()


def exact_top10(root: pathlib.Path, queries: list[str], verify: int = VERIFY_QUERIES) -> tuple[list, list]:
    """The exact top-10 theorem ids of the queries, without and with FILTER, from one batched exact
    pass (`VectorIndex.exact_many`) over the allowed docs the searcher's own filter gives; its first
    `verify` queries are checked against `Searcher(exact=True)`, the full scan per query."""
    from retrieval.catalog import open_catalog
    from retrieval.filters import make_filters
    from retrieval.search import Searcher

    searcher = Searcher(open_catalog(str(root)), exact=True, lean_encoder=True)
    index = searcher._vector_index()
    vectors = np.asarray([searcher.embed_query(q) for q in queries], dtype=np.float32)
    top = []
    for filters in (make_filters(), make_filters(**FILTER)):
        ranked = index.exact_many(vectors, 10, searcher._allowed_docs(filters))
        for q, v, found in list(zip(queries, vectors, ranked))[:verify]:
            reference = searcher.vector_ranking(q, 10, filters, v.tolist())
            if [d for d, _ in found] != [d for d, _ in reference]:
                raise RuntimeError(f"batched exact search differs from Searcher(exact=True) on {q[:60]!r}: "
                                   f"{found} != {reference}")
        top.append([[h.theorem_id for h in searcher.hits(r)] for r in ranked])
    return top[0], top[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--keep", metavar="DIR", help="write the corpus here and keep it (default: a temp dir)")
    parser.add_argument("--cache", metavar="FILE", help="cache the real embeddings here (.npy)")
    args = parser.parse_args()
    from retrieval.vector_index import recall_at_k

    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    texts = real_paragraphs(BASE_TEXTS + args.queries)
    if len(texts) < BASE_TEXTS + args.queries:
        parser.error(too_few_paragraphs(len(texts), BASE_TEXTS + args.queries))
    queries = texts[BASE_TEXTS:][: args.queries]
    base = real_embeddings(BASE_TEXTS, pathlib.Path(args.cache) if args.cache else None)
    root = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp(prefix="search-scale-"))
    try:
        start = time.perf_counter()
        if not (root / "manifest.json").is_file():
            write_corpus(root, args.rows, base)
        written = time.perf_counter() - start
        shutil.rmtree(root / "index", ignore_errors=True)
        build_s, build_cpu_s, rss_build, log = run_measured(THMFORGE + ["index", str(root)], env)
        encode_s, encode_cpu_s = map(float, re.search(r"vectors ([\d.]+) s, ([\d.]+) s CPU", log).groups())
        merge_s = float(re.search(r"merge ([\d.]+) s", log).group(1))
        index_bytes = sum(p.stat().st_size for p in (root / "index").rglob("*") if p.is_file())
        cli_s, cli_cpu_s, rss_search, _ = run_measured(THMFORGE + ["search", str(root), queries[0], "--format", "json"], env)
        lexical_s, lexical_cpu_s, _, _ = run_measured(
            THMFORGE + ["search", str(root), "bounded sequence", "--mode", "lexical", "--format", "json"], env)
        served = serve_queries(root, env, queries)
        latencies, plain, filtered = served["latencies"], served["plain"], served["filtered"]
        exact_start = time.perf_counter()
        exact_plain, exact_filtered = exact_top10(root, queries)
        exact_s = time.perf_counter() - exact_start
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    result = {
        "rows": args.rows, "build_s": round(build_s, 2), "build_vectors_per_s": round(args.rows / build_s),
        "index_bytes": index_bytes, "rss_build_mb": round(rss_build), "rss_serve_mb": round(served["rss"]),
        "build_cpu_s": round(build_cpu_s, 2), "build_vectors_per_cpu_s": round(args.rows / build_cpu_s),
        "encode_s": encode_s, "merge_s": merge_s, "encode_vectors_per_cpu_s": round(args.rows / encode_cpu_s),
        "rss_search_mb": round(rss_search), "cli_cold_s": round(cli_s, 2), "cli_cold_cpu_s": round(cli_cpu_s, 2),
        "lexical_cold_s": round(lexical_s, 2), "lexical_cold_cpu_s": round(lexical_cpu_s, 2),
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1), "p99_ms": round(percentile(latencies, 0.99), 1),
        "serve_cpu_ms": round(served["cpu_ms"], 1),
        "short_p50_ms": round(percentile(served["short"], 0.5), 1),
        "short_p95_ms": round(percentile(served["short"], 0.95), 1), "short_cpu_ms": round(served["short_cpu_ms"], 1),
        f"short_c{CONCURRENT}_p50_ms": round(percentile(served["concurrent"], 0.5), 1),
        f"short_c{CONCURRENT}_p95_ms": round(percentile(served["concurrent"], 0.95), 1),
        f"short_c{CONCURRENT}_cpu_ms": round(served["concurrent_cpu_ms"], 1),
        "recall_at_10": round(recall_at_k(plain, exact_plain, 10), 4),
        "recall_at_10_filtered": round(recall_at_k(filtered, exact_filtered, 10), 4),
        "exact_s": round(exact_s, 1),
        "load_avg": [round(x, 1) for x in os.getloadavg()],     # at the end: the machine's load meanwhile
    }
    if args.format == "json":
        print(json.dumps(result))
        return
    print(f"{args.rows:,} rows written in {written:.0f}s; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for key, value in result.items():
        print(f"{key:>24}: {value}")
    short = [len(f) for f in filtered]
    print(f"{'filtered results':>24}: min {min(short)} of 10 per query")


if __name__ == "__main__":
    main()
