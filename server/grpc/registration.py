"""Registers a servicer's methods on the grpc.aio server, each handler wrapped once.

The handlers are built from the service descriptor (request and response classes, streaming or not)
the way the generated `add_*Servicer_to_server` functions build them, and registered both as a
generic handler and as registered methods (grpc's faster lookup), as those functions do.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message_factory import GetMessageClass

from evigate.server.grpc.interceptors import Wrap


def register(server: grpc.aio.Server, service: ServiceDescriptor, servicer: Any, wrap: Wrap) -> None:
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for method in service.methods:
        if method.client_streaming:
            raise ValueError(f"{method.full_name}: client streaming is not served by this registry")
        request = GetMessageClass(method.input_type)
        response = GetMessageClass(method.output_type)
        make = (
            grpc.unary_stream_rpc_method_handler
            if method.server_streaming
            else grpc.unary_unary_rpc_method_handler
        )
        handler = make(
            getattr(servicer, method.name),
            request_deserializer=request.FromString,
            response_serializer=response.SerializeToString,
        )
        handlers[method.name] = wrap(f"/{service.full_name}/{method.name}", handler)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    server.add_registered_method_handlers(service.full_name, handlers)
