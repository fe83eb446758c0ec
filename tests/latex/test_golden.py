"""Golden files: the statements extraction finds in pinned documents, compared field by field.

`tests/golden/<document>.jsonl` holds one statement a line in document order (kind, environment,
display name, number, label, title, plain text). A change of rules that moves any of them shows up
here as a failing test and, after `pytest tests/latex/test_golden.py --update-golden` (or
`THMFORGE_UPDATE_GOLDEN=1`), as a reviewable diff of those files.
"""
import json
import pathlib

import pytest

from transforms.latex.extract import extract_submission
from transforms.latex.model import Limits
from transforms.sources import latex_project

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
SAMPLE_SRC = REPO / "samples" / "src"
SHARED = (REPO.parent / "shared" / "corpora").resolve()
# Shared documents: a blueprint, a paper-sized book, and the HoTT book (the web build's root).
SHARED_DOCUMENTS = {
    "pfr-blueprint": "papers/pfr-blueprint/blueprint/src/print.tex",
    "shulman-catlog": "papers/shulman-catlog/catlog.tex",
    "hott-book": "books/hott-book/hott-online.tex",
}
FIELDS = ("kind", "env_name", "display_name", "number", "label", "title", "statement_text")


def sample_papers() -> dict[str, pathlib.Path]:
    """Every sample submission with LaTeX: a folder, or a single .tex file."""
    found = {}
    for path in sorted(SAMPLE_SRC.glob("*/*")):
        if path.is_dir() or path.suffix == ".tex":
            found[path.name.removesuffix(".tex")] = path
    return found


def sample_files(path: pathlib.Path) -> dict[str, bytes]:
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def golden_lines(statements) -> list[str]:
    """One stable JSON line per statement, in document order."""
    return [json.dumps({"ordinal": s.ordinal, **{f: getattr(s, f) for f in FIELDS}}, ensure_ascii=False,
                       sort_keys=True) for s in statements]


def check_golden(name: str, statements, update: bool) -> None:
    path = GOLDEN / f"{name}.jsonl"
    lines = golden_lines(statements)
    if update:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return
    assert path.exists(), f"{path} missing: run pytest {__file__} --update-golden"
    expected = path.read_text(encoding="utf-8").splitlines()
    changed = [(i, want, got) for i, (want, got) in enumerate(zip(expected, lines)) if want != got]
    assert len(lines) == len(expected) and not changed, (
        f"{name}: {len(lines)} statements (golden {len(expected)}); first differences: {changed[:3]}")


@pytest.mark.parametrize("name", sorted(sample_papers()))
def test_sample_paper_matches_golden(name, update_golden):
    result = extract_submission(sample_files(sample_papers()[name]), limits=Limits())
    assert not any(e.fatal for e in result.events), result.events
    assert result.statements
    check_golden(name, result.statements, update_golden)


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(SHARED_DOCUMENTS))
def test_shared_document_matches_golden(name, shared_corpora, update_golden):
    sub = latex_project.project_submission(str(shared_corpora / SHARED_DOCUMENTS[name]))
    result = latex_project.extract(sub, Limits())
    assert not any(e.fatal for e in result.events), result.events
    check_golden(name, result.statements, update_golden)
