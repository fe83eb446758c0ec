"""The corpus job as the FnApiRunner fuses it: every table's rows are spilled in the stage that
extracts them, so none wait whole in the runner's buffers between stages (issue 18: peak memory
grew with the bundle while the edges and failures of a whole bundle waited there for their writer)."""
import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from pipelines.corpus import BuildCorpus, CorpusConfig, stage_configs
from transforms.corpus import ReadConfig

OUTPUT = "/tmp/thmforge-stages-test"        # never written: the pipeline is only translated


def fused_stages(config: CorpusConfig) -> list[set[str]]:
    """The names of the transforms of each stage the FnApiRunner would run."""
    pipeline = beam.Pipeline(options=PipelineOptions([]))
    _ = pipeline | "BuildCorpus" >> BuildCorpus(config)
    _, stages = FnApiRunner().create_stages(pipeline.to_runner_api())
    return [{transform.unique_name for transform in stage.transforms} for stage in stages]


@pytest.mark.parametrize("metadata", [None, "/in/arxiv-metadata-oai-snapshot.json"])
def test_every_table_is_spilled_in_the_extraction_stage(metadata):
    describe, _ = stage_configs(PipelineOptions([]), OUTPUT, "none")
    config = CorpusConfig(inputs=("/in/arXiv_src_2101_001.tar",), output=OUTPUT,
                          read=ReadConfig(staging=f"{OUTPUT}/_staging"), metadata=metadata, describe=describe)
    stages = fused_stages(config)
    (extraction,) = [names for names in stages if "BuildCorpus/ExtractStatements/ParDo(ExtractPapers)" in names]
    for table in ("Papers", "Theorems", "Failures", "Edges"):
        assert any(name.startswith(f"BuildCorpus/Write{table}/Spill") for name in extraction), table
    spills = [name for names in stages for name in names if "/Spill" in name and "/SpillDir" not in name]
    assert len(spills) == len(set(spills))          # each spill step runs in one stage only
