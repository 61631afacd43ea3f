"""Agent turns over LSP that mostly talk: streaming, the result, usage, todos, the prompt
cache, progress, retries, maxSteps and the missing API key."""

from __future__ import annotations

import json

import pytest
from agent_e2e import calls, last_user_text, tool_call, tool_results
from anthropic_models import MODELS
from anthropic_server import reply, status_error
from harness import full_caps, lsp_session

pytestmark = [
    pytest.mark.asyncio(loop_scope="package"),
    pytest.mark.filterwarnings("ignore:Unknown progress token"),  # a request's own token: never created
]


async def test_text_turn_streams_deltas_and_completes(agent):
    a = await agent()
    a.fake.push(reply(["Hel", "lo ", "there"], usage={"input_tokens": 40, "output_tokens": 7}))
    result = await a.turn("say hi")
    s = a.s
    assert result["mode"] == "nl", result
    assert result["status"] == "completed"
    assert result["reply"] == "Hello there"
    assert result["error"] is None
    assert [e["text"] for e in s.events_of("assistantDelta")] == ["Hel", "lo ", "there"]
    assert [e["text"] for e in s.events_of("assistantMessage")] == ["Hello there"]
    assert [e["status"] for e in s.events_of("turnFinished")] == ["completed"]
    assert [e["text"] for e in s.events_of("userMessage")] == ["say hi"]
    usage = s.events_of("contextUsage")
    assert usage, "no contextUsage event"
    # the limit is the window of the model the request went to, as the Models API lists it
    # (the table agrees), not the 200k fallback for a model nobody knows
    window = next(m.max_input for m in MODELS if m.id == a.fake.message_requests[-1].body["model"])
    assert usage[-1]["usedTokens"] >= 47 and usage[-1]["limitTokens"] == window == 1_000_000
    # one session, one submission, seq rising by one
    assert {e["sessionId"] for e in s.events} == {result["sessionId"]}
    assert {e["submissionId"] for e in s.events} == {result["submissionId"]}
    seqs = [e["seq"] for e in s.events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    # the model saw the prompt, streamed
    (request,) = a.fake.message_requests
    assert request.body["stream"] is True
    assert "test-key" in (request.headers.get("x-api-key", "") + request.headers.get("authorization", ""))
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "say hi", "cache_control": {"type": "ephemeral"}}]}
    ]


async def test_progress_reports_thinking_running_and_editing(agent):
    a = await agent(permissions="yolo")
    a.fake.push(
        calls(tool_call("bash", {"command": "echo progress-check"}, "toolu_p1")),
        calls(tool_call("write", {"path": "prog.py", "content": "X = 1\n"}, "toolu_p2")),
        reply("done"),
    )
    token = "progress-token-1"
    result = await a.s.execute("coder.input", {"text": "run it"}, token=token)
    assert result["status"] == "completed", result
    reports = a.s.progress_of(token)
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end", kinds
    assert reports[0].cancellable is True
    messages = [r.message for r in reports]
    assert "Thinking" in messages
    assert "Running: echo progress-check" in messages
    assert "Editing prog.py" in messages
    assert reports[-1].message == "Done"
    assert "progress-check" in "".join(e["chunk"] for e in a.s.events_of("shellOutput"))


async def test_simple_request_has_no_todo(agent):
    a = await agent()
    a.fake.push(reply("4"))
    result = await a.turn("what is 2+2?")
    assert result["reply"] == "4"
    assert a.s.events_of("todoUpdated") == []
    assert "system-reminder" not in last_user_text(a.fake.message_requests[0])


@pytest.mark.parametrize(
    "prompt",
    [
        "refactor the add function",
        "Please look at app.py and make add return the sum of its arguments, then check mul as well thanks",
    ],
)
async def test_complex_request_starts_with_a_todo(agent, prompt):
    assert len(prompt) >= 80 or prompt.startswith("refactor")
    a = await agent()
    a.fake.push(reply("planned"))
    result = await a.turn(prompt)
    assert result["status"] == "completed", result
    todos = a.s.events_of("todoUpdated")
    assert todos, "no todoUpdated event"
    # at the start of the turn: before the model said anything
    first_todo = a.s.events.index(todos[0])
    first_delta = a.s.events.index(a.s.events_of("assistantDelta")[0])
    assert first_todo < first_delta
    assert todos[0]["todos"][0]["status"] == "in_progress"
    text = last_user_text(a.fake.message_requests[0])
    assert text.startswith(prompt)
    assert "<system-reminder>" in text and "todoWrite" in text


async def test_system_prompt_is_stable_and_tools_carry_a_cache_breakpoint(agent):
    a = await agent()
    a.fake.push(
        reply("one"),
        calls(tool_call("ls", {"path": "."}, "toolu_ls1")),
        reply("two"),
    )
    assert (await a.turn("first"))["reply"] == "one"
    assert (await a.turn("second"))["reply"] == "two"
    first, second, third = a.fake.message_requests
    system = [json.dumps(r.body["system"], sort_keys=True).encode() for r in (first, second, third)]
    assert system[0] == system[1] == system[2]
    assert first.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert str(a.root) in first.body["system"][0]["text"]
    tools = [json.dumps(r.body["tools"], sort_keys=True).encode() for r in (first, second, third)]
    assert tools[0] == tools[1] == tools[2]
    names = [t["name"] for t in first.body["tools"]]
    for name in ("read", "write", "edit", "multiEdit", "bash", "grep", "glob", "ls", "todoRead", "todoWrite"):
        assert name in names
    assert first.body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    # the second turn carries the first one's history
    assert [m["role"] for m in second.body["messages"]] == ["user", "assistant", "user"]
    assert second.body["messages"][0]["content"][0]["text"] == "first"
    assert second.body["messages"][1]["content"][0]["text"] == "one"
    assert "toolu_ls1" in tool_results(third)


async def test_rate_limit_429_is_retried_after_retry_after(agent):
    a = await agent()
    a.fake.push(status_error(429, retry_after=0.2), reply("after the 429"))
    token = "retry-429"
    result = await a.s.execute("coder.input", {"text": "hello"}, token=token)
    assert result["status"] == "completed", result
    assert result["reply"] == "after the 429"
    assert len(a.fake.message_requests) == 2
    assert a.fake.outcomes[-2:] == ["error", "completed"]
    messages = [r.message for r in a.s.progress_of(token) if getattr(r, "message", None)]
    assert any(m.startswith("Retrying") for m in messages), messages


async def test_overloaded_529_is_retried(agent):
    a = await agent()
    a.fake.push(status_error(529, retry_after=0.2), reply("after the 529"))
    result = await a.turn("hello")
    assert result["status"] == "completed", result
    assert result["reply"] == "after the 529"
    assert len(a.fake.message_requests) == 2
    assert [e["status"] for e in a.s.events_of("turnFinished")] == ["completed"]


async def test_max_steps_stops_a_model_that_keeps_calling_tools(agent):
    a = await agent(maxSteps=2)
    a.fake.push(*[calls(tool_call("ls", {"path": "."}, f"toolu_loop{n}")) for n in range(6)])
    result = await a.turn("loop forever")
    assert len(a.fake.message_requests) == 2
    assert a.fake.pending == 4
    assert "maxSteps" in result["reply"], result
    assert result["error"]["code"] == "max_steps"
    assert a.s.events_of("turnFinished")


async def test_without_an_api_key_the_turn_is_an_error(ws):
    async with lsp_session(ws, caps=full_caps()) as s:
        result = await s.execute("coder.input", {"text": "hello"})
        assert result["mode"] == "error", result
        assert result["status"] == "failed"
        assert "ANTHROPIC_API_KEY" in result["reply"]
        assert "ANTHROPIC_API_KEY" in result["error"]["message"]
        # the next prompt still gets an answer (the server is fine)
        again = await s.execute("coder.input", {"text": "hello again"})
        assert again["mode"] == "error" and "ANTHROPIC_API_KEY" in again["reply"]
