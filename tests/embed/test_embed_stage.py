"""EmbedStatements through RunInference with the packaged all-MiniLM-L6-v2 (offline)."""
import glob
import json

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from transforms.embed import EmbedConfig, EmbedStatements, Encoder, default_prompts, model_dimension
from transforms.embed.representation import BLEND, CONTEXT, PLAIN, combine, representation_text
from transforms.embed.transform import _FailedBatch

ROWS = [
    {"theorem_id": "t1", "paper_id": "p", "description": "A bounded monotone sequence converges.",
     "statement_text": "Every bounded monotone sequence of reals converges.", "file": "a.tex", "line": 3},
    {"theorem_id": "t2", "paper_id": "p", "description": None,
     "statement_text": "There are infinitely many primes.", "file": "a.tex", "line": 9},
    {"theorem_id": "t3", "paper_id": "p", "description": None, "statement_text": "  ", "file": "a.tex", "line": 12},
]


@pytest.fixture(scope="module")
def encoder():
    return Encoder(EmbedConfig().encoder_config())


def run_embed(rows, config, tmp_path):
    pipeline = beam.Pipeline(runner=FnApiRunner(), options=PipelineOptions([]))
    out, failures = pipeline | beam.Create(rows) | EmbedStatements(config)
    out | "J1" >> beam.Map(json.dumps) | "W1" >> beam.io.WriteToText(str(tmp_path / "rows"))
    failures | "J2" >> beam.Map(json.dumps) | "W2" >> beam.io.WriteToText(str(tmp_path / "failures"))
    pipeline.run().wait_until_finish()

    def read(prefix):
        return [json.loads(line) for p in sorted(glob.glob(str(tmp_path / prefix) + "*")) for line in open(p)]

    return {r["theorem_id"]: r for r in read("rows")}, read("failures")


def test_embeds_description_else_statement_and_optionally_the_statement(tmp_path, encoder, capsys):
    config = EmbedConfig.from_options(PipelineOptions(["--embed-statements", "--embed-batch-size", "2"]),
                                      progress=True)
    rows, failures = run_embed(ROWS, config, tmp_path)
    assert "thmforge: embedding: 2 statements" in capsys.readouterr().err
    assert set(rows) == {"t1", "t2", "t3"}
    expected = encoder.encode_documents([ROWS[0]["description"], ROWS[1]["statement_text"],
                                         ROWS[0]["statement_text"]])
    t1, t2 = np.array(rows["t1"]["embedding"]), np.array(rows["t2"]["embedding"])
    assert t1.shape == (384,) and abs(np.linalg.norm(t1) - 1) < 1e-4
    assert np.allclose(t1, expected[0], atol=1e-4) and np.allclose(t2, expected[1], atol=1e-4)
    assert np.allclose(rows["t1"]["statement_embedding"], expected[2], atol=1e-4)
    assert rows["t1"]["embedding_model"] == config.model
    assert rows["t3"]["embedding"] is None and rows["t3"]["statement_embedding"] is None
    assert [(f["theorem_id"], f["stage"], f["error_class"]) for f in failures] == [("t3", "embed", "empty-text")]


def test_statement_embedding_is_off_by_default_and_none_disables(tmp_path):
    rows, _ = run_embed(ROWS[:1], EmbedConfig(), tmp_path / "default")
    assert rows["t1"]["statement_embedding"] is None and len(rows["t1"]["embedding"]) == 384
    disabled = EmbedConfig.from_options(PipelineOptions(["--embed-model", "none"]))
    assert not disabled.enabled and disabled.manifest() == {"model": None, "dim": None}
    rows, failures = run_embed(ROWS, disabled, tmp_path / "none")
    assert len(rows) == 3 and all(r["embedding"] is None for r in rows.values()) and failures == []


def test_context_template_embeds_paper_section_and_heading_before_the_body(tmp_path, encoder):
    row = {"theorem_id": "t1", "paper_id": "p", "title": "Monotone convergence", "display_name": "Theorem",
           "number": "2.3", "section_path": ["Analysis", " Sequences "], "_paper_title": "Real Analysis",
           "statement_text": "Every bounded monotone sequence of reals converges.",
           "description": "Monotone convergence: Every bounded monotone sequence of reals converges."}
    expected = ("Real Analysis > Analysis > Sequences | Theorem 2.3 (Monotone convergence): "
                "Every bounded monotone sequence of reals converges.")
    assert representation_text(row, CONTEXT) == expected
    assert representation_text({**row, "description": "An LLM's words."}, CONTEXT).endswith("(Monotone convergence): An LLM's words.")
    assert representation_text({"statement_text": "x"}, CONTEXT) == "x" and representation_text({}, CONTEXT) == ""
    config = EmbedConfig.from_options(PipelineOptions(["--embed-template", CONTEXT]))
    assert config.manifest()["template"] == CONTEXT and "section path" in config.manifest()["embedded_text"]
    rows, _ = run_embed([row], config, tmp_path)
    assert np.allclose(rows["t1"]["embedding"], encoder.encode_documents([expected])[0], atol=1e-4)
    with pytest.raises(ValueError, match="--embed-template"):
        EmbedConfig(template="nope")


def test_blend_template_embeds_the_weighted_normalized_sum_of_the_plain_and_context_vectors(tmp_path, encoder):
    row = {"theorem_id": "t1", "paper_id": "p", "title": "Monotone convergence", "display_name": "Theorem",
           "section_path": ["Sequences"], "_paper_title": "Real Analysis",
           "statement_text": "Every bounded monotone sequence of reals converges.", "description": None}
    texts = [representation_text(row, PLAIN), representation_text(row, CONTEXT)]
    assert texts[0] != texts[1]
    config = EmbedConfig.from_options(PipelineOptions(["--embed-template", BLEND, "--embed-statements"]))
    assert config.manifest()["template"] == BLEND and "normalized sum of 0.2 x" in config.manifest()["embedded_text"]
    rows, failures = run_embed([row, ROWS[2]], config, tmp_path)
    plain, context, statement = encoder.encode_documents(texts + [row["statement_text"]])
    stored = np.array(rows["t1"]["embedding"])
    blended = 0.2 * plain + 0.8 * context
    assert np.allclose(stored, blended / np.linalg.norm(blended), atol=1e-4)
    assert stored @ plain < 0.9999 and stored @ context < 0.9999   # neither component alone
    assert np.allclose(rows["t1"]["statement_embedding"], statement, atol=1e-4)
    assert rows["t3"]["embedding"] is None and [f["error_class"] for f in failures] == ["empty-text"]
    weighted = combine([np.array([1.0, 0.0]), np.array([0.0, 2.0])], (0.25, 0.75))
    assert np.allclose(weighted, np.array([1.0, 3.0]) / np.sqrt(10))


def test_manifest_records_what_search_needs():
    config = EmbedConfig(batch_size=16)
    manifest = config.manifest()
    assert manifest["model"] == "sentence-transformers/all-MiniLM-L6-v2" and manifest["dim"] == 384
    assert manifest["query_prompt"] == "" and manifest["normalize"] is True and manifest["batch_size"] == 16
    assert manifest["template"] == "context-v1"
    assert model_dimension("all-MiniLM-L6-v2") == 384 and model_dimension("/nonexistent") is None


def test_instruction_prompts_for_known_families_and_overrides():
    query, document = default_prompts("Qwen/Qwen3-Embedding-8B")
    assert query.startswith("Instruct: Given an informal description") and query.endswith("\nQuery: ")
    assert document == ""
    assert default_prompts("google/embeddinggemma-300m")[1] == "title: none | text: "
    assert default_prompts("all-MiniLM-L6-v2") == ("", "")
    config = EmbedConfig.from_options(PipelineOptions(
        ["--embed-model", "Qwen/Qwen3-Embedding-0.6B", "--embed-query-prompt", "Q: ", "--embed-device", "cuda",
         "--embed-fp16", "--embed-batch-size", "256"]))
    encoder_config = config.encoder_config()
    assert (encoder_config.query_prompt, encoder_config.document_prompt) == ("Q: ", "")
    assert (encoder_config.device, encoder_config.fp16, encoder_config.batch_size) == ("cuda", True, 256)


def test_prompts_change_the_vectors(encoder):
    plain = encoder.encode_queries(["primes"])[0]
    prompted = Encoder(EmbedConfig(query_prompt="query: ").encoder_config()).encode_queries(["primes"])[0]
    assert float(plain @ prompted) < 0.999


def test_failed_batches_keep_rows_and_record_failures():
    batch = [dict(ROWS[0]), dict(ROWS[1])]
    out = list(_FailedBatch().process((batch, (RuntimeError, "RuntimeError('CUDA out of memory')", []))))
    rows = [o for o in out if not isinstance(o, beam.pvalue.TaggedOutput)]
    failures = [o.value for o in out if isinstance(o, beam.pvalue.TaggedOutput)]
    assert [r["theorem_id"] for r in rows] == ["t1", "t2"] and all(r["embedding"] is None for r in rows)
    assert [f["error_class"] for f in failures] == ["RuntimeError", "RuntimeError"]
    assert "out of memory" in failures[0]["message"] and failures[0]["stage"] == "embed"
