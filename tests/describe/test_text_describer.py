"""The offline `text` describer through the Beam transform."""
from apache_beam.options.pipeline_options import PipelineOptions

from transforms.describe import DescribeConfig
from transforms.describe.text import text_description

from describe_helpers import make_row, run_describe


def test_text_description_is_the_plain_text_with_title():
    assert text_description(make_row(0, "All primes $p$ are odd.", "Bad")) == "Bad: All primes p are odd."
    assert text_description(make_row(0, "  Two\n  lines. ")) == "Two lines."
    assert text_description(make_row(0, "", statement_text=None)) is None


def test_text_describer_pipeline_keeps_every_row(rows, tmp_path):
    rows = rows + [make_row(99, "", statement_text="", _abstract="An abstract.", bundle="/in/arXiv_src_2101_001.tar")]
    config = DescribeConfig.from_options(PipelineOptions([]))
    assert config.describer == "text" and not config.uses_llm
    out, failures, totals = run_describe(rows, config, tmp_path)
    assert len(out) == len(rows)
    by_id = {r["theorem_id"]: r for r in out}
    assert by_id["p1#000"]["description"] == "Every bounded monotone sequence of real numbers converges."
    assert by_id["p1#000"]["description_model"] == "text"
    assert by_id["p1#099"]["description"] is None and "_abstract" not in by_id["p1#099"]
    assert [f["error_class"] for f in failures] == ["empty-statement"]
    assert failures[0]["bundle"] == "/in/arXiv_src_2101_001.tar"     # names its input's failures file
    assert totals["run_requests"] == 0
