"""Reading and writing the evaluation tables: instances in, predictions and scores as Hive Parquet.

Predictions and scores are partitioned by model; a model name becomes a directory name through
percent-encoding (`Qwen/Qwen3-8B` -> `model=Qwen%2FQwen3-8B`), which pyarrow and DuckDB decode
back. Files are written sorted by (instance_id, trial) with deterministic names, so the same
rows give the same bytes.
"""
from __future__ import annotations

import json
import pathlib
import urllib.parse
from typing import Any, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from schemas import INSTANCES, PREDICTIONS
from schemas.table import Table

INSTANCE_READ_COLUMNS = ("instance_id", "suite", "category", "structure", "task", "difficulty",
                         "length", "variant", "prompt", "prompt_parts", "answer", "answer_type")


class InputError(ValueError):
    """An input path or file that cannot be used (the command line reports it as a usage error)."""


def partition_path(root: str | pathlib.Path, table: Table, model: str) -> pathlib.Path:
    return pathlib.Path(root) / table.name / f"model={urllib.parse.quote(model, safe='')}"


def model_of_path(path: str | pathlib.Path) -> str | None:
    """The model named by a `model=...` directory in the path, if any."""
    for part in reversed(pathlib.Path(path).parts):
        if part.startswith("model="):
            return urllib.parse.unquote(part[len("model="):])
    return None


def table_dir(path: str | pathlib.Path, table: Table) -> pathlib.Path:
    """`path/<table>` when it exists, else `path` itself when it is that table's directory."""
    path = pathlib.Path(path)
    if (path / table.name).is_dir():
        return path / table.name
    if path.is_dir() and path.name == table.name:
        return path
    raise InputError(f"{path}: no {table.name}/ directory here")


def read_rows(directory: pathlib.Path, table: Table, columns: Sequence[str] | None = None) -> list[dict]:
    """All rows of a Hive-partitioned table directory (partition columns included)."""
    files = sorted(str(p) for p in directory.rglob("*.parquet"))
    if not files:
        return []
    partitions = ds.partitioning(pa.schema([table.schema.field(c) for c in table.partition_by]), flavor="hive")
    dataset = ds.dataset(files, partitioning=partitions, partition_base_dir=str(directory))
    wanted = [c for c in (columns or table.columns) if c in dataset.schema.names]
    return dataset.to_table(columns=wanted).to_pylist()


def prediction_files(path: str | pathlib.Path) -> list[str]:
    """The Parquet or JSONL files holding predictions at `path` (a file, or a run-bench output)."""
    path = pathlib.Path(path)
    if path.is_file():
        if path.suffix not in (".jsonl", ".parquet"):
            raise InputError(f"{path}: predictions must be a .jsonl or .parquet file or a directory")
        return [str(path)]
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    files = sorted(str(p) for p in table_dir(path, PREDICTIONS).rglob("*.parquet"))
    if not files:
        raise InputError(f"{path}: no prediction files under it")
    return files


def file_rows(path: str) -> int:
    """Rows a prediction or instance file holds (Parquet metadata, non-empty JSONL lines), for progress;
    0 when unreadable (reading it properly reports why)."""
    try:
        if path.endswith(".jsonl"):
            with open(path, "rb") as handle:
                return sum(1 for line in handle if line.strip())
        return pq.ParquetFile(path).metadata.num_rows
    except (pa.ArrowException, OSError):
        return 0


def iter_prediction_file(path: str) -> Iterator[tuple[dict | None, dict | None]]:
    """(prediction, None) for each valid record, (None, rejection) for each invalid one."""
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield _validated_json_line(line, f"{path}:{number}")
        return
    model = model_of_path(path)
    try:
        rows = pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError) as exc:
        yield None, {"location": path, "reason": f"unreadable Parquet: {exc}", "record": ""}
        return
    for index, row in enumerate(rows):
        row.setdefault("model", model)
        yield _validated(row, f"{path}#{index}")


def _validated_json_line(line: str, location: str) -> tuple[dict | None, dict | None]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, {"location": location, "reason": f"not JSON: {exc}", "record": line.strip()[:500]}
    if not isinstance(record, dict):
        return None, {"location": location, "reason": "not a JSON object", "record": line.strip()[:500]}
    return _validated(record, location)


def _validated(record: Mapping[str, Any], location: str) -> tuple[dict | None, dict | None]:
    """A prediction with the schema's columns, or a rejection saying which field is wrong."""
    def reject(reason: str):
        return None, {"location": location, "reason": reason, "record": json.dumps(record, default=str)[:500]}

    for field in ("instance_id", "model"):
        if not isinstance(record.get(field), str) or not record[field]:
            return reject(f"{field} must be a non-empty string")
    trial = _trial_number(record.get("trial", 0))
    if trial is None:
        return reject("trial must be a non-negative integer")
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        return reject("response must be a string or null")
    prediction = {column: record.get(column) for column in PREDICTIONS.columns}
    prediction["trial"] = trial
    return prediction, None


def _trial_number(value: Any) -> int | None:
    """0, 1, 2, ... from an int, an integral float or a digit string (a missing trial is 0)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
        return None
    return int(str(value).strip())


def hive_values(path: str | pathlib.Path, table: Table) -> dict[str, Any]:
    """The partition columns' values named by `key=value` directories in `path`."""
    values = {}
    for part in pathlib.Path(path).parts:
        key, sep, value = part.partition("=")
        if sep and key in table.partition_by:
            values[key] = urllib.parse.unquote(value)
    return values


def read_partitioned_file(path: str, table: Table, columns: Sequence[str] | None = None) -> list[dict]:
    """One Parquet file's rows with its partition columns filled in from the path."""
    stored = pq.read_schema(path).names
    wanted = [c for c in (columns or table.columns) if c in stored]
    rows = pq.read_table(path, columns=wanted).to_pylist()
    partitions = hive_values(path, table)
    for row in rows:
        row.update(partitions)
    return rows


REQUIRED_INSTANCE_COLUMNS = ("instance_id", "answer", "answer_type")


def instance_files(path: str | pathlib.Path) -> list[str]:
    """The Parquet files of a release's instances table (the release directory or instances/),
    each checked to be readable and to hold the columns scoring needs."""
    files = sorted(str(p) for p in table_dir(path, INSTANCES).rglob("*.parquet"))
    if not files:
        raise InputError(f"{path}: the instances table has no Parquet files")
    for file in files:
        try:
            names = pq.read_schema(file).names
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{file}: not a readable Parquet file ({exc})") from None
        missing = [c for c in REQUIRED_INSTANCE_COLUMNS if c not in names]
        if missing:
            raise InputError(f"{file}: instance file lacks columns {', '.join(missing)}")
    return files


def write_partition(rows: Sequence[Mapping[str, Any]], table: Table, root: str | pathlib.Path,
                    model: str, file_name: str = "part-00000.parquet") -> pathlib.Path:
    """Write one model's rows, sorted by (instance_id, trial), replacing that partition's files."""
    directory = partition_path(root, table, model)
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: (r["instance_id"], r["trial"]))
    target = directory / file_name
    temporary = directory / f".{file_name}.tmp"
    pq.write_table(table.to_arrow(ordered), temporary)
    temporary.replace(target)
    for stale in directory.glob("*.parquet"):
        if stale != target:
            stale.unlink()
    return target


def preferred_prediction(predictions: Iterable[Mapping[str, Any]]) -> Mapping[str, Any]:
    """Among rows of one (instance, model, trial): an answered one, then the most attempts."""
    return max(predictions, key=lambda p: (p.get("response") is not None and not p.get("error"),
                                           p.get("attempts") or 0, p.get("response") or ""))


def write_instances(rows: Iterable[Mapping[str, Any]], root: str | pathlib.Path) -> pathlib.Path:
    """Instance rows (built in memory, e.g. hand-made or from another benchmark) as a release
    directory eval-bench and run-bench read: `root/instances/suite=S/category=C/part-00000.parquet`."""
    groups: dict[tuple, list] = {}
    for row in rows:
        groups.setdefault((row["suite"], row["category"]), []).append(row)
    for (suite, category), members in sorted(groups.items()):
        directory = pathlib.Path(root) / INSTANCES.name / f"suite={urllib.parse.quote(suite, safe='')}" \
            / f"category={urllib.parse.quote(category, safe='')}"
        directory.mkdir(parents=True, exist_ok=True)
        ordered = sorted(members, key=lambda r: r["instance_id"])
        pq.write_table(INSTANCES.to_arrow(ordered), directory / "part-00000.parquet")
    return pathlib.Path(root)
