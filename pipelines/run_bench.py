"""run-bench: a release's prompts -> an OpenAI-compatible chat endpoint -> predictions/model=M/.

    instance files ─► requests (instance x trial, not answered yet) ─► Reshuffle ─► QueryModel
    QueryModel: asks through `transforms.llm.LLMCaller` (up to `concurrency` in flight, retries,
                backoff, throttling); finished rows every 10 s (or 256 rows)
                ─► predictions/model=M/chunk-<hash>.parquet
    then:       chunks + earlier part file ─► compact ─► predictions/model=M/part-00000.parquet

Resumable: answers are flushed to chunk files while the run goes (names derived from their keys,
so a retried bundle overwrites instead of duplicating), and a rerun skips every (instance, trial)
that already has a response; failures are asked again. At the end the partition is compacted
into one file sorted by (instance_id, trial), keeping an answered row over a failed one.
Concurrency (`concurrency` requests in flight) and the rate limit are per worker process.
Every request that finally fails still yields a row: `response` null, `error` saying why.
A `Selection` (tasks, suites, difficulties, N per cell) is resolved to instance ids on the
launcher before the pipeline starts; each worker prints progress (done/total, rate, ETA).
Each run appends its options, selection and counts to OUTPUT/runs.jsonl.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import time
from typing import Any, Iterable, Mapping, Optional, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms.window import GlobalWindows

from schemas import INSTANCES, PREDICTIONS
from transforms.bench import prompts
from transforms.bench.selection import CELL_COLUMNS, Selection, SelectionError, select
from transforms.llm import MAX_RESPONSE_BYTES, ChatClient, LLMCaller, RetryPolicy
from transforms.progress import Progress
from transforms.scoring.tables import (instance_files, parquet_payload, partition_path, preferred_prediction,
                                       read_partitioned_file, write_partition)
from transforms.write import files

REQUEST_COLUMNS = ("instance_id", "prompt", "prompt_parts")
FLUSH_ROWS = 256                # a chunk file holds at most this many rows ...
FLUSH_SECONDS = 10.0            # ... and is written at least this often while answers come in
RUN_LOG = "runs.jsonl"          # one line per run: the options it ran with and what it got


class RunBenchError(ValueError):
    """A run that cannot start as asked (bad mode, output of another prompt mode)."""


@dataclasses.dataclass(frozen=True)
class RunConfig:
    endpoint: str
    model: str
    trials: int = 3
    prompt_mode: str = prompts.DEFAULT_MODE
    description: str = prompts.DEFAULT_DESCRIPTION
    temperature: Optional[float] = None
    max_tokens: Optional[int] = None
    reasoning_effort: Optional[str] = None
    concurrency: int = 4
    rate_limit: Optional[float] = None        # requests per second per worker; None: unlimited
    timeout_s: float = 120.0                  # total per request: connect, headers and the whole answer
    max_response_bytes: int = MAX_RESPONSE_BYTES   # a larger answer is cut off and recorded as too large
    max_attempts: int = 5
    initial_backoff_s: float = 0.5
    seed: Optional[int] = None                # sent as `seed` = seed + trial, so sampled trials replay

    def __post_init__(self):
        if self.prompt_mode not in prompts.MODES:
            raise RunBenchError(f"unknown prompt mode {self.prompt_mode!r}; choose one of "
                                f"{', '.join(prompts.MODES + tuple(prompts.MODE_ALIASES))}")
        if self.description not in prompts.DESCRIPTIONS:
            raise RunBenchError(f"unknown description {self.description!r}; choose one of {', '.join(prompts.DESCRIPTIONS)}")
        for name in ("trials", "concurrency", "max_attempts"):
            if getattr(self, name) < 1:
                raise RunBenchError(f"{name.replace('_', '-')} must be at least 1")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise RunBenchError("rate-limit must be positive")
        if self.timeout_s <= 0:
            raise RunBenchError("timeout must be positive")
        if self.max_response_bytes < 1:
            raise RunBenchError("max-response-bytes must be positive")
        if not self.endpoint.startswith(("http://", "https://")):
            raise RunBenchError(f"endpoint must be an http:// or https:// URL, got {self.endpoint!r}")

    def caller(self) -> LLMCaller:
        extra = {"reasoning_effort": self.reasoning_effort} if self.reasoning_effort else None
        client = ChatClient(self.endpoint, self.model, timeout_s=self.timeout_s, temperature=self.temperature,
                            max_tokens=self.max_tokens, extra=extra, max_response_bytes=self.max_response_bytes)
        return LLMCaller(client, RetryPolicy(max_attempts=self.max_attempts, initial_backoff_s=self.initial_backoff_s),
                         concurrency=self.concurrency, rate_limit=self.rate_limit, thread_name="run-bench")


def prompt_for(instance: Mapping[str, Any], mode: str, description: str) -> str:
    """The instance's prompt in `mode`, rendered from its stored parts (the stored prompt when none)."""
    if instance.get("prompt_parts"):
        return prompts.render(json.loads(instance["prompt_parts"]), mode, description)
    if mode == prompts.DEFAULT_MODE and description == prompts.DEFAULT_DESCRIPTION and instance.get("prompt"):
        return instance["prompt"]
    raise ValueError("the instance stores no prompt parts to render this mode from")


def pending_requests(instance: Mapping[str, Any], config: RunConfig, answered: frozenset,
                     selected: Optional[frozenset] = None) -> Iterable[dict]:
    """One request per trial the output does not answer yet (of the selected instances, when a
    selection is given); a prompt that cannot render fails early."""
    if selected is not None and instance["instance_id"] not in selected:
        return
    todo = [t for t in range(config.trials) if (instance["instance_id"], t) not in answered]
    if not todo:
        return
    try:
        prompt, problem = prompt_for(instance, config.prompt_mode, config.description), None
    except (ValueError, KeyError, TypeError) as exc:
        prompt, problem = None, f"prompt: {exc}"
    for trial in todo:
        yield {"instance_id": instance["instance_id"], "trial": trial, "prompt": prompt, "problem": problem}


def ask(caller: LLMCaller, request: Mapping[str, Any], config: RunConfig) -> dict:
    """One prediction row: the response with its usage, or the final error after retries."""
    row = {"instance_id": request["instance_id"], "model": config.model, "trial": request["trial"],
           "prompt_mode": config.prompt_mode, "response": None, "input_tokens": None,
           "output_tokens": None, "latency_s": None, "attempts": 0, "error": request.get("problem")}
    if row["error"]:
        return row
    seed = None if config.seed is None else {"seed": config.seed + row["trial"]}
    try:
        answer = caller.ask([{"role": "user", "content": request["prompt"]}], extra=seed)
    except Exception as exc:  # a client bug must still leave a row behind, never lose the request
        row["error"] = f"unexpected {type(exc).__name__}: {exc}"
        return row
    row.update(attempts=answer.attempts, latency_s=answer.latency_s)
    if answer.error is not None:
        row["error"] = answer.describe_error()
    else:
        row.update(response=answer.result.content, input_tokens=answer.result.prompt_tokens,
                   output_tokens=answer.result.completion_tokens)
    return row


def chunk_name(rows: Sequence[Mapping[str, Any]]) -> str:
    keys = "\n".join(sorted(f"{r['instance_id']}\x1f{r['trial']}" for r in rows))
    return f"chunk-{hashlib.sha256(keys.encode()).hexdigest()[:20]}.parquet"


def write_chunk(rows: Sequence[Mapping[str, Any]], output: str, model: str) -> None:
    """Persist finished rows at once (atomic rename), so an interrupted run loses at most a chunk."""
    target = files.join(partition_path(output, PREDICTIONS, model), chunk_name(rows))
    files.replace_bytes(target, parquet_payload(PREDICTIONS, rows, lambda r: (r["instance_id"], r["trial"])))


class QueryModel(beam.DoFn):
    """Keeps up to `concurrency` requests in flight; emits and flushes rows as they finish."""

    def __init__(self, config: RunConfig, output: str, total: Optional[int] = None):
        super().__init__()
        self.config, self.output, self.total = config, output, total
        self.answered = beam.metrics.Metrics.counter("run_bench", "answered")
        self.failed = beam.metrics.Metrics.counter("run_bench", "failed")

    def setup(self):
        self.caller = self.config.caller()
        self.progress = Progress(f"run-bench {self.config.model} (this worker)", total=self.total, unit="requests")
        self.failed_rows = 0

    def start_bundle(self):
        self.in_flight: set = set()
        self.unflushed: list = []
        self.flushed_at = time.monotonic()

    def process(self, request):
        self.in_flight.add(self.caller.submit(ask, self.caller, request, self.config))
        if len(self.in_flight) >= 2 * self.config.concurrency:
            yield from self._collect(concurrent.futures.FIRST_COMPLETED)

    def finish_bundle(self):
        for row in self._collect(concurrent.futures.ALL_COMPLETED):
            yield GlobalWindows.windowed_value(row)
        self._flush()

    def teardown(self):
        self.caller.close()
        self.progress.close()

    def _collect(self, return_when):
        if not self.in_flight:
            return
        done, self.in_flight = concurrent.futures.wait(self.in_flight, return_when=return_when)
        for future in sorted(done, key=lambda f: (f.result()["instance_id"], f.result()["trial"])):
            row = future.result()
            (self.failed if row["error"] else self.answered).inc()
            self.failed_rows += bool(row["error"])
            self.progress.advance(note=f"{self.failed_rows} failed" if self.failed_rows else "")
            self.unflushed.append(row)
            yield row
        if len(self.unflushed) >= FLUSH_ROWS or time.monotonic() - self.flushed_at >= FLUSH_SECONDS:
            self._flush()

    def _flush(self):
        if self.unflushed:
            write_chunk(self.unflushed, self.output, self.config.model)
            self.unflushed = []
        self.flushed_at = time.monotonic()


class RunBench(beam.PTransform):
    """Instance files in; prediction rows out (already persisted under `output`)."""

    def __init__(self, instance_paths: Sequence[str], config: RunConfig, output: str, answered: frozenset,
                 selected: Optional[frozenset] = None, total: int = 0):
        super().__init__()
        self.instance_paths, self.config, self.output, self.answered = instance_paths, config, output, answered
        self.selected, self.total = selected, total

    def expand(self, pipeline):
        return (pipeline
                | "InstanceFiles" >> beam.Create(self.instance_paths)
                | "ReadInstances" >> beam.FlatMap(read_partitioned_file, INSTANCES, REQUEST_COLUMNS)
                | "Requests" >> beam.FlatMap(pending_requests, self.config, self.answered, self.selected)
                | "Spread" >> beam.Reshuffle()
                | "Query" >> beam.ParDo(QueryModel(self.config, self.output, self.total)))


def existing_predictions(output: str, model: str) -> list[dict]:
    return [row for path in files.list_files(partition_path(output, PREDICTIONS, model), ".parquet")
            for row in read_partitioned_file(path, PREDICTIONS)]


def answered_keys(rows: Iterable[Mapping[str, Any]], prompt_mode: str, model: str) -> frozenset:
    """(instance_id, trial) already answered; answers of another prompt mode are an error."""
    answered = frozenset((r["instance_id"], r["trial"]) for r in rows if r.get("response") is not None
                         and not r.get("error"))
    modes = {r.get("prompt_mode") for r in rows if r.get("response") is not None} - {None}
    if modes and modes != {prompt_mode}:
        raise RunBenchError(f"the output already holds {model}'s answers in prompt mode "
                            f"{', '.join(sorted(modes))}; use another --output (or --model label) for {prompt_mode}")
    return answered


def compact(output: str, model: str) -> list[dict]:
    """Merge the partition's chunk files into one sorted file (an answered row beats a failure)."""
    by_key: dict[tuple, list] = {}
    for row in existing_predictions(output, model):
        by_key.setdefault((row["instance_id"], row["trial"]), []).append(row)
    rows = [dict(preferred_prediction(group)) for group in by_key.values()]
    if rows:
        write_partition(rows, PREDICTIONS, output, model)
    return rows


def selected_instances(paths: Sequence[str], selection: Selection) -> tuple[Optional[frozenset], int]:
    """(the selected instance ids, or None for all; how many instances that is)."""
    rows = [row for path in paths for row in read_partitioned_file(path, INSTANCES, CELL_COLUMNS)]
    if selection.everything:
        return None, len(rows)
    try:
        chosen = select(rows, selection)
    except SelectionError as exc:
        raise RunBenchError(str(exc)) from None
    return chosen, len(chosen)


def run(instances: str, output: str, config: RunConfig, beam_args: Sequence[str] = (),
        selection: Selection = Selection()) -> dict[str, Any]:
    """Ask what is not answered yet (of the selection), compact, and return counts for the command line."""
    paths = instance_files(instances)
    selected, count = selected_instances(paths, selection)
    answered = answered_keys(existing_predictions(output, config.model), config.prompt_mode, config.model)
    wanted = {(i, t) for i in selected for t in range(config.trials)} if selected is not None else None
    total = count * config.trials - len(answered if wanted is None else answered & wanted)
    started = time.monotonic()
    with beam.Pipeline(options=PipelineOptions(list(beam_args))) as pipeline:
        _ = pipeline | "RunBench" >> RunBench(paths, config, output, answered, selected, total)
    rows = compact(output, config.model)
    failed = sum(1 for r in rows if r.get("error"))
    summary = {"predictions": len(rows), "answered": len(rows) - failed, "failed": failed,
               "resumed": len(answered), "asked": len(rows) - len(answered),
               "seconds": round(time.monotonic() - started, 2)}
    log = files.join(output, RUN_LOG)
    entry = json.dumps({"finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "instances": str(instances), "config": dataclasses.asdict(config),
                        "selection": selection.describe(), "selected_instances": count, **summary},
                       sort_keys=True) + "\n"
    files.replace_bytes(log, (files.read_bytes(log) if files.exists(log) else b"") + entry.encode())   # no appends on object stores
    return summary
