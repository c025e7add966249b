"""tests/slow_upstream.py is a correct OpenAI-compatible peer: the official `openai`
package streams from it (role, content pieces over the latency, finish, usage) and
reads its plain completions, and it holds many slow streams at once in one loop."""

from __future__ import annotations

import asyncio
import time

import openai

from tests.slow_upstream import Reply, SlowUpstream, parse_reply, serving_slow


def test_the_openai_client_streams_an_answer_spread_over_the_latency() -> None:
    app = SlowUpstream(Reply(latency=1.0, chunks=5, text="one two three four five six"))
    with serving_slow(app) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="sk-loopback", max_retries=0)
        start = time.monotonic()
        stream = client.chat.completions.create(
            model="slow", messages=[{"role": "user", "content": "count for me"}],
            stream=True, stream_options={"include_usage": True})
        pieces, arrivals, finish, usage = [], [], None, None
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                if choice.delta.content:
                    pieces.append(choice.delta.content)
                    arrivals.append(time.monotonic() - start)
                finish = choice.finish_reason or finish
    assert "".join(pieces) == "one two three four five six"
    assert len(pieces) == 5 and finish == "stop"
    # Spread over the latency: a fifth of it between pieces (the first comes a fifth in).
    gaps = [later - earlier for earlier, later in zip(arrivals[:-1], arrivals[1:], strict=True)]
    assert all(0.15 <= gap < 1.0 for gap in gaps), gaps
    assert arrivals[-1] >= 1.0
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (3, 6)
    assert usage.total_tokens == 9
    assert app.bodies[0]["model"] == "slow" and app.bodies[0]["stream"] is True
    assert app.stats.as_dict() == {"in_flight": 0, "peak_in_flight": 1, "requests": 1,
                                   "completed": 1, "left": 0}


def test_a_plain_completion_comes_after_the_latency_and_models_are_listed() -> None:
    judge = '{"scores": {"task_completion": 0.9}, "reason": "ok"}'
    app = SlowUpstream(Reply(latency=5.0), dict([parse_reply(f"judge:0.3:2:{judge}")]))
    with serving_slow(app) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="sk-loopback", max_retries=0)
        start = time.monotonic()
        answer = client.chat.completions.create(
            model="judge", messages=[{"role": "system", "content": "Judge."},
                                     {"role": "user", "content": "the answer"}])
        took = time.monotonic() - start
        models = [model.id for model in client.models.list()]
        try:
            client.chat.completions.create(model="judge", messages="not a list")  # type: ignore[arg-type]
            refused = None
        except openai.BadRequestError as error:
            refused = error
    assert answer.choices[0].message.content == judge and answer.choices[0].finish_reason == "stop"
    assert 0.3 <= took < 1.5
    assert answer.usage is not None and answer.usage.prompt_tokens == 3
    assert models == ["judge"]
    assert refused is not None and refused.status_code == 400


def test_one_loop_holds_many_slow_streams_at_once() -> None:
    app = SlowUpstream(Reply(latency=1.5, chunks=3))
    streams = 200

    async def ask(client: openai.AsyncOpenAI, i: int) -> str:
        stream = await client.chat.completions.create(
            model="slow", messages=[{"role": "user", "content": f"question {i}"}], stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def all_at_once(base_url: str) -> list[str]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="sk-loopback", max_retries=0,
                                      timeout=30) as client:
            return await asyncio.gather(*(ask(client, i) for i in range(streams)))

    with serving_slow(app) as base_url:
        start = time.monotonic()
        answers = asyncio.run(all_at_once(base_url))
        took = time.monotonic() - start
    assert answers == [f"Slow answer to: question {i}" for i in range(streams)]
    # Together, not one after another: about one latency for all of them.
    assert took < 20  # one after another: 300 s
    assert app.stats.peak_in_flight >= streams * 9 // 10 and app.stats.completed == streams


def test_a_client_that_leaves_mid_stream_is_counted_and_no_longer_in_flight() -> None:
    app = SlowUpstream(Reply(latency=2.0, chunks=4))
    with serving_slow(app) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="sk-loopback", max_retries=0)
        stream = client.chat.completions.create(
            model="slow", messages=[{"role": "user", "content": "go"}], stream=True)
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                break  # the first piece: leave
        stream.close()
        client.close()
        deadline = time.monotonic() + 5
        while app.stats.in_flight and time.monotonic() < deadline:
            time.sleep(0.02)
        stats = app.stats.as_dict()
    assert stats == {"in_flight": 0, "peak_in_flight": 1, "requests": 1, "completed": 0,
                     "left": 1}
