"""`edges/source=S/year=Y/`: one row per link from a statement to what it uses or cites."""
import pyarrow as pa

from schemas.table import Table

RELATIONS = ("uses", "cites", "restates")
METHODS = ("ref", "name", "cite", "blueprint", "text", "embedding", "llm")

EDGES = Table(
    name="edges",
    partition_by=("source", "year"),
    description="Statement -> statement (uses) and statement -> work (cites) links, with method and location.",
    schema=pa.schema([
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("year", pa.int32()),
        pa.field("src_theorem_id", pa.string(), nullable=False),
        pa.field("dst_theorem_id", pa.string()),     # null when the target is not a statement of the corpus
        pa.field("dst_label", pa.string()),          # the label (ref, blueprint) or printed name ("Lemma 2.3")
        pa.field("dst_paper_id", pa.string()),       # the cited paper as a corpus paper id ("arxiv:2101.00001")
        pa.field("dst_doi", pa.string()),            # the cited work's DOI, joined with papers.doi
        pa.field("cite_key", pa.string()),
        pa.field("relation", pa.string(), nullable=False),   # RELATIONS
        pa.field("method", pa.string(), nullable=False),     # METHODS
        pa.field("location", pa.string(), nullable=False),   # statement | proof
        pa.field("count", pa.int32(), nullable=False),
        pa.field("evidence", pa.string()),   # method llm: the words of the proof the edge rests on
        pa.field("bundle", pa.string()),   # the input (bundle or folder) it came from: names its file
    ]),
)
