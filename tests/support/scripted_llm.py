"""The scripted OpenAI-compatible server the llm agents' tests run against, as fixtures (registered
for every test by tests/conftest.py): `script` (what each stage answers, tests/support/llm_script.py),
`fake` (the HTTP server answering by it) and `agents` (the llm backend pointed at it)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from evigate.server.agents.base import AgentBackend
from evigate.server.agents.llm import build_llm_backend
from tests.support import llm_script as s
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def script() -> s.StageScript:
    return s.StageScript()


@pytest.fixture
def fake(script: s.StageScript) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=script) as server:
        yield server


@pytest.fixture
async def agents(fake: FakeOpenAI) -> AsyncIterator[AgentBackend]:
    backend = build_llm_backend(s.settings(fake.base_url))
    yield backend
    await backend.aclose()
