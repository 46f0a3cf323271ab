"""A minimal agent as other teams write one: an OpenAI-compatible model offered the MCP server's
tools, each tool call it asks for run over MCP and its result handed back, until it answers."""

from __future__ import annotations

import json
from typing import Any

from mcp import ClientSession
from openai import AsyncOpenAI

MAX_TURNS = 8


def openai_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """MCP tools as OpenAI function-calling tools: the same names, descriptions and schemas."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema},
        }
        for t in tools
    ]


async def run_agent(
    model: AsyncOpenAI, mcp: ClientSession, question: str
) -> tuple[str, list[dict[str, Any]]]:
    """The model's final answer and the transcript (every message, tool results included)."""
    tools = openai_tools((await mcp.list_tools()).tools)
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(MAX_TURNS):
        completion = await model.chat.completions.create(model="agent", messages=messages, tools=tools)  # type: ignore[arg-type]
        message = completion.choices[0].message
        calls = message.tool_calls or []
        messages.append(
            {
                "role": "assistant",
                "content": message.content,
                "tool_calls": [c.model_dump() for c in calls] or None,
            }
        )
        if not calls:
            return message.content or "", messages
        for c in calls:
            result = await mcp.call_tool(c.function.name, json.loads(c.function.arguments))  # type: ignore[union-attr]
            text = "".join(getattr(block, "text", "") for block in result.content)
            messages.append({"role": "tool", "tool_call_id": c.id, "content": text})
    raise AssertionError(f"no answer after {MAX_TURNS} turns")
