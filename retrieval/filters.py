"""Search filters: validated values that reach SQL only as bound parameters.

The SQL text depends only on which filters are set (never on their values), so nothing a user
types can change a query's structure. Values are still checked, so that a malformed or hostile
filter is reported as such instead of silently matching nothing.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional, Sequence

from schemas.errors import UsageError
from schemas.theorems import KINDS
from transforms.sources import SOURCE_MODULES

MAX_VALUES = 50          # values per filter
MAX_VALUE_CHARS = 200
_CATEGORY = re.compile(r"[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)?")
_PAPER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]*")
_YEAR_MIN, _YEAR_MAX = 1000, 9999


@dataclasses.dataclass(frozen=True)
class Filters:
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()       # "math.AG", or an archive such as "math" for all of it
    year_from: Optional[int] = None
    year_to: Optional[int] = None
    authors: tuple[str, ...] = ()          # case-insensitive substring of any author; any of these
    paper_ids: tuple[str, ...] = ()


def _values(name: str, values: Optional[Sequence[str]]) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str) or not all(isinstance(v, str) for v in values):
        raise UsageError(f"{name}: expected a list of strings")
    if len(values) > MAX_VALUES:
        raise UsageError(f"{name}: at most {MAX_VALUES} values")
    out = []
    for value in values:
        value = value.strip()
        if not value:
            raise UsageError(f"{name}: empty value")
        if len(value) > MAX_VALUE_CHARS:
            raise UsageError(f"{name}: value longer than {MAX_VALUE_CHARS} characters")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise UsageError(f"{name}: control characters are not allowed")
        out.append(value)
    return tuple(dict.fromkeys(out))


def _matching(name: str, values: tuple[str, ...], pattern: re.Pattern, shape: str) -> tuple[str, ...]:
    for value in values:
        if not pattern.fullmatch(value):
            raise UsageError(f"{name}: {value!r} is not {shape}")
    return values


def _year(name: str, value) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not _YEAR_MIN <= value <= _YEAR_MAX:
        raise UsageError(f"{name}: expected a four-digit year, got {value!r}")
    return value


def make_filters(*, kinds=None, sources=None, categories=None, year_from=None, year_to=None,
                 authors=None, paper_ids=None) -> Filters:
    """Validated filters; any bad value raises `UsageError` with what was wrong."""
    kinds = tuple(v.lower() for v in _values("kind", kinds))
    for kind in kinds:
        if kind not in KINDS:
            raise UsageError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    sources = _values("source", sources)
    for source in sources:
        if source not in SOURCE_MODULES:
            raise UsageError(f"source: {source!r} is not one of {', '.join(SOURCE_MODULES)}")
    filters = Filters(
        kinds=kinds,
        sources=sources,
        categories=_matching("category", _values("category", categories), _CATEGORY,
                             "an arXiv category such as math.AG or an archive such as math"),
        year_from=_year("year_from", year_from),
        year_to=_year("year_to", year_to),
        authors=tuple(a.lower() for a in _values("author", authors)),
        paper_ids=_matching("paper_id", _values("paper_id", paper_ids), _PAPER_ID,
                            "a paper id such as arxiv:2101.00001 or latex-project:hott-book"),
    )
    if filters.year_from is not None and filters.year_to is not None and filters.year_from > filters.year_to:
        raise UsageError(f"year range {filters.year_from}:{filters.year_to} is empty")
    return filters


def parse_year_range(text: str) -> tuple[Optional[int], Optional[int]]:
    """`2019:2023`, `2019:`, `:2023` or `2020` to (from, to)."""
    text = text.strip()
    low, sep, high = text.partition(":")
    try:
        year_from = int(low) if low.strip() else None
        year_to = (int(high) if high.strip() else None) if sep else year_from
    except ValueError:
        raise UsageError(f"--year: expected FROM:TO with four-digit years, got {text!r}") from None
    return _year("--year", year_from), _year("--year", year_to)


def where_sql(filters: Filters, alias: str = "c") -> tuple[str, list]:
    """`(cond AND ...)` over the search table and its bound parameters, in order."""
    conditions, params = [], []
    if filters.kinds:
        conditions.append(f"list_contains(?::VARCHAR[], {alias}.kind)")
        params.append(list(filters.kinds))
    if filters.sources:
        conditions.append(f"list_contains(?::VARCHAR[], {alias}.source)")
        params.append(list(filters.sources))
    if filters.categories:
        conditions.append(f"list_has_any({alias}.category_keys, ?::VARCHAR[])")
        params.append(list(filters.categories))
    if filters.year_from is not None:
        conditions.append(f"{alias}.year >= ?")
        params.append(filters.year_from)
    if filters.year_to is not None:
        conditions.append(f"{alias}.year <= ?")
        params.append(filters.year_to)
    if filters.authors:
        conditions.append("(" + " OR ".join(f"contains({alias}.authors_key, ?)" for _ in filters.authors) + ")")
        params.extend(filters.authors)
    if filters.paper_ids:
        conditions.append(f"list_contains(?::VARCHAR[], {alias}.paper_id)")
        params.append(list(filters.paper_ids))
    return ("(" + " AND ".join(conditions) + ")" if conditions else "true"), params
