"""The radix prefix arena: longest-prefix reuse, extension in place, LRU eviction, on the real model."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from nexus_gateway import kv_state
from nexus_gateway.engine import WORK_SEQ, EngineSettings, LlamaEngine
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path

SYSTEM = "<|im_start|>system\nYou fill in JSON arguments for tools.<|im_end|>\n<|im_start|>user\n"


@pytest.fixture(scope="module")
def engine() -> Iterator[LlamaEngine]:
    engine = LlamaEngine(EngineSettings(str(model_path(lookup(DEFAULT_MODEL))), n_threads=1, n_ctx=1024, arena_slots=4))
    yield engine
    engine.close()


def test_a_later_turn_reuses_the_earlier_turns_prompt_and_gets_the_same_answer(engine: LlamaEngine) -> None:
    turn1 = engine.tokenize(SYSTEM + "Earlier:\n1. read notes.txt\nRequest: list the folder")
    turn2 = engine.tokenize(SYSTEM + "Earlier:\n1. read notes.txt\n2. list the folder\nRequest: open a.txt")
    engine.cursor(turn1)
    _, common = engine.arena.longest_prefix(turn2)
    assert common > len(engine.tokenize(SYSTEM))  # the system prompt and the first window line
    before = engine.arena.hit_tokens
    warm = engine.cursor(turn2).logits
    assert engine.arena.hit_tokens - before == common
    state = kv_state.parse(engine.state_get(WORK_SEQ))
    assert state is not None and np.array_equal(state.positions, np.arange(len(turn2)))

    cold = LlamaEngine(engine.settings)  # nothing warm: the whole prompt prefilled
    try:
        reference = cold.cursor(turn2).logits
    finally:
        cold.close()
    assert warm is not None and reference is not None
    assert warm.argmax() == reference.argmax()
    assert np.abs(warm - reference).max() < 1.0  # batch split noise only


def test_prompts_extend_their_slot_and_the_least_recently_used_slot_is_replaced(engine: LlamaEngine) -> None:
    arena = engine.arena
    base = engine.tokenize(SYSTEM + "Request: zero")
    engine.cursor(base)
    slot, _ = arena.longest_prefix(base)
    longer = base + engine.tokenize(" and one more")
    engine.cursor(longer)
    assert arena.longest_prefix(longer) == (slot, len(longer))  # extended in place, not a second slot

    prompts = [engine.tokenize(f"Unrelated prompt number {i} about {word}") for i, word in enumerate("abcde")]
    for prompt in prompts:
        engine.cursor(prompt)
    # 4 slots, 5 unrelated prompts after ours: the oldest are gone, the newest are warm
    assert arena.longest_prefix(prompts[-1])[1] == len(prompts[-1])
    assert arena.longest_prefix(prompts[0])[1] < len(prompts[0])
    assert arena.longest_prefix(longer)[1] < len(engine.tokenize(SYSTEM))


def test_a_full_cache_evicts_warm_prompts_instead_of_failing(engine: LlamaEngine) -> None:
    words = engine.tokenize(" alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu") * 40
    for i in range(4):
        engine.cursor(engine.tokenize(f"Prompt {i}:") + words[: 300 + i])
    # 4 × ~300 distinct cells do not fit 1024: the engine made room by forgetting old prompts
    cursor = engine.cursor(engine.tokenize("Prompt 9:") + words[:400])
    assert cursor.position == len(engine.tokenize("Prompt 9:")) + 400


def test_forgetting_after_a_prefix_makes_the_rest_of_a_prompt_cold_again(engine: LlamaEngine) -> None:
    arena = engine.arena
    prefix = engine.tokenize(SYSTEM)
    prompt = prefix + engine.tokenize("Request: list the open issues")
    engine.cursor(prompt)
    assert arena.longest_prefix(prompt)[1] == len(prompt)
    arena.forget_after(prefix)
    assert arena.longest_prefix(prompt)[1] == len(prefix)  # the prefix stays warm, the request does not
    before = engine.arena.hit_tokens
    cursor = engine.cursor(prompt)
    assert engine.arena.hit_tokens - before == len(prefix)
    assert cursor.computed == len(prompt) - len(prefix)
