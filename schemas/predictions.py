"""`predictions/`: raw model responses, one row per (instance, model, trial)."""
import pyarrow as pa

from schemas.table import Table

PREDICTIONS = Table(
    name="predictions",
    partition_by=("model",),
    description="Raw model responses with usage; error set when the request finally failed.",
    schema=pa.schema([
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("trial", pa.int32(), nullable=False),
        pa.field("prompt_mode", pa.string()),
        pa.field("response", pa.string()),
        pa.field("input_tokens", pa.int32()),
        pa.field("output_tokens", pa.int32()),
        pa.field("latency_s", pa.float64()),
        pa.field("attempts", pa.int32()),
        pa.field("error", pa.string()),
    ]),
)
