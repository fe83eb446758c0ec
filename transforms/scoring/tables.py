"""Reading and writing the evaluation tables: instances in, predictions and scores as Hive Parquet.

Predictions and scores are partitioned by model; a model name becomes a directory name through
percent-encoding (`Qwen/Qwen3-8B` -> `model=Qwen%2FQwen3-8B`), which pyarrow and DuckDB decode
back. Files are written sorted by (instance_id, trial) with deterministic names, so the same
rows give the same bytes. All paths go through the storage layer (Beam FileSystems), so inputs and
outputs may be local, gs:// or s3://.
"""
from __future__ import annotations

import json
import os
import posixpath
from typing import Any, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from schemas import INSTANCES, PREDICTIONS
from schemas.table import Table
from transforms.write import files

Location = str | os.PathLike

INSTANCE_READ_COLUMNS = ("instance_id", "suite", "category", "structure", "task", "difficulty",
                         "length", "variant", "prompt", "prompt_parts", "answer", "answer_type")


class InputError(ValueError):
    """An input path or file that cannot be used (the command line reports it as a usage error)."""


def partition_path(root: Location, table: Table, model: str) -> str:
    return files.join(str(root), table.name, files.hive_dir(table.partition_by, {"model": model}))


def model_of_path(path: Location) -> str | None:
    """The model named by a `model=...` directory in the path, if any."""
    return files.hive_values(str(path), ("model",)).get("model")


def table_dir(path: Location, table: Table) -> str:
    """`path/<table>` when it holds files, else `path` itself when it is that table's directory."""
    path = str(path).rstrip("/")
    if files.list_files(files.join(path, table.name), ".parquet"):
        return files.join(path, table.name)
    if posixpath.basename(path) == table.name and files.list_files(path, ".parquet"):
        return path
    raise InputError(f"{path}: no {table.name}/ directory here")


def read_rows(directory: Location, table: Table, columns: Sequence[str] | None = None) -> list[dict]:
    """All rows of a Hive-partitioned table directory (partition columns included)."""
    return [row for path in files.list_files(str(directory), ".parquet")
            for row in read_partitioned_file(path, table, columns)]


def prediction_files(path: Location) -> list[str]:
    """The Parquet or JSONL files holding predictions at `path` (a file, or a run-bench output)."""
    path = str(path)
    if files.is_file(path):
        if not path.endswith((".jsonl", ".parquet")):
            raise InputError(f"{path}: predictions must be a .jsonl or .parquet file or a directory")
        return [path]
    if not files.list_files(path):
        raise InputError(f"{path}: no such file or directory")
    found = files.list_files(table_dir(path, PREDICTIONS), ".parquet")
    if not found:
        raise InputError(f"{path}: no prediction files under it")
    return found


def file_rows(path: str) -> int:
    """Rows a prediction or instance file holds (Parquet metadata, non-empty JSONL lines), for progress;
    0 when unreadable (reading it properly reports why)."""
    try:
        data = files.read_bytes(path)
        if path.endswith(".jsonl"):
            return sum(1 for line in data.splitlines() if line.strip())
        return pq.ParquetFile(pa.BufferReader(data)).metadata.num_rows
    except (pa.ArrowException, OSError):
        return 0


def iter_prediction_file(path: str) -> Iterator[tuple[dict | None, dict | None]]:
    """(prediction, None) for each valid record, (None, rejection) for each invalid one."""
    if path.endswith(".jsonl"):
        text = files.read_bytes(path).decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield _validated_json_line(line, f"{path}:{number}")
        return
    model = model_of_path(path)
    try:
        rows = pq.read_table(pa.BufferReader(files.read_bytes(path))).to_pylist()
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


def read_partitioned_file(path: str, table: Table, columns: Sequence[str] | None = None) -> list[dict]:
    """One Parquet file's rows with its partition columns filled in from the path."""
    data = pa.BufferReader(files.read_bytes(path))
    stored = pq.read_schema(data).names
    wanted = [c for c in (columns or table.columns) if c in stored]
    rows = pq.read_table(data, columns=wanted).to_pylist()
    partitions = files.hive_values(path, table.partition_by)
    for row in rows:
        row.update(partitions)
    return rows


REQUIRED_INSTANCE_COLUMNS = ("instance_id", "answer", "answer_type")


def instance_files(path: Location) -> list[str]:
    """The Parquet files of a release's instances table (the release directory or instances/),
    each checked to be readable and to hold the columns scoring needs."""
    found = files.list_files(table_dir(path, INSTANCES), ".parquet")
    if not found:
        raise InputError(f"{path}: the instances table has no Parquet files")
    for file in found:
        try:
            names = pq.read_schema(pa.BufferReader(files.read_bytes(file))).names
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{file}: not a readable Parquet file ({exc})") from None
        missing = [c for c in REQUIRED_INSTANCE_COLUMNS if c not in names]
        if missing:
            raise InputError(f"{file}: instance file lacks columns {', '.join(missing)}")
    return found


def parquet_payload(table: Table, rows: Sequence[Mapping[str, Any]], key) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table.to_arrow(sorted(rows, key=key)), sink)
    return sink.getvalue().to_pybytes()


def write_partition(rows: Sequence[Mapping[str, Any]], table: Table, root: Location,
                    model: str, file_name: str = "part-00000.parquet") -> str:
    """Write one model's rows, sorted by (instance_id, trial), replacing that partition's files
    (the new file replaces atomically; the others are removed after it)."""
    directory = partition_path(root, table, model)
    target = files.join(directory, file_name)
    files.replace_bytes(target, parquet_payload(table, rows, lambda r: (r["instance_id"], r["trial"])))
    files.delete([p for p in files.list_files(directory, ".parquet") if p != target])
    return target


def preferred_prediction(predictions: Iterable[Mapping[str, Any]]) -> Mapping[str, Any]:
    """Among rows of one (instance, model, trial): an answered one, then the most attempts."""
    return max(predictions, key=lambda p: (p.get("response") is not None and not p.get("error"),
                                           p.get("attempts") or 0, p.get("response") or ""))


def write_instances(rows: Iterable[Mapping[str, Any]], root: Location) -> str:
    """Instance rows (built in memory, e.g. hand-made or from another benchmark) as a release
    directory eval-bench and run-bench read: `root/instances/suite=S/category=C/part-00000.parquet`."""
    groups: dict[tuple, list] = {}
    for row in rows:
        groups.setdefault((row["suite"], row["category"]), []).append(row)
    for (suite, category), members in sorted(groups.items()):
        directory = files.join(str(root), INSTANCES.name,
                               files.hive_dir(INSTANCES.partition_by, {"suite": suite, "category": category}))
        files.write_bytes(files.join(directory, "part-00000.parquet"),
                          parquet_payload(INSTANCES, members, lambda r: r["instance_id"]))
    return str(root)
