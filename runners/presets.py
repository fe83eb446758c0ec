"""Runner presets: a name expands to documented Beam pipeline options; explicit options win.

    local           FnApiRunner in one process (named explicitly: Beam 2.77's DirectRunner would first
                    try to download the Prism binary).
    local-parallel  FnApiRunner with one SDK worker process per core (multi_processing). Each worker
                    imports the pipeline anew (about 20 CPU-seconds, 5 s of wall time more than
                    local), so it pays off from about 5 MB of LaTeX: on 2 loaded cores it ran at 0.8x
                    the speed of local on one 2.8 MB bundle, 1.76x on twelve (33 MB) and 1.98x on
                    37 (about 100 MB: 335 s against 665 s of wall time).
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
PARALLEL_FROM_BYTES = 10_000_000   # input bytes on disk from which local-parallel is the faster (module docstring)


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


def auto_preset(size: int | None, cores: int | None = None) -> str:
    """`auto`: local-parallel for local inputs of at least `PARALLEL_FROM_BYTES` when there are
    two cores or more, else local (small inputs, one core, or a size not known before the run)."""
    cores = os.cpu_count() if cores is None else cores
    return "local-parallel" if size is not None and size >= PARALLEL_FROM_BYTES and (cores or 1) >= 2 else "local"


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
                                "on disk and there are 2 cores or more, else local; " if auto else "")
                             + "local: FnApiRunner in-process; local-parallel: one worker process per core, "
                             "PARALLEL_HELP; "
                             "portable: job service + EXTERNAL worker pool; flink: FlinkRunner; "
                             "dataflow: DataflowRunner with the project's container")
