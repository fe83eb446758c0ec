"""`scores/`: one score row per prediction."""
import pyarrow as pa

from schemas.table import Table

SCORES = Table(
    name="scores",
    partition_by=("model",),
    description="Exact and partial credit per (instance, model, prompt mode, trial), with the instance's cell "
                "(variant included) and the request's tokens and latency; parse_error when unparseable.",
    schema=pa.schema([
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("trial", pa.int32(), nullable=False),
        pa.field("suite", pa.string()),
        pa.field("category", pa.string()),
        pa.field("structure", pa.string()),
        pa.field("task", pa.string()),
        pa.field("difficulty", pa.string()),
        pa.field("length", pa.int32()),
        pa.field("variant", pa.string()),
        pa.field("prompt_mode", pa.string()),
        pa.field("exact", pa.float64()),
        pa.field("partial", pa.float64()),
        pa.field("structural", pa.float64()),
        pa.field("parsed_answer", pa.string()),
        pa.field("parse_error", pa.string()),
        pa.field("input_tokens", pa.int32()),
        pa.field("output_tokens", pa.int32()),
        pa.field("latency_s", pa.float64()),
    ]),
)
