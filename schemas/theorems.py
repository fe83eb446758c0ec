"""`theorems/source=S/year=Y/`: one row per theorem-like statement."""
import pyarrow as pa

from schemas.table import Table

KINDS = (
    "theorem", "lemma", "proposition", "corollary", "definition", "conjecture", "claim", "remark",
    "example", "exercise", "fact", "observation", "assumption", "axiom", "notation", "problem",
    "question", "hypothesis", "other",
)

DEFAULT_EMBEDDING_DIM = 384


def embedding_type(dim: int) -> pa.DataType:
    return pa.list_(pa.float32(), dim)


THEOREMS = Table(
    name="theorems",
    partition_by=("source", "year"),
    description="Theorem-like statements with rendering, description and embedding.",
    schema=pa.schema([
        pa.field("theorem_id", pa.string(), nullable=False),
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("year", pa.int32()),
        pa.field("ordinal", pa.int32()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("env_name", pa.string()),
        pa.field("display_name", pa.string()),
        pa.field("number", pa.string()),
        pa.field("title", pa.string()),
        pa.field("label", pa.string()),
        pa.field("tag", pa.string()),
        pa.field("section_path", pa.list_(pa.string())),
        pa.field("file", pa.string()),
        pa.field("line", pa.int32()),
        pa.field("statement_latex_raw", pa.string()),
        pa.field("statement_latex", pa.string()),
        pa.field("statement_text", pa.string()),
        pa.field("slogan", pa.string()),
        pa.field("proof_latex", pa.string()),
        pa.field("proof_text", pa.string()),               # the proof in plain text, rendered like statement_text
        pa.field("formal_decls", pa.list_(pa.string())),   # Lean declarations (leanblueprint `\lean{...}`)
        pa.field("formal_status", pa.string()),            # mathlib | proved | stated | not-ready; null: no blueprint
        pa.field("content_hash", pa.string()),
        pa.field("description", pa.string()),
        pa.field("description_model", pa.string()),
        pa.field("description_template", pa.string()),
        pa.field("description_context", pa.string()),
        pa.field("description_input_tokens", pa.int32()),
        pa.field("description_output_tokens", pa.int32()),
        pa.field("embedding", embedding_type(DEFAULT_EMBEDDING_DIM)),
        pa.field("embedding_model", pa.string()),
        pa.field("statement_embedding", embedding_type(DEFAULT_EMBEDDING_DIM)),
        pa.field("url", pa.string()),
        pa.field("bundle", pa.string()),   # the input (bundle or folder) it came from: names its file
    ]),
)


def theorems_table(dim: int = DEFAULT_EMBEDDING_DIM) -> Table:
    """The theorems table for an embedding model of dimension `dim`."""
    return THEOREMS.with_field("embedding", embedding_type(dim)).with_field(
        "statement_embedding", embedding_type(dim)
    )
