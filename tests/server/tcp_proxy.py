"""A TCP proxy on 127.0.0.1 that a test can close (dropping every connection) and reopen on the
same port: the database "goes away" without touching the shared MariaDB server. `blackhole()` is a
partition instead: connections are still accepted but every byte is dropped silently, nothing is
forwarded or answered; `restore()` ends it (the connections it broke are reset)."""

from __future__ import annotations

import asyncio
import contextlib


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._dropping = False
        self.port = 0

    def blackhole(self) -> None:
        self._dropping = True

    def restore(self) -> None:
        self._dropping = False
        for writer in list(self._writers):  # their streams lost bytes: unusable
            writer.transport.abort()
        self._writers.clear()

    async def open(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            self._writers.clear()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._dropping:  # accept, then swallow everything
            self._writers.add(writer)
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while await reader.read(65536):
                    pass
            self._writers.discard(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update({writer, up_writer})

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    if not self._dropping:
                        dst.write(data)
                        await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers.difference_update({writer, up_writer})
