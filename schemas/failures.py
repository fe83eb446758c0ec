"""`failures/`: every failure or recorded problem, with the stage and place it happened."""
import pyarrow as pa

from schemas.table import Table

FAILURES = Table(
    name="failures",
    description="Failures and recorded non-fatal events: stage, error class, message, location.",
    schema=pa.schema([
        pa.field("paper_id", pa.string()),
        pa.field("theorem_id", pa.string()),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("error_class", pa.string(), nullable=False),
        pa.field("message", pa.string()),
        pa.field("location", pa.string()),
        pa.field("fatal", pa.bool_()),
        pa.field("bundle", pa.string()),   # the input (bundle or folder) it came from: names its file
    ]),
)
