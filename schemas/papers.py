"""`papers/`: one row per input submission, whatever became of it (ok, failed or skipped)."""
import pyarrow as pa

from schemas.table import Table

STATUSES = ("ok", "failed", "skipped")

PAPERS = Table(
    name="papers",
    description="One row per input submission; status says whether its statements were extracted.",
    schema=pa.schema([
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_id", pa.string()),
        pa.field("version", pa.string()),
        pa.field("title", pa.string()),
        pa.field("authors", pa.list_(pa.string())),
        pa.field("categories", pa.list_(pa.string())),
        pa.field("primary_category", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("abstract", pa.string()),
        pa.field("license", pa.string()),
        pa.field("doi", pa.string()),
        pa.field("journal_ref", pa.string()),
        pa.field("created", pa.string()),
        pa.field("updated", pa.string()),
        pa.field("url", pa.string()),
        pa.field("bundle", pa.string()),
        pa.field("member", pa.string()),
        pa.field("main_file", pa.string()),
        pa.field("encoding", pa.string()),
        pa.field("n_files", pa.int32()),
        pa.field("n_bytes", pa.int64()),
        pa.field("n_statements", pa.int32()),
        pa.field("has_metadata", pa.bool_()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("status_reason", pa.string()),
    ]),
)
