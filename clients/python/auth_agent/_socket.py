"""A socket agent's connection (``auth-agent serve --socket``), in the shape of
the ``subprocess.Popen`` the client otherwise drives: ``stdin``/``stdout`` are
the socket, there is no stderr, and "the process ends" when the connection
does (``shutdown``/``exit`` end the connection only, never the agent)."""

import asyncio
import io
import os
import socket
import struct
import sys
from typing import Optional


class SocketConnection:
    def __init__(self, path: str, timeout: float) -> None:
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.settimeout(timeout)
            self._socket.connect(path)
            self._socket.settimeout(None)
            uid, self.pid = self._peer()
            # Logins type passwords into it: a socket another user serves is not this user's agent.
            if uid is not None and uid not in (os.getuid(), 0):
                raise PermissionError(f"it is served by uid {uid}, not by this user")
        except OSError:
            self._socket.close()
            raise
        self.stdin = self._socket.makefile("wb")
        self.stdout = self._socket.makefile("rb")
        self.stderr = _NoStderr(self._socket)
        self.returncode: Optional[int] = None

    def _peer(self) -> "tuple[Optional[int], int]":
        """The serving process's uid and pid (Linux ``SO_PEERCRED``); unknown elsewhere."""
        if not sys.platform.startswith("linux"):
            return None, 0
        credentials = self._socket.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _ = struct.unpack("3i", credentials)
        return uid, pid

    def poll(self) -> Optional[int]:
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        """Ends this side's writing; the agent then closes the connection, which the reader sees."""
        try:
            self._socket.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.returncode = 0
        return 0

    def kill(self) -> None:
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.returncode = 0


class _NoStderr(io.RawIOBase):
    """A socket agent's stderr is its own: nothing to read here. The client closes
    it last of all, which is when the socket itself is closed."""

    def __init__(self, connection: socket.socket) -> None:
        super().__init__()
        self._connection = connection

    def readable(self) -> bool:
        return True

    def readline(self, size: Optional[int] = -1) -> bytes:
        return b""

    def close(self) -> None:
        self._connection.close()
        super().close()


class AsyncSocketConnection:
    """``SocketConnection`` for ``AsyncAuthAgent``: the shape of an asyncio
    subprocess (``stdin`` a StreamWriter, ``stdout``/``stderr`` StreamReaders)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stdin = writer
        self.stdout = reader
        self.stderr = asyncio.StreamReader()
        self.stderr.feed_eof()
        connection = writer.get_extra_info("socket")
        self.pid = 0
        if connection is not None and sys.platform.startswith("linux"):
            credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            self.pid, uid, _ = struct.unpack("3i", credentials)
            if uid not in (os.getuid(), 0):
                writer.close()
                raise PermissionError(f"it is served by uid {uid}, not by this user")
        self.returncode: Optional[int] = None

    @classmethod
    async def open(cls, path: str) -> "AsyncSocketConnection":
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 24)
        return cls(reader, writer)

    async def wait(self) -> int:
        """The connection ends with this side's close (``exit`` closes the agent's)."""
        self.returncode = 0
        return 0

    def kill(self) -> None:
        self.stdin.transport.abort()
        self.returncode = 0
