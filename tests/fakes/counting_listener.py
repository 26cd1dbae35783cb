"""A loopback port that counts the connections it accepts: what should never reach the
network (a schema's ref, a reader) is counted if it does. It either holds each connection
open and never answers, so one waiting on it would hang, or closes it at once, so a fetch
fails fast."""

from __future__ import annotations

import contextlib
import socket
import threading


class CountingListener:
    def __init__(self, hold: bool = True) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self.accepted = 0
        self._hold = hold
        self._held: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.accepted += 1
            if self._hold:
                self._held.append(connection)
            else:
                connection.close()

    def close(self) -> None:
        # A close alone leaves the thread blocked in accept() on Linux: shut the socket
        # down first, so that accept() returns and the thread ends with the listener.
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        self._accepting.join()
        for connection in self._held:
            connection.close()
