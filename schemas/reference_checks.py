"""`reference_checks/`: an imported release's ground truth beside thmforge's own answer."""
import pyarrow as pa

from schemas.table import Table

REFERENCE_CHECKS = Table(
    name="reference_checks",
    description="Per imported instance (import-dsr): where it came from, thmforge's answer to the same spec, "
                "whether it equals the imported ground truth and, if not, why.",
    schema=pa.schema([
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("source_file", pa.string()),
        pa.field("source_line", pa.int32()),
        pa.field("task_id", pa.string()),
        pa.field("agrees", pa.bool_()),
        pa.field("thmforge_answer", pa.string()),
        pa.field("reason", pa.string()),
    ]),
)
