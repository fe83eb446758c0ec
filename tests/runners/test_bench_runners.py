"""The benchmark pipeline on the portable path (job service + EXTERNAL worker pool) and translated
for Dataflow offline: the same release as the local run, and the job graph Dataflow would get."""
import filecmp
import json

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.portability.api import beam_runner_api_pb2
from apache_beam.runners.dataflow.dataflow_runner import DataflowRunner

from pipelines import bench
from runners.local_services import portable_services
from runners.presets import apply_preset
from transforms.bench.registry import all_tasks
from transforms.bench.release import release_cells

pytestmark = pytest.mark.slow
SUITES = ("main", "spatial", "natural", "code")


def test_portable_run_equals_local_run(tmp_path):
    local = bench.run(str(tmp_path / "local"), seed=7, per_cell=1, suites=SUITES,
                      beam_args=apply_preset("local", []))
    with portable_services() as services:
        portable = bench.run(str(tmp_path / "portable"), seed=7, per_cell=1, suites=SUITES,
                             beam_args=apply_preset("portable", services.beam_args()))
    assert portable["content_hash"] == local["content_hash"]
    assert portable["counts"] == local["counts"]
    assert filecmp.cmp(tmp_path / "local" / "instances.jsonl", tmp_path / "portable" / "instances.jsonl",
                       shallow=False)


def dataflow_dry_run(build, extra_args=()):
    """Translate a pipeline for Dataflow without credentials or network; returns the runner's proto."""
    args = apply_preset("dataflow", ["--project=thmforge-ci", "--region=us-central1",
                                     "--temp_location=gs://thmforge-ci/tmp", "--dry_run=True", *extra_args])
    runner = DataflowRunner()
    pipeline = beam.Pipeline(runner=runner, options=PipelineOptions(args))
    build(pipeline)
    pipeline.run()
    return runner.proto_pipeline, args


def container_images(proto) -> set[str]:
    return {beam_runner_api_pb2.DockerPayload.FromString(env.payload).container_image
            for env in proto.components.environments.values() if env.urn == "beam:env:docker:v1"}


def test_dataflow_dry_run_translates_the_bench_pipeline():
    all_tasks()
    cells = release_cells(SUITES, 1)
    proto, args = dataflow_dry_run(lambda p: p | "Release" >> bench.GenerateRelease(cells, 0, "gs://thmforge-ci/out"))
    names = {t.unique_name for t in proto.components.transforms.values()}
    for stage in ("Release/Shards", "Release/Spread", "Release/Build", "Release/Group", "Release/Write"):
        assert stage in names
    image = dict(a[2:].split("=", 1) for a in args)["sdk_container_image"]
    assert container_images(proto) == {image}
