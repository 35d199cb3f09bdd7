"""The model.generate call shown to learners: its arguments mirror the SamplingConfig exactly."""
import ast
import re

import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments.generate_call import generate_kwargs, generate_snippet


def test_greedy_kwargs_carry_no_sampling_arguments(tiny):
    kwargs = generate_kwargs(SamplingConfig(temperature=0, top_k=5, max_new_tokens=9), tiny)
    assert kwargs == {"max_new_tokens": 9, "use_cache": True, "pad_token_id": tiny.tokenizer.pad_token_id,
                      "do_sample": False}


def test_sampling_kwargs_pass_every_filter_explicitly(tiny):
    cfg = SamplingConfig(temperature=0.7, top_k=0, top_p=0.9, min_p=0.0, repetition_penalty=1.2,
                         max_new_tokens=5, stop_sequences=("\n",))
    kwargs = generate_kwargs(cfg, tiny)
    assert kwargs == {"max_new_tokens": 5, "use_cache": True, "pad_token_id": tiny.tokenizer.pad_token_id,
                      "repetition_penalty": 1.2, "do_sample": True, "temperature": 0.7, "top_k": 0,
                      "top_p": 0.9, "min_p": None, "stop_strings": ["\n"]}


def test_kwargs_make_generate_reproduce_the_session(tiny):
    cfg = SamplingConfig(temperature=0.9, top_k=20, top_p=0.95, min_p=0.02, repetition_penalty=1.1,
                         seed=3, max_new_tokens=12)
    s = Session(tiny, "The dog")
    s.generate(12, cfg)
    torch.manual_seed(cfg.seed)
    out = tiny.model.generate(torch.tensor([s.prompt_ids]), eos_token_id=None, **generate_kwargs(cfg, tiny))
    assert len(s.generated_ids) == 12
    assert out[0, len(s.prompt_ids):].tolist() == s.generated_ids


def test_snippet_is_valid_python_that_seeds_only_when_sampling(tiny):
    sampled = generate_snippet(SamplingConfig(temperature=0.8, seed=42), tiny, "it's \"quoted\"", chat=False)
    ast.parse(sampled)
    assert "torch.manual_seed(42)" in sampled and "'it\\'s \"quoted\"'" in sampled
    greedy = generate_snippet(SamplingConfig(temperature=0, stop_sequences=("END",)), tiny, "Hi", chat=True)
    ast.parse(greedy)
    assert "manual_seed" not in greedy and "apply_chat_template" in greedy and "tokenizer=tok" in greedy


def _run_loop_snippet(code: str, bundle, monkeypatch, capsys) -> tuple[list[int], str]:
    """Execute the shown loop as a learner would, with load_model() giving ``bundle``: its new ids, what it printed."""
    import autoreg_core

    monkeypatch.setattr(autoreg_core, "load_model", lambda: bundle)
    capsys.readouterr()
    namespace: dict = {}
    exec(compile(code, "<loop snippet>", "exec"), namespace)
    return namespace["new"], capsys.readouterr().out


def test_the_hand_written_loop_gives_the_sessions_tokens_when_sampling(tiny, monkeypatch, capsys):
    from autoreg_core.experiments.generate_call import loop_snippet

    cfg = SamplingConfig(temperature=0.9, top_k=20, top_p=0.95, min_p=0.02, repetition_penalty=1.1,
                         seed=5, max_new_tokens=10)
    s = Session(tiny, "The dog")
    s.generate(10, cfg)
    code = loop_snippet(cfg, tiny, "The dog")
    assert len(re.findall(r"\bmodel\(", code)) == 2  # one prefill call, one decode call in the loop
    new, printed = _run_loop_snippet(code, tiny, monkeypatch, capsys)
    assert new == s.generated_ids and len(new) == len(s.records) >= 1
    assert printed == tiny.tokenizer.decode(s.generated_ids) + "\n"


def test_the_hand_written_loop_greedy_has_no_seed_and_matches(tiny, monkeypatch, capsys):
    from autoreg_core.experiments.generate_call import loop_snippet

    cfg = SamplingConfig(temperature=0, max_new_tokens=8)
    s = Session(tiny, "Once", chat=tiny.tokenizer.chat_template is not None)
    s.generate(8, cfg)
    code = loop_snippet(cfg, tiny, "Once", s.chat)
    assert ("apply_chat_template" in code) == s.chat
    assert "manual_seed" not in code and "argmax" in code and "Temperature" not in code
    new, _ = _run_loop_snippet(code, tiny, monkeypatch, capsys)
    assert new == s.generated_ids and len(new) == len(s.records)


def test_the_hand_written_loop_matches_the_embedded_model_in_chat_mode(embedded, monkeypatch, capsys):
    from autoreg_core.experiments.generate_call import loop_snippet

    cfg = SamplingConfig(temperature=0.8, top_k=50, top_p=0.95, seed=11, max_new_tokens=16)
    s = Session(embedded, "Name a colour.", chat=True)
    s.generate(16, cfg)
    new, _ = _run_loop_snippet(loop_snippet(cfg, embedded, "Name a colour.", chat=True), embedded, monkeypatch, capsys)
    assert new == s.generated_ids and len(new) == len(s.records)
