"""`instances/suite=S/category=C/`: benchmark instances with ground truth and the spec behind it."""
import pyarrow as pa

from schemas.table import Table

SUITES = ("main", "spatial", "natural", "code")
DIFFICULTIES = ("easy", "medium", "hard")

INSTANCES = Table(
    name="instances",
    partition_by=("suite", "category"),
    description="Benchmark instances: prompt parts, typed answer (JSON text) and the machine-readable spec.",
    schema=pa.schema([
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("suite", pa.string(), nullable=False),
        pa.field("category", pa.string(), nullable=False),
        pa.field("structure", pa.string(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("difficulty", pa.string(), nullable=False),
        pa.field("length", pa.int32()),
        pa.field("index", pa.int32()),
        pa.field("seed", pa.int64()),
        pa.field("variant", pa.string()),
        pa.field("prompt", pa.string()),
        pa.field("prompt_parts", pa.string()),
        pa.field("answer", pa.string()),
        pa.field("answer_type", pa.string()),
        pa.field("spec", pa.string()),
        pa.field("generator_version", pa.string()),
    ]),
)
