"""uvicorn, configured to hold under load and against slow or idle clients.

One event loop accepts connections (no thread per connection); route handlers run on a bounded
thread pool (`worker_threads`, set in the app's lifespan); more than `max_connections` open
connections are answered 503; the listen backlog is the usual 2048. Socket timeouts: a connection
must complete each request's headers within `header_timeout` seconds (uvicorn alone waits forever
for a half-sent request), its body within the app's body deadline, and an idle keep-alive
connection is closed after `keep_alive` seconds.
"""
from __future__ import annotations

import contextlib
import socket
import threading
from typing import Optional

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

BACKLOG = 2048
HEADER_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 512


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's headers."""

    header_timeout = HEADER_TIMEOUT_S

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_deadline()

    def connection_lost(self, exc) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def _arm_deadline(self) -> None:
        self._cancel_deadline()
        self._deadline = self.loop.call_later(self.header_timeout, self._on_deadline)

    def _cancel_deadline(self) -> None:
        deadline = getattr(self, "_deadline", None)
        if deadline is not None:
            deadline.cancel()
            self._deadline = None

    def _on_deadline(self) -> None:
        """No request in flight since the deadline was armed: the client is idle or half-sent."""
        self._deadline = None
        in_flight = self.cycle is not None and not self.cycle.response_complete
        if not in_flight and not self.transport.is_closing():
            self.transport.close()


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket (port 0: a free one); connections queue from now on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def make_server(app, *, header_timeout: Optional[float] = None, max_connections: int = MAX_CONNECTIONS,
                access_log: bool = False) -> uvicorn.Server:
    """A uvicorn server for `app`; run it with `server.run(sockets=[listening_socket(...)])`."""
    protocol = DeadlineH11Protocol
    if header_timeout is not None:
        protocol = type("DeadlineH11Protocol", (DeadlineH11Protocol,), {"header_timeout": header_timeout})
    config = uvicorn.Config(app, http=protocol, lifespan="on", backlog=BACKLOG, timeout_keep_alive=KEEP_ALIVE_S,
                            limit_concurrency=max_connections, access_log=access_log, log_level="warning",
                            server_header=False)
    return uvicorn.Server(config)


@contextlib.contextmanager
def running(app, host: str = "127.0.0.1", port: int = 0, **options):
    """Serve `app` from a background thread for the duration of the block; yields its base URL.
    The socket listens before the thread starts, so requests sent at once wait in the backlog."""
    sock = listening_socket(host, port)
    server = make_server(app, **options)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield "http://%s:%d" % sock.getsockname()[:2]
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
