"""Settings, the secret's hygiene, and the versioned prompt files."""

from __future__ import annotations

import logging
import re

import pytest

from evigate.server.agents.llm import LLMClient, LLMSettings, LLMUnavailableError, PromptError, load_prompt
from evigate.server.agents.llm.prompt_loader import parse_prompt
from evigate.server.deadline import Deadline
from tests.agents.llm.conftest import SECRET
from tests.support.fake_openai import Error, FakeOpenAI, reply


def test_repr_and_describe_mask_the_key(settings: LLMSettings) -> None:
    for text in (
        repr(settings),
        str(settings),
        str(settings.describe()),
        f"{settings}",
        repr(LLMClient(settings)),
    ):
        assert SECRET not in text
        assert "***" in text
    assert settings.api_key == SECRET


def test_model_per_stage(settings: LLMSettings) -> None:
    assert settings.model_for("executor") == "test-executor"
    assert settings.model_for("planner") == settings.model_for("verifier") == "test-model"


def test_from_env() -> None:
    env = {
        "EVIGATE_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "EVIGATE_LLM_API_KEY": SECRET,
        "EVIGATE_LLM_COMPOSER_MODEL": "small",
        "EVIGATE_LLM_TIMEOUT_S": "12.5",
        "EVIGATE_LLM_MAX_TOOL_STEPS": "3",
        "EVIGATE_LLM_JSON_MODE": "json_object",
        "EVIGATE_LLM_MAX_RETRIES": "",
    }
    settings = LLMSettings.from_env(env)
    assert settings.model_for("composer") == "small"
    assert (settings.timeout_s, settings.max_tool_steps, settings.json_mode) == (12.5, 3, "json_object")
    assert settings.max_retries == 3
    with pytest.raises(ValueError, match="BASE_URL"):
        LLMSettings.from_env({})
    with pytest.raises(ValueError, match="EVIGATE_LLM_TIMEOUT_S"):
        LLMSettings.from_env({**env, "EVIGATE_LLM_TIMEOUT_S": "soon"})


@pytest.mark.parametrize(
    "bad",
    [{"base_url": ""}, {"json_mode": "yaml"}, {"timeout_s": 0}, {"max_retries": -1}, {"max_tokens": 0}],
)
def test_invalid_settings(bad: dict[str, object]) -> None:
    kwargs: dict[str, object] = {"base_url": "http://127.0.0.1:9/v1", **bad}
    with pytest.raises(ValueError):
        LLMSettings(**kwargs)  # type: ignore[arg-type]


async def test_key_is_sent_but_never_logged(
    client: LLMClient, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, the openai package's included
    fake.script([Error(500), reply("ok"), Error(401, f"bad key {SECRET[:6]}", type="invalid_request_error")])
    await client.chat("planner", [{"role": "user", "content": "hi"}], Deadline.after(5))
    with pytest.raises(LLMUnavailableError) as info:
        await client.chat("planner", [{"role": "user", "content": "hi"}], Deadline.after(5))
    assert SECRET not in str(info.value)
    assert fake.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert any(r.name == "evigate.llm" for r in caplog.records)
    assert SECRET not in caplog.text
    for record in caplog.records:
        assert SECRET not in repr(record.__dict__)


# -- prompts ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("stage", ["planner", "executor", "verifier", "composer"])
def test_prompts_load_with_versions(stage: str) -> None:
    prompt = load_prompt(stage)  # type: ignore[arg-type]
    assert re.fullmatch(rf"{stage}-v[1-9][0-9]*", prompt.version)
    assert not prompt.text.startswith("---")
    assert "version:" not in prompt.text


@pytest.mark.parametrize("stage", ["planner", "verifier", "composer"])
def test_json_stage_prompts_say_json(stage: str) -> None:
    # OpenAI's json_object mode rejects requests whose messages lack the lower-case word "json"
    assert "json" in load_prompt(stage).text  # type: ignore[arg-type]


def test_executor_prompt_states_the_contract() -> None:
    text = load_prompt("executor").text
    for needle in (
        "executor_evidence_v2",
        "$.alerts[i]",
        "$.logs[i]",
        "$.evidence_blocks[i]",
        "$.no_evidence",
        "$.alerts[0].state",
        "negative_observation",
        "diagnosis_summary",
        "user_facing_answer",
        "source_invocation_id",
        "retry_context",
        "at most 2",
        "wider keywords",
    ):
        assert needle in text, needle


def test_verifier_and_composer_prompts_state_their_rules() -> None:
    verifier = load_prompt("verifier").text
    assert "`low_confid` → never `PASS`" in verifier
    assert "executor_final_answer" in verifier
    composer = load_prompt("composer").text
    for needle in (
        "当前查询未检索到",
        "问题不存在",
        "已排除该问题",
        "`slots`",
        "`draft`",
        "placeholders",
    ):
        assert needle in composer
    assert "scope_contract" in load_prompt("planner").text


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("no front matter", "front matter"),
        ("---\nversion: planner-v1\n---\n", "empty body"),
        ("---\nversion: executor-v1\n---\nbody", "version must look like"),
        ("---\nversion planner-v1\n---\nbody", "bad front matter"),
    ],
)
def test_parse_prompt_errors(source: str, error: str) -> None:
    with pytest.raises(PromptError, match=error):
        parse_prompt("planner", source)


def test_unknown_stage() -> None:
    with pytest.raises(PromptError):
        load_prompt("judge")  # type: ignore[arg-type]


def test_fallback_per_stage() -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:1/v1", verifier_fallback="fail")
    assert [settings.fallback_for(stage) for stage in ("planner", "verifier")] == ["offline", "fail"]
    with pytest.raises(ValueError, match="composer_fallback: expected offline or fail"):
        LLMSettings(base_url="http://127.0.0.1:1/v1", composer_fallback="retry")  # type: ignore[arg-type]
