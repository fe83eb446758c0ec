"""A small corpus written with the real schemas and real embeddings of the packaged model (for the query tests)."""
import json
import pathlib

import pyarrow.parquet as pq

from schemas import FAILURES, PAPERS, theorems_table
from transforms.embed.encoder import Encoder, EncoderConfig

PAPERS_ROWS = [
    dict(paper_id="arxiv:2101.00001", source="arxiv", source_id="2101.00001", title="Sequences and series of reals",
         authors=["Ada Lovelace", "Bernhard O'Riemann"], categories=["math.CA", "math.GM"], primary_category="math.CA",
         year=2021, url="https://arxiv.org/abs/2101.00001", status="ok",
         license="http://creativecommons.org/licenses/by/4.0/"),
    dict(paper_id="arxiv:1901.00002", source="arxiv", source_id="1901.00002", title="Notes on point-set topology",
         authors=["Felix Hausdorff"], categories=["math.GN"], primary_category="math.GN", year=2019,
         url="https://arxiv.org/abs/1901.00002", status="ok"),
    dict(paper_id="latex-project:algebra-notes", source="latex-project", source_id="algebra-notes",
         title="Algebra notes", authors=["Emmy Noether"], categories=[], year=2015, status="ok"),
]

# (paper index, kind, number, label, text)
STATEMENTS = [
    (0, "theorem", "1.1", "thm:monotone", "Every bounded monotone sequence of real numbers converges."),
    (0, "theorem", "1.2", "thm:bw", "Every bounded sequence of real numbers has a convergent subsequence."),
    (0, "definition", "1.3", "def:cauchy", "A sequence $(a_n)$ is Cauchy if for every $\\epsilon>0$ there is $N$ such that $|a_n-a_m|<\\epsilon$ for all $n,m>N$."),
    (0, "lemma", "1.4", "lem:geometric", "The geometric series $\\sum_n r^n$ converges if and only if $|r|<1$."),
    (0, "corollary", "1.5", "cor:ratio", "If the ratio $|a_{n+1}/a_n|$ tends to a limit below one, the series converges absolutely."),
    (1, "theorem", "2.1", "thm:heine", "A subset of Euclidean space is compact if and only if it is closed and bounded."),
    (1, "lemma", "2.2", "lem:closed-compact", "A closed subset of a compact space is compact."),
    (1, "proposition", "2.3", "prop:hausdorff", "A compact subset of a Hausdorff space is closed."),
    (1, "definition", "2.4", "def:connected", "A topological space is connected if it is not the union of two disjoint nonempty open sets."),
    (1, "theorem", "2.5", "thm:tychonoff", "An arbitrary product of compact spaces is compact in the product topology."),
    (2, "theorem", "3.1", "thm:lagrange", "The order of a subgroup of a finite group divides the order of the group."),
    (2, "definition", "3.2", "def:normal", "A subgroup $N$ of $G$ is normal if $gNg^{-1}=N$ for every $g$ in $G$."),
    (2, "theorem", "3.3", "thm:first-iso", "The image of a group homomorphism is isomorphic to the quotient of the domain by the kernel."),
    (2, "lemma", "3.4", "lem:kernel", "The kernel of a group homomorphism is a normal subgroup."),
    (2, "theorem", "3.5", "thm:noether-rings", "A commutative ring is Noetherian if and only if every ideal is finitely generated."),
]


# proofs of some statements, by label
PROOFS = {"cor:ratio": "Compare with a geometric series $\\sum_n q^n$, $q<1$, and apply Lemma~\\ref{lem:geometric}."}
PROOF_TEXTS = {"cor:ratio": "Compare with a geometric series $\\sum_n q^n$, $q<1$, and apply Lemma 1.4."}   # as rendered


def write_corpus(root: pathlib.Path, encoder: Encoder, statements=STATEMENTS, papers=PAPERS_ROWS) -> pathlib.Path:
    table = theorems_table(encoder.dim)
    texts = [s[4] for s in statements]
    vectors = encoder.encode_documents(texts)
    rows = []
    for ordinal, ((paper, kind, number, label, text), vector) in enumerate(zip(statements, vectors)):
        meta = papers[paper]
        rows.append(dict(
            theorem_id=f"{meta['paper_id']}#{ordinal}", paper_id=meta["paper_id"], source=meta["source"],
            year=meta["year"], ordinal=ordinal, kind=kind, env_name=kind, display_name=kind.capitalize(),
            number=number, label=label, section_path=[], file="main.tex", line=ordinal + 1,
            statement_latex=text, statement_text=text, proof_latex=PROOFS.get(label), proof_text=PROOF_TEXTS.get(label),
            description=text, description_model="text",
            embedding=vector.tolist(), statement_embedding=vector.tolist(), embedding_model=encoder.config.model,
            url=None,
        ))
    for (source, year) in sorted({(r["source"], r["year"]) for r in rows}):
        folder = root / "theorems" / f"source={source}" / f"year={year}"
        folder.mkdir(parents=True, exist_ok=True)
        part = [r for r in rows if (r["source"], r["year"]) == (source, year)]
        pq.write_table(table.to_arrow(part), folder / "part-00000.parquet")
    (root / "papers").mkdir(parents=True, exist_ok=True)
    pq.write_table(PAPERS.to_arrow(papers), root / "papers" / "part-00000.parquet")
    (root / "failures").mkdir(parents=True, exist_ok=True)
    pq.write_table(FAILURES.to_arrow([]), root / "failures" / "part-00000.parquet")
    (root / "manifest.json").write_text(json.dumps({"embedding": encoder.config.manifest(encoder.dim)}))
    return root


