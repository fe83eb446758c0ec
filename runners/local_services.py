"""Start Beam's portable job service and an EXTERNAL SDK worker pool on free loopback ports.

This is the execution path Flink and Spark clusters use for Python (job service -> runner -> SDK
workers from a worker pool), run on one machine. The worker pool starts `python` from PATH, so the
services are started with this interpreter's directory first on PATH. Both are stopped on exit,
also when the body raises.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"service exited with code {proc.returncode} before listening on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s:.0f} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@dataclasses.dataclass(frozen=True)
class PortableEndpoints:
    job_endpoint: str
    worker_pool: str

    def beam_args(self) -> list[str]:
        """Options that point the `portable` preset at these services."""
        return [f"--job_endpoint={self.job_endpoint}", "--environment_type=EXTERNAL",
                f"--environment_config={self.worker_pool}"]


@contextlib.contextmanager
def portable_services(timeout_s: float = 60.0) -> Iterator[PortableEndpoints]:
    """Run a local job service and worker pool for the duration of the `with` block."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    job_port, pool_port = free_port(), free_port()
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="thmforge-portable-") as staging:
        try:
            for cmd, port in (
                ([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
                  f"--service_port={pool_port}"], pool_port),
                ([sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
                  f"--port={job_port}", f"--staging_dir={staging}"], job_port),
            ):
                proc = subprocess.Popen(cmd, env=env, start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                procs.append(proc)
                _wait_for_port(port, proc, timeout_s)
            yield PortableEndpoints(f"localhost:{job_port}", f"localhost:{pool_port}")
        finally:
            for proc in reversed(procs):
                _stop(proc)
