"""Restatements: statements of other papers that state the same result, as `restates` edges.

Two methods, each keyed so that a Beam shuffle brings candidates together (no all-pairs loop):
- `text`: the statement normalized (case, spacing, and notation: the identifiers of its formulas are
  renamed in order of first use, so `$H \\le G$` and `$K \\le \\Gamma$` read the same), shingled into
  token 3-grams and MinHashed; the signature's LSH bands are the keys. Statements sharing a band are
  candidates; a pair is kept when the signatures' estimated Jaccard similarity reaches the threshold.
- `embedding`: cosine of new statements' vectors against the corpus, decided on full-precision
  vectors: candidates from the corpus's vector index when the runner hands one down (re-scored
  exactly here), else an exact scan keyed by corpus shard (each shard meets every new statement once).
Only pairs with at least one new (not yet linked) statement and two different papers are compared.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Iterable, Iterator, Optional

import numpy as np

LINK_GROUP_PREFIX = "link_"
DEFAULT_EMBEDDING_THRESHOLD = 0.8
DEFAULT_TEXT_THRESHOLD = 0.8
NUM_PERM = 128
BANDS = 16                      # 16 bands of 8 rows: a pair at Jaccard 0.8 is a candidate with p ~ 0.95
MIN_TOKENS = 8                  # shorter statements ("Let $x$ be real.") are too generic to match by text
MAX_BUCKET = 500                # a band shared by more statements is boilerplate, not a restatement
QUERY_BLOCK = 2048              # new statements scored at once against a shard: 2,048 x 20,000 float32 = 160 MB

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_MATH_TOKEN = re.compile(r"\\[A-Za-z]+|[A-Za-z]|\d+|\S")
_WORD = re.compile(r"[a-z0-9]+")
_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi "
    "rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma "
    "Upsilon Phi Psi Omega".split())
_TYPEFACES = frozenset("mathcal mathbf mathfrak mathbb mathrm mathsf mathscr mathit boldsymbol bm".split())


@dataclasses.dataclass(frozen=True)
class LinkConfig:
    output: str
    embedding_threshold: float = DEFAULT_EMBEDDING_THRESHOLD
    text_threshold: float = DEFAULT_TEXT_THRESHOLD
    shard_size: int = 20000          # corpus statements per embedding shard
    group: str = LINK_GROUP_PREFIX + "00001"   # names this run's edge files

    def manifest(self) -> dict:
        return {"embedding_threshold": self.embedding_threshold, "text_threshold": self.text_threshold,
                "num_perm": NUM_PERM, "bands": BANDS, "min_tokens": MIN_TOKENS, "max_bucket": MAX_BUCKET}


def _math_tokens(formula: str, names: dict[str, str]) -> Iterator[str]:
    for token in _MATH_TOKEN.findall(formula):
        if token in "{}" or token.startswith("\\") and token[1:] in _TYPEFACES:
            continue    # typeface and grouping are notation: $\mathcal{A}$ reads as $A$
        if len(token) == 1 and token.isalpha() or token.startswith("\\") and token[1:] in _GREEK:
            yield names.setdefault(token, f"v{len(names)}")
        else:
            yield token.lower()


def normalized_tokens(text: Optional[str]) -> list[str]:
    """Words (lowercased) and formula tokens with identifiers renamed by first use."""
    names: dict[str, str] = {}
    tokens: list[str] = []
    position = 0
    text = text or ""
    for match in _MATH.finditer(text):
        tokens.extend(_WORD.findall(text[position:match.start()].lower()))
        tokens.extend(_math_tokens(next(g for g in match.groups() if g is not None), names))
        position = match.end()
    tokens.extend(_WORD.findall(text[position:].lower()))
    return tokens


def shingles(tokens: list[str], size: int = 3) -> set[bytes]:
    if len(tokens) < size:
        return {" ".join(tokens).encode()}
    return {" ".join(tokens[i:i + size]).encode() for i in range(len(tokens) - size + 1)}


def text_signature(text: Optional[str]) -> Optional[np.ndarray]:
    """The MinHash signature of a statement's normalized text; None when it is too short to match."""
    from datasketch import MinHash

    tokens = normalized_tokens(text)
    if len(tokens) < MIN_TOKENS:
        return None
    minhash = MinHash(num_perm=NUM_PERM, seed=1)
    minhash.update_batch(sorted(shingles(tokens)))
    return minhash.hashvalues.astype(np.uint64)


def band_keys(signature: np.ndarray) -> list[str]:
    """One key per LSH band: statements sharing any band are candidates."""
    rows = NUM_PERM // BANDS
    return [f"{band}:" + hashlib.blake2b(signature[band * rows:(band + 1) * rows].tobytes(), digest_size=12).hexdigest()
            for band in range(BANDS)]


def estimated_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(a == b))


def candidate_pairs(bucket: list[dict]) -> Iterator[tuple[str, str]]:
    """Pairs of a bucket worth comparing: different papers, at least one statement new; ids ordered."""
    if len(bucket) > MAX_BUCKET:
        return
    bucket = sorted(bucket, key=lambda r: r["theorem_id"])
    for i, a in enumerate(bucket):
        for b in bucket[i + 1:]:
            if a["paper_id"] != b["paper_id"] and (a["new"] or b["new"]):
                yield a["theorem_id"], b["theorem_id"]


def edge_rows(a: dict, b: dict, method: str, group: str) -> list[dict]:
    """Both directions of one restatement, each row in its source statement's partition."""
    return [{
        "paper_id": src["paper_id"], "source": src["source"], "year": src["year"],
        "src_theorem_id": src["theorem_id"], "dst_theorem_id": dst["theorem_id"], "dst_label": None,
        "dst_paper_id": dst["paper_id"], "dst_doi": None, "cite_key": None, "relation": "restates",
        "method": method, "location": "statement", "count": 1, "bundle": group,
    } for src, dst in ((a, b), (b, a))]


def unit_rows(vectors: Iterable) -> np.ndarray:
    """The vectors (sequences of numbers, or float32 bytes as the link job ships them) as unit rows."""
    matrix = np.asarray([np.frombuffer(v, dtype=np.float32) if isinstance(v, bytes) else np.asarray(v, dtype=np.float32)
                         for v in vectors], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def cosine_pairs(corpus: list[dict], queries: list[dict], threshold: float,
                 block: int = QUERY_BLOCK) -> Iterator[tuple[dict, dict, float]]:
    """(query, corpus statement, cosine) for every pair of different papers at or above `threshold`,
    decided on the full-precision vectors. Queries are scored `block` at a time, so memory stays
    at one block x corpus score matrix however many statements are new."""
    if not corpus or not queries:
        return
    found_matrix = unit_rows(c["vector"] for c in corpus).T
    for start in range(0, len(queries), block):
        chunk = queries[start:start + block]
        scores = unit_rows(q["vector"] for q in chunk) @ found_matrix
        for qi, ci in zip(*np.nonzero(scores >= threshold)):
            query, found = chunk[qi], corpus[ci]
            if query["paper_id"] != found["paper_id"]:
                yield query, found, float(scores[qi, ci])


def embedding_pairs(corpus: list[dict], queries: list[dict], threshold: float) -> Iterator[tuple[dict, dict, float]]:
    """(query, corpus statement, cosine) for every query/corpus pair of different papers at or above `threshold`.

    A pair of two new statements is found from both sides; only the side whose query id sorts first
    emits it, so each pair comes out once.
    """
    for query, found, score in cosine_pairs(corpus, queries, threshold):
        if not (found["new"] and found["theorem_id"] < query["theorem_id"]):
            yield query, found, score


def rescored_pairs(candidates: list[dict], queries: list[dict], threshold: float) -> Iterator[tuple[dict, dict]]:
    """Pairs (ordered by id) of candidates an index shortlisted for `queries` whose exact cosine
    reaches `threshold`. An approximate search may find a pair from one side only, so both sides
    emit it (ordered, for deduplication) rather than trusting the other side."""
    for query, found, _ in cosine_pairs(candidates, queries, threshold):
        yield (query, found) if query["theorem_id"] < found["theorem_id"] else (found, query)
