"""The LLM opinion of a finished answer (the `evaluator` stage): four yes/no items with reasons.

Asked by the opinion job after SUCCESS (server.usecases.opinion), never on the answer's path. The
reply is only parsed here; rules.opinion checks it against what code found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evigate.rules.opinion import ITEMS
from evigate.server.agents.llm.client import LLMClient
from evigate.server.agents.llm.llm_settings import LLMSettings
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.deadline import Deadline
from evigate.server.settings import JsonMode

JSON = dict[str, Any]
_ITEM_SCHEMA: JSON = {
    "type": "object",
    "properties": {"value": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["value", "reason"],
}
OPINION_SCHEMA: JSON = {
    "type": "object",
    "properties": dict.fromkeys(ITEMS, _ITEM_SCHEMA),
    "required": list(ITEMS),
}


@dataclass(frozen=True)
class OpinionReply:
    data: JSON  # the model's JSON object, unchecked
    model: str
    prompt_version: str


class LLMOpinionAgent:
    def __init__(self, client: LLMClient, timeout_s: float) -> None:
        self._client = client
        self._timeout_s = timeout_s

    @classmethod
    def from_settings(
        cls,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float,
        json_mode: JsonMode = "auto",
        *,
        max_retries: int = 3,
        backoff_base: float = 0.5,
    ) -> LLMOpinionAgent:
        settings = LLMSettings(
            base_url=base_url,
            api_key=api_key,
            model=model,
            timeout_s=timeout_s,
            json_mode=json_mode,
            max_tokens=1024,
            max_retries=max_retries,
            backoff_base=backoff_base,
        )
        return cls(LLMClient(settings), timeout_s)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def ask(self, question: str, answer: str, verified_claims: list[JSON]) -> OpinionReply:
        """Raises the client's errors: LLMUnavailableError, LLMOutputError, DeadlineExceeded."""
        prompt = load_prompt("evaluator")
        payload = {"question": question, "answer": answer, "verified_claims": verified_claims}
        messages = [
            {"role": "system", "content": prompt.text},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
        ]
        # One HTTP attempt's timeout, and the client's retries, within twice that.
        deadline = Deadline.after(self._timeout_s * 2)
        data, reply = await self._client.chat_json(
            "evaluator", messages, deadline, schema_name="llm_opinion", schema=OPINION_SCHEMA
        )
        return OpinionReply(data=data, model=reply.model, prompt_version=prompt.version)
