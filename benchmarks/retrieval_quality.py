"""Search quality per evaluation set x mode x representation x model, with build and query cost.

  .venv/bin/python benchmarks/retrieval_quality.py --corpus out/evalset-corpus \
      [--model sentence-transformers/all-MiniLM-L6-v2 ...] [--template plain context-v1] [--cache DIR] \
      [--max-queries 40 --max-statements 400] [--json-out cells.jsonl]
  .venv/bin/python benchmarks/retrieval_quality.py --summarize cells.jsonl      # table + choice on tuning sets
  .venv/bin/python benchmarks/retrieval_quality.py --cost-only 200 --model A B  # statements/s, ms/query

The corpus may be built without embeddings (`--embed-model none`): every (model, representation)
is embedded here from the stored rows, exactly as the embed stage would (`representation_text`),
so models and templates compare on the same statements. Sets: the written `queries.jsonl` and the
automatic sets of `build_evalsets.py` (their hide keys are applied: the hidden text is removed from
the indexed text of every statement of that set, and those statements are re-embedded). Hybrid is
reciprocal-rank fusion (`retrieval.search.fuse`) at several BM25 weights; the weight is chosen on
the tuning sets only and then reported on the held-out ones.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import shutil
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval import vector_index  # noqa: E402
from retrieval.catalog import open_catalog  # noqa: E402
from retrieval.evaluate import Query, first_rank, metrics, parse_queries, resolve_gold  # noqa: E402
from retrieval.filters import Filters  # noqa: E402
from retrieval.rerank import rerank_by_agreement  # noqa: E402
from retrieval.search import FUSION_DEPTH, Searcher, fuse  # noqa: E402
from transforms.embed.config import default_prompts  # noqa: E402
from transforms.embed.encoder import DEFAULT_MODEL, Encoder, EncoderConfig  # noqa: E402
from transforms.describe.records import PAPER_TITLE_KEY  # noqa: E402
from transforms.embed.representation import CONTEXT, TEMPLATES, representation_text  # noqa: E402

EVALSETS = REPO / "retrieval" / "evalsets"
WEIGHTS = (0.25, 0.5, 1.0)
RERANK_WEIGHTS = (0.5, 1.0)   # agreement reranking of hybrid's top RERANK_DEPTH
RERANK_DEPTH = 50
K = 20
CACHE_CHUNK = 256      # texts per cached embedding file


def load_sets(auto: pathlib.Path, written: bool = True) -> dict[str, tuple[list[Query], list[dict]]]:
    """name -> (queries, raw records); the written set first (its gold is in the shared books and papers)."""
    sets = {}
    paths = [("written", EVALSETS / "queries.jsonl")] if written else []
    for name, path in [*paths, *((p.stem, p) for p in sorted(auto.glob("*.jsonl")))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        sets[name] = (parse_queries(lines, str(path)), [json.loads(line) for line in lines if line.strip()])
    return sets


def corpus_rows(searcher: Searcher) -> list[dict]:
    cursor = searcher.con.execute("""
        SELECT c.doc, c.theorem_id, c.paper_id, c.title, c.display_name, c.number, c.statement_text,
               c.description, c.paper_title, any_value(t.section_path) AS section_path
        FROM search_corpus c JOIN theorems t USING (theorem_id)
        GROUP BY ALL ORDER BY c.doc""")
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, values)) for values in cursor.fetchall()]
    for row in rows:                       # the key the embed stage's context template reads the paper title from
        row[PAPER_TITLE_KEY] = row["paper_title"]
    assert [r["doc"] for r in rows] == list(range(len(rows))), "search_corpus docs are dense"
    return rows


def hidden(rows: list[dict], records: list[dict], docs_of: dict[str, int]) -> dict[int, dict]:
    """doc -> its row with the set's query text removed (titles of gold statements, section titles)."""
    changed: dict[int, dict] = {}
    sections = {r["hide_section"] for r in records if r.get("hide_section")}
    for record in records:
        if record.get("hide_title"):
            for tid in record["theorem_ids"]:
                original = rows[docs_of[tid]]
                title = " ".join((original["title"] or "").split())
                description = original["description"] or ""   # the text describer's is "Title: text"
                changed[original["doc"]] = dict(original, title=None, description=description.removeprefix(
                    f"{title}: ") if title else description)
    if sections:
        for row in rows:
            path = row["section_path"] or []
            if any(" ".join(s.split()) in sections for s in path):
                changed[row["doc"]] = dict(changed.get(row["doc"], row),
                                           section_path=[s for s in path if " ".join(s.split()) not in sections])
    return changed


def encode(encoder: Encoder, texts: list[str], cache: pathlib.Path, key: str) -> tuple[np.ndarray, int]:
    """(normalized document vectors, how many were embedded now rather than read from the cache);
    cached on disk by CACHE_CHUNK texts, so an interrupted run resumes."""
    parts, embedded = [], 0
    for start in range(0, len(texts), CACHE_CHUNK):
        chunk = texts[start:start + CACHE_CHUNK]
        path = cache / f"{hashlib.sha1((key + chr(0).join(chunk)).encode()).hexdigest()[:20]}.npy"
        if path.is_file():
            parts.append(np.load(path))
            continue
        matrix = encoder.encode_documents(chunk).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        np.save(path, matrix)
        parts.append(matrix)
        embedded += len(chunk)
    return (np.concatenate(parts) if parts else np.zeros((0, encoder.dim), dtype=np.float32)), embedded


def indexed_copy(corpus: str, work: pathlib.Path, model: str, vectors: dict[str, np.ndarray], dim: int):
    """(the vector index `thmforge index` builds over `vectors`, its doc -> theorem id): a copy of the
    corpus whose theorems carry `vectors` (theorem id -> unit vector) as their embeddings."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from apache_beam.options.pipeline_options import PipelineOptions
    from retrieval.index_job import build_index
    from schemas.theorems import embedding_type

    root = work / "indexed-corpus"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(corpus, root)
    for path in (root / "theorems").rglob("*.parquet"):
        table = pq.read_table(path)     # only the searched statements: every row has a vector (pyarrow 25
        table = table.filter(pa.array([t in vectors for t in table.column("theorem_id").to_pylist()]))  # misreads nulls)
        flat = np.asarray([vectors[t] for t in table.column("theorem_id").to_pylist()], dtype=np.float32)
        column = pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1)), dim)
        pq.write_table(table.set_column(table.schema.get_field_index("embedding"),
                                        pa.field("embedding", embedding_type(dim)), column), path)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["embedding"] = {"model": model, "dim": dim, "normalize": True}
    (root / "manifest.json").write_text(json.dumps(manifest))
    build_index(root, "description", PipelineOptions(["--runner=FnApiRunner"]))
    searcher = Searcher(open_catalog(str(root)))
    assert searcher.indexed, f"{root}: not indexed"
    return searcher._vector_index(), dict(searcher.con.execute("SELECT doc, theorem_id FROM search_corpus").fetchall())


def index_against_exact(index, theorem_of: dict, queries: list[Query], qv: np.ndarray, gold: list,
                        probe_only: bool) -> dict:
    """Gold ranks (top K) of search from the index and of the exact scan, query by query;
    `probe_only`: the index's probe even where it would scan exactly (the rule before 2026-12-04)."""
    index.exact_filter_rows = 0 if probe_only else vector_index.EXACT_FILTER_ROWS
    found, exact = ([[theorem_of[d] for d, _ in search(v, K)] for v in qv] for search in (index.search, index.exact))
    ranks = [(first_rank(e, ids), first_rank(f, ids)) for e, f, (ids, _) in zip(exact, found, gold)]
    return {"exact": metrics([e for e, _ in ranks]), "index": metrics([f for _, f in ranks]),
            f"recall@{K}": round(vector_index.recall_at_k(found, exact, K), 4),
            "changed": [(q.query, e, f) for q, (e, f) in zip(queries, ranks) if e != f]}


def context_of(row: dict) -> str:
    """What agreement reranking compares the query with: title, section path, paper title."""
    return " ".join(p for p in [row["title"], *(row["section_path"] or []), row["paper_title"]] if p)


def score(ranked_docs, gold_ids, gold_papers, rows) -> tuple:
    docs = ranked_docs[:K]
    return (first_rank([rows[d]["theorem_id"] for d in docs], gold_ids),
            first_rank([rows[d]["paper_id"] for d in docs], gold_papers))


def report_cost(args) -> None:
    """Statements/s and ms/query per model and template, every model timed in this one process."""
    rows = corpus_rows(Searcher(open_catalog(args.corpus)))
    sample = rows[:: max(1, len(rows) // args.cost_only)][: args.cost_only]
    queries = [q.query for q in load_sets(pathlib.Path(args.auto))["written"][0]]
    for model in args.model:
        query_prompt, document_prompt = default_prompts(model)
        encoder = Encoder(EncoderConfig(model=model, query_prompt=query_prompt, document_prompt=document_prompt))
        encoder.encode_queries(queries[:4])                       # warm-up
        start = time.perf_counter()
        encoder.encode_queries(queries)
        per_query = 1000 * (time.perf_counter() - start) / len(queries)
        for template in args.template:
            start = time.perf_counter()
            encoder.encode_documents([representation_text(r, template) for r in sample])
            rate = len(sample) / (time.perf_counter() - start)
            print(f"{model} {template}: {rate:.1f} statements/s, query embedding {per_query:.1f} ms "
                  f"({len(sample)} statements, {len(queries)} queries)", flush=True)


def cost(cell: dict) -> str:
    """Statements embedded per second and per CPU-second (when measured, not cached), and wall and CPU
    ms per query of the mode's first stage (query embedding and ranking; BM25; both for hybrid)."""
    mode = cell["mode"]

    def ms(kind: str) -> str:
        vector, lexical = cell.get(f"vector{kind}_ms_per_query"), cell.get(f"lexical{kind}_ms_per_query")
        value = lexical if mode == "lexical" else vector if mode.startswith("vector") else (
            vector + lexical if vector is not None and lexical is not None else None)
        return f"{value:.1f}" if value is not None else "-"

    rate, cpu_rate = cell.get("build_statements_per_s"), cell.get("build_statements_per_cpu_s")
    build = f"{rate} / {cpu_rate if cpu_rate else '-'}" if rate and mode != "lexical" else "-"
    return f"{build} | {ms('')} / {ms('_cpu')}"


def summarize(paths: list[str]) -> None:
    """Markdown table per set with cost; the configuration with the best mean MRR@20 over the tuning
    sets, and its margin over today's default (vector, context-v1, the default model) on every set."""
    lines = [json.loads(line) for path in paths for line in open(path, encoding="utf-8") if line.strip()]
    cells = [c for c in lines if "mode" in c]
    if comparisons := [c for c in lines if "index_against_exact" in c]:
        print("Vector search from the index against the exact scan (`--index`; probe: the index's IVF probe "
              "whatever the corpus size, rule: exact scan up to EXACT_FILTER_ROWS rows):\n")
        print(f"| set | model | template | search | recall@{K} | theorem H@1 / H@10 / H@20 / MRR@20, exact -> index "
              "| queries whose gold rank changed (exact -> index) |\n|---|---|---|---|---|---|---|")
        for c in comparisons:
            print(f"| {c['set']} (n={c['n']}) | {c['model'].rsplit('/', 1)[-1]} | {c['template']} | "
                  f"{c['index_against_exact']} | {c[f'recall@{K}']:.4f} | "
                  + " / ".join(f"{c['exact'][k]:.3f} -> {v:.3f}" for k, v in c["index"].items())
                  + " | " + ("; ".join(f"{q!r} {e} -> {f}" for q, e, f in c["changed"]) or "none") + " |")
        print()
    sets = list(dict.fromkeys(c["set"] for c in cells))
    print("| set | model | template | mode | theorem H@1 / H@10 / H@20 / MRR@20 | paper H@1 / H@10 / H@20 / MRR@20 "
          "| build statements per s / per CPU-s | ms / CPU-ms per query |")
    print("|---|---|---|---|---|---|---|---|")
    for c in cells:
        role = "tuning" if "tuning" in c["set"] else "held-out"
        print(f"| {c['set']} ({role}, n={c['n']}) | {c['model'].rsplit('/', 1)[-1]} | {c['template']} | {c['mode']} | "
              + " | ".join(" / ".join(f"{v:.3f}" for v in c[level].values()) for level in ("theorem", "paper"))
              + f" | {cost(c)} |")
    config = lambda c: (c["model"], c["template"], c["mode"])  # noqa: E731
    by = {(config(c), c["set"]): c["theorem"]["mrr@20"] for c in cells}
    tuning = [s for s in sets if "tuning" in s]
    candidates = {config(c) for c in cells if all((config(c), s) in by for s in tuning)}
    if not tuning or not candidates:
        return
    best = max(candidates, key=lambda k: sum(by[(k, s)] for s in tuning) / len(tuning))
    default = (DEFAULT_MODEL, CONTEXT, "vector")
    print(f"\nchosen on {', '.join(tuning)} (mean theorem MRR@20): {best}")
    for s in sets:
        if (default, s) in by and (best, s) in by:
            print(f"  {s}: {by[(best, s)]:.3f} against default {by[(default, s)]:.3f} "
                  f"(margin {by[(best, s)] - by[(default, s)]:+.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "out" / "evalset-corpus"))
    parser.add_argument("--auto", default=str(EVALSETS / "auto"), help="folder of build_evalsets.py's sets")
    parser.add_argument("--model", nargs="+", default=[DEFAULT_MODEL], help="model names or local paths")
    parser.add_argument("--template", nargs="+", default=list(TEMPLATES), choices=TEMPLATES)
    parser.add_argument("--cache", default=str(REPO / "out" / "quality-cache"), help="embedding cache folder")
    parser.add_argument("--json-out", help="write every cell here as JSON lines")
    parser.add_argument("--no-written", action="store_true",
                        help="leave out the written queries (a corpus other than the shared books and papers)")
    parser.add_argument("--max-queries", type=int, default=0, help="queries kept per automatic set, evenly spaced")
    parser.add_argument("--max-statements", type=int, default=0,
                        help="search over the gold statements plus evenly spaced others up to this many (0: all)")
    parser.add_argument("--index", action="store_true",
                        help="also build the corpus's vector index over each set's vectors and compare its vector "
                             "search with the exact scan (metrics, recall, per-query gold ranks), before and after "
                             "the exact-scan rule for small corpora")
    parser.add_argument("--summarize", metavar="JSONL", nargs="+",
                        help="print the markdown table of a --json-out file and the configuration chosen on tuning sets")
    parser.add_argument("--cost-only", type=int, metavar="N",
                        help="only time each model on N statements (statements/s) and the written queries (ms/query)")
    args = parser.parse_args()
    if args.cost_only:
        return report_cost(args)
    if args.summarize:
        return summarize(args.summarize)
    cache = pathlib.Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    sets = load_sets(pathlib.Path(args.auto), written=not args.no_written)
    base = Searcher(open_catalog(args.corpus))
    if base.indexed:
        raise SystemExit(f"{args.corpus}: has a persistent index; build the corpus with --embed-model none")
    rows = corpus_rows(base)
    docs_of = {r["theorem_id"]: r["doc"] for r in rows}
    if args.max_queries:
        for name, (queries, records) in sets.items():
            if name != "written" and len(queries) > args.max_queries:
                picks = [i * len(queries) // args.max_queries for i in range(args.max_queries)]
                sets[name] = ([queries[i] for i in picks], [records[i] for i in picks])
    gold = {name: [resolve_gold(base, q) for q in queries] for name, (queries, _) in sets.items()}
    keep = sorted({docs_of[t] for golds in gold.values() for ids, _ in golds for t in ids})
    if args.max_statements and args.max_statements > len(keep):
        others = sorted(set(range(len(rows))) - set(keep))
        extra = args.max_statements - len(keep)
        keep = sorted(set(keep) | {others[i * len(others) // extra] for i in range(min(extra, len(others)))})
    elif not args.max_statements:
        keep = list(range(len(rows)))
    print(f"{len(keep)} of {len(rows)} statements searched; sets: " + ", ".join(f"{n} ({len(q)})" for n, (q, _) in sets.items()))

    # Lexical rankings depend on the set (its hiding) but not on model or template: compute once.
    lexical, variants, lexical_ms, lexical_cpu_ms = {}, {}, {}, {}
    for name, (queries, records) in sets.items():
        searcher = Searcher(open_catalog(args.corpus))
        searcher.con.execute("DELETE FROM search_corpus WHERE NOT list_contains(?, doc)", [keep])
        changed = {d: r for d, r in hidden(rows, records, docs_of).items() if d in set(keep)}
        variants[name] = changed
        for doc, row in changed.items():
            searcher.con.execute("UPDATE search_corpus SET lexical_text = concat_ws(' ', ?, ?, ?) WHERE doc = ?",
                                 [row["title"], row["statement_text"], row["paper_title"], doc])
        path = cache / f"lexical-{hashlib.sha1(json.dumps([records, keep]).encode()).hexdigest()[:20]}.json"
        if path.is_file():
            lexical[name] = json.loads(path.read_text())
            continue
        start, cpu_start = time.perf_counter(), time.process_time()
        lexical[name] = [[d for d, _ in searcher.lexical_ranking(q.query, FUSION_DEPTH, Filters())] for q in queries]
        lexical_ms[name] = round(1000 * (time.perf_counter() - start) / len(queries), 1)
        lexical_cpu_ms[name] = round(1000 * (time.process_time() - cpu_start) / len(queries), 1)
        print(f"lexical {name}: {lexical_ms[name]} ms/query, {lexical_cpu_ms[name]} CPU-ms/query")
        path.write_text(json.dumps(lexical[name]))

    out = open(args.json_out, "w", encoding="utf-8", buffering=1) if args.json_out else None   # line by line: a killed run keeps its cells
    for model in args.model:
        query_prompt, document_prompt = default_prompts(model)
        encoder = Encoder(EncoderConfig(model=model, query_prompt=query_prompt, document_prompt=document_prompt))
        for template in args.template:
            texts = [representation_text(rows[d], template) for d in keep]
            position = {d: i for i, d in enumerate(keep)}
            start, cpu_start = time.perf_counter(), time.process_time()
            matrix, embedded = encode(encoder, texts, cache, f"{model}|{template}")
            built, built_cpu = time.perf_counter() - start, time.process_time() - cpu_start
            print(f"\n## {model}, {template}: embedded {len(keep)} statements in {built:.0f}s "
                  f"(cached when ~0s); example: {texts[min(5, len(texts) - 1)][:160]!r}")
            for name, (queries, _) in sets.items():
                changed = variants[name]
                m = matrix
                docs = [d for d in sorted(changed) if representation_text(changed[d], template) != texts[position[d]]]
                if docs:
                    m = matrix.copy()
                    m[[position[d] for d in docs]] = encode(
                        encoder, [representation_text(changed[d], template) for d in docs], cache,
                        f"{model}|{template}|{name}")[0]
                start, cpu_start = time.perf_counter(), time.process_time()
                qv = encoder.encode_queries([q.query for q in queries]).astype(np.float32)
                qv /= np.maximum(np.linalg.norm(qv, axis=1, keepdims=True), 1e-12)
                vector = [[keep[i] for i in np.argsort(-(m @ v), kind="stable")[:FUSION_DEPTH]] for v in qv]
                per_query_ms = 1000 * (time.perf_counter() - start) / len(queries)
                per_query_cpu_ms = 1000 * (time.process_time() - cpu_start) / len(queries)
                rankings = {"vector": vector, "lexical": lexical[name]}
                for w in WEIGHTS:
                    rankings[f"hybrid w={w:g}"] = [[d for d, _ in fuse([v, lx], weights=(1.0, w))]
                                                   for v, lx in zip(vector, lexical[name])]
                contexts = {d: context_of(changed.get(d, rows[d])) for ranked in rankings.values()
                            for r in ranked for d in r[:RERANK_DEPTH]}
                for w in RERANK_WEIGHTS:
                    for fused in ("hybrid w=0.5", "vector"):
                        rankings[f"{fused} +agree {w:g}"] = [
                            [d for d, _ in rerank_by_agreement(q.query, r[:RERANK_DEPTH],
                                                               [contexts[d] for d in r[:RERANK_DEPTH]], w)]
                            for q, r in zip(queries, rankings[fused])]
                if args.index:
                    index, theorem_of = indexed_copy(args.corpus, cache, model, {
                        rows[d]["theorem_id"]: m[i] for i, d in enumerate(keep)}, m.shape[1])
                    for probe_only in (True, False):
                        comparison = index_against_exact(index, theorem_of, queries, qv, gold[name], probe_only)
                        print(f"{name:18s} index ({'probe' if probe_only else 'rule'}) against exact: "
                              f"recall@{K} {comparison[f'recall@{K}']:.4f}, "
                              + " ".join(f"{k} {comparison['exact'][k]:.3f}->{v:.3f}"
                                         for k, v in comparison["index"].items())
                              + f"; gold rank changed (query, exact, index): {comparison['changed'] or 'none'}")
                        if out:
                            out.write(json.dumps({"set": name, "model": model, "template": template, "n": len(queries),
                                                  "index_against_exact": "probe" if probe_only else "rule",
                                                  **comparison}) + "\n")
                for mode, ranked in rankings.items():
                    ranks = [score(r, *g, rows) for r, g in zip(ranked, gold[name])]
                    th, pa = metrics([t for t, _ in ranks]), metrics([p for _, p in ranks])
                    cell = {"set": name, "model": model, "template": template, "mode": mode, "n": len(queries),
                            "theorem": th, "paper": pa, "vector_ms_per_query": round(per_query_ms, 1),
                            "lexical_ms_per_query": lexical_ms.get(name),
                            "vector_cpu_ms_per_query": round(per_query_cpu_ms, 1),
                            "lexical_cpu_ms_per_query": lexical_cpu_ms.get(name),
                            "build_statements_per_s": round(embedded / built, 1) if embedded == len(keep) else None,
                            "build_statements_per_cpu_s": round(embedded / built_cpu, 2) if embedded == len(keep) else None}
                    if out:
                        out.write(json.dumps(cell) + "\n")
                    print(f"{name:18s} {mode:14s} theorem " + " ".join(f"{k} {v:.3f}" for k, v in th.items())
                          + " | paper " + " ".join(f"{k} {v:.3f}" for k, v in pa.items()))
    if out:
        out.close()


if __name__ == "__main__":
    main()
