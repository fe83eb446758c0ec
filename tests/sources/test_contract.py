"""The source contract holds structurally: every registered source implements `base.Source`, the
pipeline imports no particular source, and the source modules import each other without cycles."""
import ast
import pathlib

import networkx as nx
import pytest

from transforms.latex.model import Limits
from transforms.sources import SOURCE_MODULES, make_source
from transforms.sources.base import Source

ROOT = pathlib.Path(__file__).resolve().parents[2]
PIPELINE_FILES = ("pipelines/corpus.py", "transforms/corpus.py")


def imported_modules(path: pathlib.Path) -> set[str]:
    """Every module a file imports, at any depth of the file (lazy imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("name", sorted(SOURCE_MODULES))
def test_every_registered_source_implements_the_contract(name):
    source = make_source(name)
    assert isinstance(source, Source) and source.name == name
    for method in ("index", "extract"):
        assert getattr(type(source), method) is not getattr(Source, method), f"{name} lacks {method}"


def test_the_pipeline_names_no_particular_source():
    modules = {f"transforms.sources.{m.stem}" for m in (ROOT / "transforms" / "sources").glob("*.py")}
    allowed = {"transforms.sources.base", "transforms.sources.__init__"}
    for path in PIPELINE_FILES:
        assert not (imported_modules(ROOT / path) & (modules - allowed)), path


def test_source_modules_import_each_other_without_cycles():
    graph = nx.DiGraph()
    for path in (ROOT / "transforms" / "sources").glob("*.py"):
        graph.add_node(path.stem)
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[:2] == ["transforms", "sources"] and len(parts) > 2 and parts[2] != path.stem:
                graph.add_edge(path.stem, parts[2])
    assert list(nx.simple_cycles(graph)) == []


def test_a_source_without_metadata_refuses_a_metadata_line():
    with pytest.raises(ValueError, match="takes no metadata"):
        make_source("stacks").parse_metadata_line('{"id": "x"}')
    assert not make_source("latex-project").takes_metadata and make_source("arxiv").takes_metadata


def test_missing_local_inputs_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent"):
        make_source("latex-project").expand_inputs([str(tmp_path / "absent")])
    (tmp_path / "notes").mkdir()
    assert make_source("stacks").expand_inputs([str(tmp_path / "notes")]) == \
        [str(tmp_path / "notes")]
    assert make_source("stacks").index(str(tmp_path / "notes"), Limits()).bundle == "notes"
