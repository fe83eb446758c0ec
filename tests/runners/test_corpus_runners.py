"""The corpus pipeline on the portable path (job service + EXTERNAL worker pool, as on Flink):
its tables equal a local run's."""
import pytest

from runners.cli import main
from runners.local_services import portable_services
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow


def build(output, preset_args):
    tars = sorted(str(p) for p in (SAMPLES / "arxiv").glob("*.tar"))
    code = main(["build-corpus", "--input", *tars,
                 "--metadata", str(SAMPLES / "arxiv" / "arxiv-metadata-oai-snapshot.json"),
                 "--output", str(output), "--no-progress", *preset_args])
    assert code == 0


def table_rows(output, table):
    import duckdb

    from schemas import FAILURES, PAPERS, theorems_table

    spec = {"papers": PAPERS, "theorems": theorems_table(), "failures": FAILURES}[table]
    con = duckdb.connect()
    has_files = any((output / table).rglob("*.parquet"))
    con.execute(spec.view_sql(str(output)) if has_files else spec.empty_view_sql())
    order = ", ".join(spec.columns[:4])
    return con.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()


def test_portable_run_equals_local_run(tmp_path):
    build(tmp_path / "local", ["--preset", "local"])
    with portable_services() as services:
        build(tmp_path / "portable", ["--preset", "portable", *services.beam_args()])
    for table in ("papers", "theorems", "failures"):
        local, portable = table_rows(tmp_path / "local", table), table_rows(tmp_path / "portable", table)
        assert portable == local, table
    assert len(table_rows(tmp_path / "local", "theorems")) > 10


def test_dataflow_dry_run_translates_the_corpus_pipeline(tmp_path):
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.corpus import BuildCorpus, CorpusConfig, stage_configs
    from tests.runners.test_bench_runners import container_images, dataflow_dry_run
    from transforms.corpus import ReadConfig

    output = "gs://thmforge-ci/corpus"
    describe, embed = stage_configs(PipelineOptions([]), output, "sentence-transformers/all-MiniLM-L6-v2")
    # Local inputs: ReadFromText checks at construction that its file exists, which on gs:// needs
    # credentials; the job graph is the same.
    config = CorpusConfig(inputs=tuple(sorted(str(p) for p in (SAMPLES / "arxiv").glob("*.tar"))),
                          output=output, read=ReadConfig(staging=output + "/_staging"),
                          metadata=str(SAMPLES / "arxiv" / "arxiv-metadata-oai-snapshot.json"),
                          describe=describe, embed=embed, gpu_accelerator=GPU)
    proto, args = dataflow_dry_run(lambda p: p | "BuildCorpus" >> BuildCorpus(config))
    names = {t.unique_name for t in proto.components.transforms.values()}
    for stage in ("BuildCorpus/Sources/Index", "BuildCorpus/Sources/JoinMetadata",
                  "BuildCorpus/ExtractStatements", "BuildCorpus/Describe", "BuildCorpus/Embed",
                  "BuildCorpus/WritePapers", "BuildCorpus/WriteTheorems", "BuildCorpus/WriteFailures"):
        assert stage in names, stage
    image = dict(a[2:].split("=", 1) for a in args)["sdk_container_image"]
    assert container_images(proto) == {image}
    envs = proto.components.environments
    gpu_stages = {t.unique_name.split("/")[1] for t in proto.components.transforms.values()
                  if t.environment_id and envs[t.environment_id].resource_hints.get(ACCELERATOR) == GPU.encode()}
    assert gpu_stages == {"Embed"}, "only the model step asks for GPU workers"


GPU = "type:nvidia-l4;count:1;install-nvidia-driver"
ACCELERATOR = "beam:resources:accelerator:v1"
