"""Search quality per evaluation set x mode x representation x model, with build and query cost.

  .venv/bin/python benchmarks/retrieval_quality.py --corpus out/evalset-corpus \
      [--model sentence-transformers/all-MiniLM-L6-v2 ...] [--template plain context-v1] [--cache DIR] \
      [--mix plain context-v1] [--max-queries 40 --max-statements 400] [--json-out cells.jsonl]
  .venv/bin/python benchmarks/retrieval_quality.py --summarize cells.jsonl      # table + choice on tuning sets
  .venv/bin/python benchmarks/retrieval_quality.py --cost-only 200 --model A B  # statements/s, ms/query

The corpus may be built without embeddings (`--embed-model none`): every (model, representation)
is embedded here from the stored rows, exactly as the embed stage would (`representation_text`),
so models and templates compare on the same statements. Sets: the written `queries.jsonl` and the
automatic sets of `build_evalsets.py` (their hide keys are applied: the hidden text is removed from
the indexed text of every statement of that set, and those statements are re-embedded). Hybrid is
reciprocal-rank fusion (`retrieval.search.fuse`) at several BM25 weights; the weight is chosen on
the tuning sets only and then reported on the held-out ones. Besides the embed stage's templates,
`TRIAL_TEMPLATES` (context-v1 without parts of its context) and `--mix A B` (weighted sums of two
templates' vectors; two vectors per statement, by max similarity or fused rankings) are scored.
Every vector is cached by (model, text), so a variant pays only for the texts it adds.
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
from transforms.embed.representation import (  # noqa: E402
    COMPONENT_WEIGHTS, COMPONENTS, CONTEXT, DEFAULT_TEMPLATE, PLAIN, TEMPLATES, combine, context_text,
    representation_text)

EVALSETS = REPO / "retrieval" / "evalsets"
WEIGHTS = (0.25, 0.5, 1.0)
RERANK_WEIGHTS = (0.5, 1.0)   # agreement reranking of hybrid's top RERANK_DEPTH
RERANK_DEPTH = 50
MIX_WEIGHTS = (0.25, 0.5, 0.6, 0.7, 0.8, 0.9)   # --mix: B's share of the summed vector
K = 20
# Variants of context-v1 scored here only (not embed-stage templates): which part of the context helps.
TRIAL_TEMPLATES = {
    "context-no-section": lambda row: context_text(dict(row, section_path=None)),
    "context-inner-section": lambda row: context_text(dict(row, section_path=(row.get("section_path") or [])[-1:])),
}
CACHE_CHUNK = 256      # texts per cached embedding file


def text_of(row: dict, template: str) -> str:
    return TRIAL_TEMPLATES[template](row) if template in TRIAL_TEMPLATES else representation_text(row, template)


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


class VectorCache:
    """Normalized document vectors on disk by (model, text): a new template, a hidden-text variant or a
    rerun embeds only the texts this model has never embedded, whatever template or set they came from.
    Written CACHE_CHUNK vectors at a time (a vector file, then its keys), so an interrupted run resumes."""

    def __init__(self, folder: pathlib.Path, model: str):
        self.folder = folder / f"vectors-{hashlib.sha1(model.encode()).hexdigest()[:12]}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.rows: dict[str, np.ndarray] = {}
        for keys in sorted(self.folder.glob("*.keys.json")):
            matrix = np.load(keys.with_name(keys.name.removesuffix(".keys.json") + ".npy"))
            self.rows.update(zip(json.loads(keys.read_text()), matrix))

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def add(self, texts: list[str], matrix: np.ndarray) -> None:
        keys = [self.key(t) for t in texts]
        name = hashlib.sha1("".join(keys).encode()).hexdigest()[:20]
        np.save(self.folder / f"{name}.npy", matrix)
        partial = self.folder / f"{name}.keys.json.partial"    # renamed whole: a kill leaves no half keys file
        partial.write_text(json.dumps(keys))
        partial.replace(self.folder / f"{name}.keys.json")
        self.rows.update(zip(keys, matrix))

    def encode(self, encoder: Encoder, texts: list[str]) -> tuple[np.ndarray, int]:
        """(the texts' unit vectors, how many texts were embedded now rather than read from the cache)."""
        # Length order: a chunk's texts pad to nearly the same length (about a quarter less compute than
        # source order for all-mpnet-base-v2 over context-v1 texts).
        missing = sorted(dict.fromkeys(t for t in texts if self.key(t) not in self.rows), key=len)
        for start in range(0, len(missing), CACHE_CHUNK):
            chunk = missing[start:start + CACHE_CHUNK]
            self.add(chunk, unit(encoder.encode_documents(chunk).astype(np.float32)))
        if not texts:
            return np.zeros((0, encoder.dim), dtype=np.float32), 0
        return np.stack([self.rows[self.key(t)] for t in texts]), len(missing)


def statement_sample(gold_docs: set[int], total: int, max_statements: int) -> list[int]:
    """The docs searched: all `total` (max_statements 0), else every gold doc plus evenly spaced others
    up to max_statements."""
    if not max_statements:
        return list(range(total))
    others = sorted(set(range(total)) - gold_docs)
    extra = max(0, max_statements - len(gold_docs))
    return sorted(gold_docs | ({others[i * len(others) // extra] for i in range(extra)} if extra < len(others)
                               else set(others)))


def unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=-1, keepdims=True), 1e-12)


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
    """CPU cost per model and template: statements per second and per CPU-second to embed a sample
    (every text a template embeds, summed templates combined), and ms per written query to embed it
    and rank a corpus-sized matrix; templates interleaved, --repeat times, median and range."""
    rows = corpus_rows(Searcher(open_catalog(args.corpus)))
    sample = rows[:: max(1, len(rows) // args.cost_only)][: args.cost_only]
    queries = [q.query for q in load_sets(pathlib.Path(args.auto))["written"][0]]
    spread = lambda values: f"{np.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"  # noqa: E731
    for model in args.model:
        query_prompt, document_prompt = default_prompts(model)
        encoder = Encoder(EncoderConfig(model=model, query_prompt=query_prompt, document_prompt=document_prompt))
        encoder.encode_queries(queries[:4])                       # warm-up
        rates: dict[str, list[tuple[float, float]]] = {t: [] for t in args.template}
        query_ms: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            for template in args.template:
                parts = [[text_of(r, t) for r in sample] for t in COMPONENTS.get(template, (template,))]
                start, cpu_start = time.perf_counter(), time.process_time()
                vectors = combine([encoder.encode_documents(texts) for texts in parts], COMPONENT_WEIGHTS.get(template))
                rates[template].append((len(sample) / (time.perf_counter() - start),
                                        len(sample) / (time.process_time() - cpu_start)))
                matrix = np.resize(vectors, (len(rows), encoder.dim))   # the whole corpus's size, for the scan
            start, cpu_start = time.perf_counter(), time.process_time()
            for vector in unit(encoder.encode_queries(queries)):  # one batch, as the quality run embeds them
                np.argsort(-(matrix @ vector))[:K]
            query_ms.append((1000 * (time.perf_counter() - start) / len(queries),
                             1000 * (time.process_time() - cpu_start) / len(queries)))
        for template, values in rates.items():
            print(f"{model} {template}: statements per s {spread([w for w, _ in values])}, per CPU-s "
                  f"{spread([c for _, c in values])} ({len(sample)} statements, {args.repeat} runs)", flush=True)
        print(f"{model}: vector search ms per query {spread([w for w, _ in query_ms])}, CPU-ms "
              f"{spread([c for _, c in query_ms])} ({len(queries)} written queries embedded in one batch, each ranked by "
              f"an exact scan of {len(rows)} vectors)")


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
    """Markdown tables: every cell with its cost, theorem MRR@20 per configuration and set; the
    configuration with the best mean MRR@20 over the tuning sets and its margin on every set over the
    default template, plain and context-v1 (vector, the default model)."""
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
    held_out = [s for s in sets if s not in tuning]
    candidates = [k for k in dict.fromkeys(config(c) for c in cells) if all((k, s) in by for s in tuning)]
    if not tuning or not candidates:
        return
    mean = lambda k, names: sum(by[(k, s)] for s in names) / len(names)  # noqa: E731
    print("\nTheorem-level MRR@20 (T: tuning, H: held out):\n")
    print("| model | template | mode | " + " | ".join(f"{s} ({'T' if s in tuning else 'H'})" for s in sets)
          + " | mean tuning | mean held-out |\n|" + "---|" * (len(sets) + 5))
    for k in candidates:
        print(f"| {k[0].rsplit('/', 1)[-1]} | {k[1]} | {k[2]} | "
              + " | ".join(f"{by[(k, s)]:.3f}" if (k, s) in by else "-" for s in sets)
              + f" | {mean(k, tuning):.3f} | "
              + (f"{mean(k, held_out):.3f} |" if held_out and all((k, s) in by for s in held_out) else "- |"))
    best = max(candidates, key=lambda k: mean(k, tuning))
    print(f"\nchosen on {', '.join(tuning)} (best mean theorem MRR@20): {best}")
    ranks = {(config(c), c["set"]): c.get("theorem_ranks") for c in cells}
    baselines = [(DEFAULT_MODEL, t, "vector") for t in (DEFAULT_TEMPLATE, PLAIN, CONTEXT)]
    print_margins(best, baselines, sets, held_out, by, ranks)
    for model in dict.fromkeys(k[0] for k in candidates):   # each model's own choice, against today's default
        if model != best[0]:
            own = max((k for k in candidates if k[0] == model), key=lambda k: mean(k, tuning))
            default = f", the default's {mean(baselines[0], tuning):.3f}" if baselines[0] in candidates else ""
            print(f"\n{model.rsplit('/', 1)[-1]}'s best on the tuning sets: {own} "
                  f"(mean {mean(own, tuning):.3f}{default})")
            print_margins(own, baselines[:1], sets, held_out, by, ranks)


def print_margins(config: tuple, baselines: list[tuple], sets: list[str], held_out: list[str], by: dict,
                  ranks: dict) -> None:
    """`config`'s theorem MRR@20 minus each baseline's on every set both have, with 95% paired bootstrap
    intervals, and on the mean of the held-out sets when both have them all."""
    mean = lambda k, names: sum(by[(k, s)] for s in names) / len(names)  # noqa: E731
    for baseline in dict.fromkeys(baselines):
        both = [s for s in sets if (baseline, s) in by and (config, s) in by]
        if baseline == config or not both:
            continue
        pairs = lambda names: [(ranks[(config, s)], ranks[(baseline, s)]) for s in names]  # noqa: E731
        print(f"against {baseline[0].rsplit('/', 1)[-1]}, {baseline[1]}, vector (95% paired bootstrap interval of the "
              "difference): " + "; ".join(
                  f"{s} {by[(config, s)]:.3f} - {by[(baseline, s)]:.3f} = {by[(config, s)] - by[(baseline, s)]:+.3f}"
                  + bootstrap_interval(pairs([s])) for s in both)
              + (f"; mean held-out {mean(config, held_out) - mean(baseline, held_out):+.3f}"
                 + bootstrap_interval(pairs(held_out)) if held_out and all(s in both for s in held_out) else ""))


def bootstrap_interval(pairs: list[tuple[list, list]], samples: int = 10000) -> str:
    """" [low, high]": 2.5th and 97.5th percentiles of the difference of mean MRR@20 over the sets when
    each set's queries are resampled (pairs: per set, the configuration's and the baseline's ranks)."""
    if not pairs or not all(a and b for a, b in pairs):
        return ""
    reciprocal = lambda rs: np.array([1 / r if r and r <= K else 0.0 for r in rs])  # noqa: E731
    rng, total = np.random.default_rng(0), np.zeros(samples)
    for ranks, baseline in pairs:
        difference = reciprocal(ranks) - reciprocal(baseline)
        total += difference[rng.integers(0, len(difference), (samples, len(difference)))].mean(axis=1) / len(pairs)
    low, high = np.percentile(total, [2.5, 97.5])
    return f" [{low:+.3f}, {high:+.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "out" / "evalset-corpus"))
    parser.add_argument("--auto", default=str(EVALSETS / "auto"), help="folder of build_evalsets.py's sets")
    parser.add_argument("--model", nargs="+", default=[DEFAULT_MODEL], help="model names or local paths")
    parser.add_argument("--template", nargs="+", default=list(TEMPLATES),
                        choices=[*TEMPLATES, *TRIAL_TEMPLATES])
    parser.add_argument("--cache", default=str(REPO / "out" / "quality-cache"), help="embedding cache folder")
    parser.add_argument("--mix", nargs=2, action="append", metavar=("A", "B"), choices=[*TEMPLATES, *TRIAL_TEMPLATES],
                        help="(repeatable) also score A and B combined: one vector, their weighted normalized sum (B's weight "
                             f"{', '.join(map(str, MIX_WEIGHTS))}), and two vectors per statement (max similarity; "
                             "reciprocal-rank fusion of the two rankings)")
    parser.add_argument("--json-out", help="write every cell here as JSON lines")
    parser.add_argument("--no-written", action="store_true",
                        help="leave out the written queries (a corpus other than the shared books and papers)")
    parser.add_argument("--max-queries", type=int, default=0, help="queries kept per automatic set, evenly spaced")
    parser.add_argument("--max-statements", type=int, default=0,
                        help="search over the gold statements plus evenly spaced others up to this many (0: all)")
    parser.add_argument("--sets", nargs="+", metavar="NAME",
                        help="score only these sets (a partial run on the same statements: with --max-statements "
                             "the sample still holds every set's gold)")
    parser.add_argument("--index", action="store_true",
                        help="also build the corpus's vector index over each set's vectors and compare its vector "
                             "search with the exact scan (metrics, recall, per-query gold ranks), before and after "
                             "the exact-scan rule for small corpora")
    parser.add_argument("--summarize", metavar="JSONL", nargs="+",
                        help="print the markdown table of a --json-out file and the configuration chosen on tuning sets")
    parser.add_argument("--repeat", type=int, default=3, help="--cost-only: timed runs per template, interleaved")
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
    keep = statement_sample({docs_of[t] for golds in gold.values() for ids, _ in golds for t in ids}, len(rows),
                            args.max_statements)
    if args.sets:       # after the sample: the statements searched stay those of a run over every set
        sets = {name: value for name, value in sets.items() if name in args.sets}
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
    position = {d: i for i, d in enumerate(keep)}
    for model in args.model:
        query_prompt, document_prompt = default_prompts(model)
        encoder = Encoder(EncoderConfig(model=model, query_prompt=query_prompt, document_prompt=document_prompt))
        store = VectorCache(cache, model)
        built: dict[str, tuple[int, float, float]] = {}    # template -> (embedded now, wall s, CPU s)

        def set_matrices(template: str) -> dict[str, np.ndarray]:
            """set -> the template's unit vectors of the searched statements, with that set's text hidden."""
            if template in matrices:
                return matrices[template]
            if template in COMPONENTS:
                parts = [set_matrices(t) for t in COMPONENTS[template]]
                matrices[template] = {name: combine([p[name] for p in parts], COMPONENT_WEIGHTS[template])
                                      for name in sets}
                return matrices[template]
            texts = [text_of(rows[d], template) for d in keep]
            start, cpu_start = time.perf_counter(), time.process_time()
            matrix, embedded = store.encode(encoder, texts)
            built[template] = (embedded, time.perf_counter() - start, time.process_time() - cpu_start)
            print(f"\n## {model}, {template}: embedded {embedded} of {len(keep)} statements "
                  f"in {built[template][1]:.0f}s; example: {texts[min(5, len(texts) - 1)][:160]!r}")
            out_sets = {}
            for name in sets:
                changed = variants[name]
                docs = [d for d in sorted(changed) if text_of(changed[d], template) != texts[position[d]]]
                out_sets[name] = matrix
                if docs:
                    out_sets[name] = matrix.copy()
                    out_sets[name][[position[d] for d in docs]] = store.encode(
                        encoder, [text_of(changed[d], template) for d in docs])[0]
            matrices[template] = out_sets
            return out_sets

        matrices: dict[str, dict[str, np.ndarray]] = {}
        for t in dict.fromkeys([*args.template, *(t for pair in args.mix or [] for t in pair)]):
            set_matrices(t)
        # name -> (one matrix per set, or two: max similarity and rrf; the templates embedded for it)
        representations = {t: ([matrices[t]], list(COMPONENTS.get(t, [t]))) for t in args.template}
        for a, b in args.mix or []:
            for w in MIX_WEIGHTS:
                representations[f"{a}+{b} w={w:g}"] = (
                    [{name: combine([matrices[a][name], matrices[b][name]], (1 - w, w)) for name in sets}], [a, b])
            representations[f"{a} & {b}"] = ([matrices[a], matrices[b]], [a, b])   # two vectors per statement
        for template, (per_set, embedded_templates) in representations.items():
            costs = [built.get(t) for t in embedded_templates]
            full = all(c and c[0] == len(keep) for c in costs)
            build_rate = round(len(keep) / sum(c[1] for c in costs), 1) if full else None
            build_cpu_rate = round(len(keep) / sum(c[2] for c in costs), 2) if full else None
            for name, (queries, _) in sets.items():
                start, cpu_start = time.perf_counter(), time.process_time()
                qv = unit(encoder.encode_queries([q.query for q in queries]).astype(np.float32))
                similarities = [matrix[name] @ qv.T for matrix in per_set]   # statements x queries, per matrix
                firsts = {"vector": np.max(similarities, axis=0)} if len(per_set) == 1 else {
                    "vector max": np.max(similarities, axis=0)}
                ranked = {mode: [[keep[i] for i in np.argsort(-s[:, j], kind="stable")[:FUSION_DEPTH]]
                                 for j in range(len(queries))] for mode, s in firsts.items()}
                if len(per_set) > 1:
                    each = [[[keep[i] for i in np.argsort(-s[:, j], kind="stable")[:FUSION_DEPTH]]
                             for j in range(len(queries))] for s in similarities]
                    ranked["vector rrf"] = [[d for d, _ in fuse(r)][:FUSION_DEPTH] for r in zip(*each)]
                per_query_ms = 1000 * (time.perf_counter() - start) / len(queries)
                per_query_cpu_ms = 1000 * (time.process_time() - cpu_start) / len(queries)
                first = next(iter(ranked))
                rankings = {**ranked, "lexical": lexical[name]}
                for w in WEIGHTS:
                    rankings[f"hybrid w={w:g}"] = [[d for d, _ in fuse([v, lx], weights=(1.0, w))]
                                                   for v, lx in zip(ranked[first], lexical[name])]
                changed = variants[name]
                contexts = {d: context_of(changed.get(d, rows[d])) for ranked_lists in rankings.values()
                            for r in ranked_lists for d in r[:RERANK_DEPTH]}
                rerank_cpu_ms = {}
                for w in RERANK_WEIGHTS:
                    for fused in ("hybrid w=0.5", first):
                        cpu_start = time.process_time()
                        rankings[f"{fused} +agree {w:g}"] = [
                            [d for d, _ in rerank_by_agreement(q.query, r[:RERANK_DEPTH],
                                                               [contexts[d] for d in r[:RERANK_DEPTH]], w)]
                            for q, r in zip(queries, rankings[fused])]
                        rerank_cpu_ms[f"{fused} +agree {w:g}"] = 1000 * (time.process_time() - cpu_start) / len(queries)
                if args.index and len(per_set) == 1:
                    m = per_set[0][name]
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
                for mode, ranked_lists in rankings.items():
                    ranks = [score(r, *g, rows) for r, g in zip(ranked_lists, gold[name])]
                    th, pa = metrics([t for t, _ in ranks]), metrics([p for _, p in ranks])
                    cell = {"set": name, "model": model, "template": template, "mode": mode, "n": len(queries),
                            "theorem": th, "paper": pa, "theorem_ranks": [t for t, _ in ranks],
                            "vector_ms_per_query": round(per_query_ms, 1),
                            "lexical_ms_per_query": lexical_ms.get(name),
                            "vector_cpu_ms_per_query": round(per_query_cpu_ms, 1),
                            "lexical_cpu_ms_per_query": lexical_cpu_ms.get(name),
                            "rerank_cpu_ms_per_query": round(rerank_cpu_ms[mode], 2) if mode in rerank_cpu_ms else None,
                            "build_statements_per_s": build_rate, "build_statements_per_cpu_s": build_cpu_rate}
                    if out:
                        out.write(json.dumps(cell) + "\n")
                    print(f"{name:18s} {template:24s} {mode:18s} theorem "
                          + " ".join(f"{k} {v:.3f}" for k, v in th.items())
                          + " | paper " + " ".join(f"{k} {v:.3f}" for k, v in pa.items()), flush=True)
    if out:
        out.close()


if __name__ == "__main__":
    main()
