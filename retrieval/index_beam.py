"""The index job's Beam transform (`retrieval.index_job` plans it and finishes after it): the
new theorem files read into the stored vectors file, the quantizer trained on a sample of every
file when there is none, the new shards encoded in parallel. The DoFns call `index_steps`."""
from __future__ import annotations

import pathlib
from typing import Optional

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from retrieval import index_steps, vector_index
from retrieval.vector_index import Shard

_ENCODED = beam.metrics.Metrics.counter("index", "vectors_encoded")


class EncodeShard(beam.DoFn):
    """Encode one stored file with the trained quantizer (deserialized once a worker)."""

    def __init__(self, directory: str):
        self.directory = directory
        self._encoder: Optional[vector_index.ShardEncoder] = None

    def process(self, read: index_steps.ReadShard, quantizer: bytes):
        if self._encoder is None or not (quantizer is self._encoder.quantizer or quantizer == self._encoder.quantizer):
            self._encoder = vector_index.ShardEncoder(quantizer)
        encoded = index_steps.encode_shard(self._encoder, pathlib.Path(self.directory), read)
        _ENCODED.inc(encoded)
        yield read.shard.base, encoded


class BuildVectorShards(beam.PTransform):
    """Shards to encode -> (base, vectors encoded); trains the quantizer first when `quantizer` is None."""

    def __init__(self, root: pathlib.Path, directory: pathlib.Path, column: str, dim: int, all_shards: list[Shard],
                 new_shards: list[Shard], quantizer: Optional[bytes], sample_fraction: float, lists: int):
        self.root, self.directory, self.column, self.dim = root, directory, column, dim
        self.all_shards, self.new_shards = all_shards, new_shards
        self.quantizer, self.sample_fraction, self.lists = quantizer, sample_fraction, lists

    def expand(self, pbegin):
        new = {s.base for s in self.new_shards}
        training = self.quantizer is None
        reads = (pbegin
                 | "Files" >> beam.Create(self.all_shards if training else self.new_shards)
                 | "Read" >> beam.Map(lambda shard: index_steps.read_shard(
                     self.root, self.directory, self.column, self.dim, shard, shard.base in new,
                     self.sample_fraction if training else None)))
        if training:
            quantizer = (reads
                         | "Samples" >> beam.Map(lambda read: read.sample)
                         | "Gather" >> beam.combiners.ToList()
                         | "Train" >> beam.Map(lambda samples: index_steps.train(self.directory, samples, self.lists)))
        else:
            quantizer = pbegin | "Quantizer" >> beam.Create([self.quantizer])
        return (reads
                | "NewFiles" >> beam.Filter(lambda read: read.shard.base in new)
                | "Encode" >> beam.ParDo(EncodeShard(str(self.directory)), quantizer=beam.pvalue.AsSingleton(quantizer)))


def run_job(options, root: pathlib.Path, directory: pathlib.Path, column: str, dim: int, shards: list[Shard],
            new_shards: list[Shard], quantizer: Optional[bytes], fraction: float, lists: int) -> None:
    """Run `BuildVectorShards` with `options` (PipelineOptions, or their flags)."""
    if not isinstance(options, PipelineOptions):
        options = PipelineOptions(list(options))
    pipeline = beam.Pipeline(options=options)
    _ = pipeline | "BuildVectorShards" >> BuildVectorShards(root, directory, column, dim, shards, new_shards,
                                                             quantizer, fraction, lists)
    pipeline.run().wait_until_finish()
