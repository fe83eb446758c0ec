"""The `llm` edge method: an OpenAI-compatible endpoint proposes the statements a proof relies on.

Off unless `thmforge link` is given an endpoint. For each new statement with a proof, the model
sees the statements that come before it in the same document (numbered S<ordinal>, with their
printed name and text) and the proof, and answers JSON naming the ones the proof uses, each with
its evidence: words quoted from the proof. A proposal is kept only when it names a listed
statement and its evidence is found in the proof (spacing and case aside); the rest are counted
as rejected. Kept proposals are `uses` edges with method `llm`, location `proof` and the quote
in `evidence`.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Optional

CANDIDATES = 60                 # the statements just before the proof's own: a proof rarely reaches further
CANDIDATE_CHARS = 300
PROOF_CHARS = 6000
MIN_EVIDENCE_CHARS = 3

SYSTEM = ("You read a mathematical proof and say which of the listed earlier statements it relies on. "
          "Answer with JSON only: {\"uses\": [{\"id\": \"S<number>\", \"evidence\": \"<words copied exactly "
          "from the proof that show the use>\"}]}. List only statements the proof really uses; [] if none.")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_SPACE = re.compile(r"\s+")


@dataclasses.dataclass(frozen=True)
class LLMEdgeConfig:
    endpoint: str
    model: str
    timeout_s: float = 60.0
    max_attempts: int = 5
    concurrency: int = 8
    max_tokens: int = 512

    def manifest(self) -> dict:
        return {"endpoint": self.endpoint, "model": self.model, "candidates": CANDIDATES, "proof_chars": PROOF_CHARS}


def printed_name(row: dict) -> str:
    """"Lemma 2.3", else the kind and label."""
    name = " ".join(x for x in (row.get("display_name") or row.get("kind", "").capitalize(), row.get("number")) if x)
    return name if row.get("number") else f"{name} ({row.get('label') or 'unnumbered'})"


def proof_of(row: dict) -> str:
    return (row.get("proof_text") or row.get("proof_latex") or "").strip()


def candidates_for(statement: dict, paper: list[dict]) -> list[dict]:
    """The statements of the same document before `statement`, nearest last, at most CANDIDATES."""
    before = sorted((r for r in paper if r["ordinal"] is not None and statement["ordinal"] is not None
                     and r["ordinal"] < statement["ordinal"]), key=lambda r: r["ordinal"])
    return before[-CANDIDATES:]


def messages(statement: dict, candidates: list[dict]) -> list[dict]:
    listed = "\n".join(f"S{c['ordinal']}: {printed_name(c)}: {(c.get('statement_text') or '')[:CANDIDATE_CHARS]}"
                       for c in candidates)
    user = (f"Earlier statements:\n{listed}\n\n{printed_name(statement)}: {statement.get('statement_text') or ''}\n\n"
            f"Proof: {proof_of(statement)[:PROOF_CHARS]}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _normalized(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def proposals(content: str) -> Optional[list]:
    """The answer's list of proposals; None when the answer is not the JSON asked for."""
    try:
        answer = json.loads(_FENCE.sub("", content.strip()))
    except ValueError:
        return None
    uses = answer.get("uses") if isinstance(answer, dict) else None
    return uses if isinstance(uses, list) else None


def accepted(statement: dict, candidates: list[dict], uses: list) -> tuple[list[tuple[dict, str]], int]:
    """([(target statement, evidence)], rejected): proposals naming a listed statement whose
    evidence is in the proof; one edge per target (its first evidence)."""
    by_id = {f"S{c['ordinal']}": c for c in candidates}
    proof = _normalized(proof_of(statement)[:PROOF_CHARS])
    kept: dict[str, tuple[dict, str]] = {}
    rejected = 0
    for use in uses:
        target = by_id.get(str(use.get("id", "")).strip()) if isinstance(use, dict) else None
        evidence = _SPACE.sub(" ", str(use.get("evidence") or "")).strip() if isinstance(use, dict) else ""
        if target is None or len(evidence) < MIN_EVIDENCE_CHARS or _normalized(evidence) not in proof:
            rejected += 1
        elif target["theorem_id"] not in kept:
            kept[target["theorem_id"]] = (target, evidence)
    return list(kept.values()), rejected


def edge_row(src: dict, dst: dict, evidence: str, group: str) -> dict:
    return {
        "paper_id": src["paper_id"], "source": src["source"], "year": src["year"],
        "src_theorem_id": src["theorem_id"], "dst_theorem_id": dst["theorem_id"],
        "dst_label": dst.get("label") or printed_name(dst), "dst_paper_id": dst["paper_id"], "dst_doi": None,
        "cite_key": None, "relation": "uses", "method": "llm", "location": "proof", "count": 1,
        "evidence": evidence, "bundle": group,
    }
