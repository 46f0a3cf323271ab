"""A bare HTTP/2 gRPC client (h2 over a socket) for what grpcio refuses to send: header values
with invalid UTF-8 or control bytes. grpcio validates metadata on the client side, so a hostile
client has to be written at this level."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.events


@dataclass(frozen=True)
class RawReply:
    grpc_status: int | None  # None: no grpc-status (the stream or connection was refused)
    reset: bool  # the server reset the stream or closed the connection
    headers: dict[bytes, bytes]


def raw_unary(
    address: str,
    path: str,
    body: bytes,
    extra_headers: Sequence[tuple[bytes, bytes]] = (),
    timeout: float = 10,
) -> RawReply:
    host, port = address.rsplit(":", 1)
    config = h2.config.H2Configuration(
        client_side=True,
        header_encoding=None,
        validate_outbound_headers=False,
        normalize_outbound_headers=False,
    )
    conn = h2.connection.H2Connection(config=config)
    headers: dict[bytes, bytes] = {}
    reset = False
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        stream = conn.get_next_available_stream_id()
        conn.send_headers(
            stream,
            [
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":path", path.encode()),
                (b":authority", address.encode()),
                (b"content-type", b"application/grpc"),
                (b"te", b"trailers"),
                *extra_headers,
            ],
        )
        conn.send_data(stream, b"\x00" + len(body).to_bytes(4, "big") + body, end_stream=True)
        sock.sendall(conn.data_to_send())
        done = False
        while not done:
            try:
                data = sock.recv(65536)
            except OSError:
                reset = True
                break
            if not data:
                reset = True
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
                    headers.update(dict(event.headers))
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamReset | h2.events.ConnectionTerminated):
                    reset, done = True, True
                if isinstance(event, h2.events.StreamEnded):
                    done = True
            sock.sendall(conn.data_to_send())
    status = headers.get(b"grpc-status")
    return RawReply(int(status) if status is not None else None, reset, headers)
