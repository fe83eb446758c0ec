"""A RunInference model handler for sentence-transformers over theorem rows.

One RunInference batch (`rows_per_call` rows, many model batches) becomes one `encode` call
(each row's template texts, plus statements when asked); a summed template's vector is the
normalized weighted sum of its components' vectors. `encode` sorts its texts by length before cutting model
batches, so a wide window pads little: the Beam path does the work of a plain `encode` loop. The model is loaded
once per worker process (RunInference's shared handle), or once per machine when configured.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from apache_beam.ml.inference.base import ModelHandler, PredictionResult

from transforms.embed.encoder import Encoder
from transforms.embed.representation import COMPONENT_WEIGHTS, COMPONENTS, combine, component_texts


def statement_text(row: dict) -> str:
    return (row.get("statement_text") or row.get("statement_latex") or "").strip()


class SentenceTransformerRowHandler(ModelHandler[dict, PredictionResult, Encoder]):
    """rows -> PredictionResult(row, (embedding, statement_embedding or None)) as float32 numpy vectors."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def load_model(self) -> Encoder:
        return Encoder(self.config.encoder_config())

    def run_inference(self, batch: Sequence[dict], model: Encoder,
                      inference_args: Optional[dict[str, Any]] = None) -> Iterable[PredictionResult]:
        parts = len(COMPONENTS.get(self.config.template, (self.config.template,)))
        texts = [text for row in batch for text in component_texts(row, self.config.template)]
        if self.config.embed_statements:
            texts += [statement_text(row) for row in batch]
        vectors = model.encode_documents(texts)
        n = len(batch)
        documents = vectors[:n * parts].reshape(n, parts, -1)
        embeddings = documents[:, 0] if parts == 1 else combine(
            [documents[:, i] for i in range(parts)], COMPONENT_WEIGHTS[self.config.template])
        return [PredictionResult(example=row, inference=(embeddings[i], vectors[n * parts + i]
                                                         if n * parts < len(vectors) else None),
                                 model_id=self.config.model)
                for i, row in enumerate(batch)]

    def batch_elements_kwargs(self) -> dict:
        return {"min_batch_size": self.config.rows_per_call, "max_batch_size": self.config.rows_per_call}

    def share_model_across_processes(self) -> bool:
        return self.config.share_across_processes

    def get_num_bytes(self, batch: Sequence[dict]) -> int:
        return sum(len(text) for row in batch for text in component_texts(row, self.config.template))
