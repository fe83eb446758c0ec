"""Schemas of every table thmforge writes: the single source of truth for columns."""
from schemas.edges import EDGES
from schemas.failures import FAILURES
from schemas.instances import INSTANCES
from schemas.papers import PAPERS
from schemas.predictions import PREDICTIONS
from schemas.reference_checks import REFERENCE_CHECKS
from schemas.scores import SCORES
from schemas.table import Table
from schemas.theorems import THEOREMS, theorems_table

CORPUS_TABLES = (PAPERS, THEOREMS, FAILURES, EDGES)
BENCH_TABLES = (INSTANCES, REFERENCE_CHECKS)
EVAL_TABLES = (PREDICTIONS, SCORES)
ALL_TABLES = CORPUS_TABLES + BENCH_TABLES + EVAL_TABLES

__all__ = [
    "Table", "PAPERS", "THEOREMS", "FAILURES", "EDGES", "INSTANCES", "PREDICTIONS", "SCORES", "REFERENCE_CHECKS",
    "theorems_table", "CORPUS_TABLES", "BENCH_TABLES", "EVAL_TABLES", "ALL_TABLES",
]
