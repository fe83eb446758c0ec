"""Runner presets: a name expands to documented Beam pipeline options; explicit options win.

    local           FnApiRunner in one process (named explicitly: Beam 2.77's DirectRunner would first
                    try to download the Prism binary).
    local-parallel  FnApiRunner with one SDK worker process per core (multi_processing). Each worker
                    imports the pipeline anew (about 4 CPU-seconds and 8 s of wall time more than
                    local per wave). `build-corpus --embed-model none` on 2 cores, median of 2
                    interleaved runs (benchmarks/runner_speedup.py --copies ...): shared with other
                    jobs (load 6.5-9.5), 0.53x the speed of local on 2.8 MB of LaTeX (0.9 MB of
                    bundles), 0.68x on 11 MB (3.6), 1.03x on 33 MB (10.9), 1.01x on 100 MB (32.8: 81 s
                    against 82 s of wall time, 48 against 38 CPU-seconds); on the same 2 cores idle
                    (load 0.3-0.9), 1.01x on 100 MB (26.4 s against 26.7 s, 35.6 against 26.4
                    CPU-seconds). On 2 cores it does not pay off at any size measured.
    auto            (build-corpus, the default) local-parallel when the local inputs hold at least
                    PARALLEL_FROM_BYTES on disk (about 100 MB of LaTeX in arXiv bundles) and at least
                    PARALLEL_IDLE_CORES cores are idle (cores minus the one-minute load average), else
                    local. Two idle cores were measured not to pay (above); from three on is an
                    estimate: the workers' start-up is fixed while the extraction divides among them.
    portable        PortableRunner against a Beam job service (--job_endpoint) with SDK workers from
                    an EXTERNAL worker pool: the way Flink and Spark clusters run Python workers.
    flink           FlinkRunner against a Flink session cluster (--flink_master), Python workers from
                    an EXTERNAL worker pool beside each task manager (see runners/flink/README.md).
    dataflow        DataflowRunner (Runner v2) with the project's SDK container image; --project,
                    --region and --temp_location must be given (or set THMFORGE_GCP_PROJECT,
                    THMFORGE_GCP_REGION, THMFORGE_GCS_TEMP).
"""
from __future__ import annotations

import glob
import os
import socket
from typing import Callable

from schemas.errors import UsageError

BEAM_VERSION = "2.77.0"
DEFAULT_CONTAINER_IMAGE = os.environ.get("THMFORGE_CONTAINER_IMAGE", "thmforge-beam:latest")


def _local() -> list[str]:
    return ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]


def _local_parallel() -> list[str]:
    return ["--runner=FnApiRunner", "--direct_running_mode=multi_processing",
            f"--direct_num_workers={os.cpu_count() or 1}"]


def _portable() -> list[str]:
    return ["--runner=PortableRunner", "--job_endpoint=localhost:8099",
            "--environment_type=EXTERNAL", "--environment_config=localhost:50000"]


def _flink() -> list[str]:
    return ["--runner=FlinkRunner", "--flink_master=localhost:8081", "--flink_version=2.2",
            f"--parallelism={os.cpu_count() or 1}", "--environment_type=EXTERNAL",
            "--environment_config=localhost:50000"]


def _dataflow() -> list[str]:
    args = ["--runner=DataflowRunner", "--experiments=use_runner_v2", "--machine_type=n2-standard-4",
            f"--sdk_container_image={DEFAULT_CONTAINER_IMAGE}", "--sdk_location=container",
            "--max_num_workers=100"]
    for flag, env in (("project", "THMFORGE_GCP_PROJECT"), ("region", "THMFORGE_GCP_REGION"),
                      ("temp_location", "THMFORGE_GCS_TEMP")):
        if os.environ.get(env):
            args.append(f"--{flag}={os.environ[env]}")
    return args


PRESETS: dict[str, Callable[[], list[str]]] = {
    "local": _local,
    "local-parallel": _local_parallel,
    "portable": _portable,
    "flink": _flink,
    "dataflow": _dataflow,
}

REQUIRED = {"dataflow": ("project", "region", "temp_location")}

AUTO = "auto"
PARALLEL_FROM_BYTES = 32_000_000   # input bytes on disk from which auto may pick local-parallel (module docstring)
PARALLEL_IDLE_CORES = 3            # idle cores auto needs for local-parallel: on 2 idle cores it ran 1.01x


def input_bytes(inputs: list[str]) -> int | None:
    """Bytes on disk of the inputs (globs expanded, folders walked); None when one is remote or
    missing, so its size is unknown before the run."""
    total = 0
    for pattern in inputs:
        if "://" in pattern:
            return None
        paths = glob.glob(pattern) if glob.has_magic(pattern) else [pattern]
        if not paths or not all(os.path.exists(path) for path in paths):
            return None
        for path in paths:
            if os.path.isdir(path):
                total += sum(os.path.getsize(os.path.join(folder, name))
                             for folder, _, names in os.walk(path) for name in names)
            else:
                total += os.path.getsize(path)
    return total


def auto_preset(size: int | None, cores: int | None = None, load: float | None = None) -> str:
    """`auto`: local-parallel for local inputs of at least `PARALLEL_FROM_BYTES` when at least
    `PARALLEL_IDLE_CORES` cores are idle (cores minus the one-minute load average: on two idle cores
    the workers' start-up ate the gain), else local (small inputs, a busy or small machine, or a size
    not known before the run)."""
    cores = (os.cpu_count() or 1) if cores is None else cores
    load = os.getloadavg()[0] if load is None else load
    big = size is not None and size >= PARALLEL_FROM_BYTES
    return "local-parallel" if big and cores - load >= PARALLEL_IDLE_CORES else "local"


def _flag_name(arg: str) -> str | None:
    return arg[2:].split("=", 1)[0].replace("-", "_") if arg.startswith("--") else None


def apply_preset(name: str | None, beam_args: list[str]) -> list[str]:
    """Beam arguments for preset `name` with `beam_args` appended; an option the user gave wins."""
    if name is None:
        name = "local"
    if name not in PRESETS:
        raise UsageError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    given = {_flag_name(a) for a in beam_args} - {None}
    expanded = [a for a in PRESETS[name]() if _flag_name(a) not in given] + list(beam_args)
    present = {_flag_name(a) for a in expanded}
    missing = [f"--{flag}" for flag in REQUIRED.get(name, ()) if flag not in present]
    if missing:
        raise UsageError(f"preset {name} needs {', '.join(missing)}")
    return expanded


# Options naming a service the runner submits to: checked before the run, so a missing cluster is
# one line instead of a traceback from deep inside the runner.
_SERVICES = {"flink_master": "a Flink cluster (runners/flink/README.md)",
             "job_endpoint": "a Beam job service"}


def check_services(flags: list[str]) -> list[str]:
    """`flags`, after a UsageError unless every host:port service they name accepts a connection."""
    values = {_flag_name(a): a.split("=", 1)[1] for a in flags if a.startswith("--") and "=" in a}
    if values.get("runner") not in ("FlinkRunner", "PortableRunner"):
        return flags
    for flag, what in _SERVICES.items():
        host, _, port = values.get(flag, "").rpartition(":")
        if not (host and port.isdigit()):
            continue                # [auto], [local], embed: the runner starts its own
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
        except OSError as exc:
            raise UsageError(f"--{flag}={host}:{port}: nothing answers there ({exc.strerror or exc}); "
                             f"start {what} or choose another --preset") from None
    return flags


def add_preset_argument(parser, auto: bool = False) -> None:
    """--preset; with `auto` (commands whose inputs have a size) also `auto`, the default."""
    parser.add_argument("--preset", choices=sorted([*PRESETS, *([AUTO] if auto else [])]),
                        default=AUTO if auto else "local",
                        help=f"runner preset (default: {AUTO if auto else 'local'}); explicit Beam options override it. "
                             + (f"auto: local-parallel when the local inputs hold at least {PARALLEL_FROM_BYTES // 10**6} MB "
                                f"on disk (about 100 MB of LaTeX) and at least {PARALLEL_IDLE_CORES} cores are idle, else local; " if auto else "")
                             + "local: FnApiRunner in-process; local-parallel: one worker process per core "
                             "(on 2 cores 0.53x of local on 2.8 MB of LaTeX, 1.01x on 100 MB, busy or idle); "
                             "portable: job service + EXTERNAL worker pool; flink: FlinkRunner; "
                             "dataflow: DataflowRunner with the project's container")
