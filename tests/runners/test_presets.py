import pytest

from schemas.errors import UsageError
from runners.presets import PRESETS, apply_preset


def _opts(args):
    return dict(a[2:].split("=", 1) for a in args)


def test_local_names_the_fn_api_runner_so_no_prism_download_is_tried():
    assert _opts(apply_preset("local", []))["runner"] == "FnApiRunner"


def test_local_parallel_uses_one_process_per_core():
    opts = _opts(apply_preset("local-parallel", []))
    assert opts["direct_running_mode"] == "multi_processing"
    assert int(opts["direct_num_workers"]) >= 1


def test_explicit_options_override_the_preset():
    args = apply_preset("portable", ["--job_endpoint=localhost:1234", "--extra=1"])
    assert [a for a in args if a.startswith("--job_endpoint")] == ["--job_endpoint=localhost:1234"]
    assert args[-1] == "--extra=1"


def test_flink_preset_targets_a_session_cluster_with_external_workers():
    opts = _opts(apply_preset("flink", []))
    assert opts["runner"] == "FlinkRunner" and opts["environment_type"] == "EXTERNAL"
    assert opts["flink_master"] and opts["flink_version"]


def test_dataflow_needs_project_region_and_temp_location():
    with pytest.raises(UsageError, match="--project"):
        apply_preset("dataflow", [])
    args = apply_preset("dataflow", ["--project=p", "--region=r", "--temp_location=gs://b/t"])
    assert _opts(args)["sdk_container_image"]


def test_unknown_preset_is_a_usage_error():
    with pytest.raises(UsageError):
        apply_preset("spark-on-the-moon", [])


def test_every_preset_parses_as_beam_options():
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
    for name in PRESETS:
        extra = ["--project=p", "--region=r", "--temp_location=gs://b/t"] if name == "dataflow" else []
        assert PipelineOptions(apply_preset(name, extra)).view_as(StandardOptions).runner


def test_auto_runs_in_parallel_only_on_big_local_inputs_with_idle_cores():
    from runners.presets import PARALLEL_FROM_BYTES, auto_preset

    assert auto_preset(PARALLEL_FROM_BYTES, cores=4, load=0.5) == "local-parallel"
    assert auto_preset(PARALLEL_FROM_BYTES - 1, cores=4, load=0.0) == "local"
    assert auto_preset(PARALLEL_FROM_BYTES * 10, cores=2, load=0.0) == "local"      # measured: 1.01x on 2 idle cores
    assert auto_preset(PARALLEL_FROM_BYTES * 10, cores=4, load=1.5) == "local"      # 2.5 cores to spare
    assert auto_preset(PARALLEL_FROM_BYTES * 10, cores=16, load=7.0) == "local-parallel"
    assert auto_preset(None, cores=16, load=0.0) == "local"          # remote or missing inputs: size unknown


def test_build_corpus_defaults_to_auto_and_lists_it():
    import argparse

    from runners.cmd_build_corpus import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args([]).preset == "auto"
    assert parser.parse_args(["--preset", "local"]).preset == "local"


def test_input_bytes_counts_files_globs_and_folders(tmp_path):
    from runners.presets import input_bytes

    (tmp_path / "a.tar").write_bytes(b"x" * 100)
    (tmp_path / "b.tar").write_bytes(b"x" * 50)
    (tmp_path / "book" / "chapters").mkdir(parents=True)
    (tmp_path / "book" / "main.tex").write_bytes(b"x" * 7)
    (tmp_path / "book" / "chapters" / "one.tex").write_bytes(b"x" * 3)
    assert input_bytes([str(tmp_path / "*.tar")]) == 150
    assert input_bytes([str(tmp_path / "a.tar"), str(tmp_path / "book")]) == 110
    assert input_bytes(["gs://bucket/arXiv_src_2101_001.tar"]) is None
    assert input_bytes([str(tmp_path / "missing.tar")]) is None
