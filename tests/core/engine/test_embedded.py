"""Integration: the hand loop on the embedded SmolLM2 reproduces transformers exactly."""
import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments.generate_call import generate_kwargs, generate_snippet

PROMPTS = [("The cat sat on the", False), ("def fibonacci(n):", False),
           ("Name three colours of the rainbow.", True)]


@pytest.mark.parametrize("prompt, chat", PROMPTS)
def test_greedy_steps_equal_generate(embedded, prompt, chat):
    s = Session(embedded, prompt, chat=chat)
    s.generate(64, SamplingConfig(temperature=0, max_new_tokens=64))
    out = embedded.model.generate(torch.tensor([s.prompt_ids]), max_new_tokens=64, do_sample=False)
    assert s.generated_ids == out[0, len(s.prompt_ids):].tolist()
    assert len(s.generated_ids) == 64 or s.records[-1].stop[0] == "eos"


def test_seeded_sampling_equals_generate(embedded):
    cfg = SamplingConfig(temperature=0.8, top_k=40, top_p=0.9, min_p=0.02, seed=7, max_new_tokens=32)
    s = Session(embedded, "Once upon a time")
    s.generate(32, cfg)
    torch.manual_seed(7)
    out = embedded.model.generate(torch.tensor([s.prompt_ids]), max_new_tokens=32, do_sample=True,
                                  temperature=0.8, top_k=40, top_p=0.9, min_p=0.02)
    assert s.generated_ids == out[0, len(s.prompt_ids):].tolist()


def test_the_page_snippet_reproduces_the_session(embedded):
    """The code shown on the step page, executed, gives the session's tokens."""
    cfg = SamplingConfig(temperature=1.1, top_k=0, top_p=0.95, repetition_penalty=1.1, seed=4,
                         max_new_tokens=16)
    s = Session(embedded, "Water boils at", chat=True)
    s.generate(16, cfg)
    code = generate_snippet(cfg, embedded, "Water boils at", chat=True)
    code = code.replace("bundle = load_model()", "bundle = _bundle").replace("print(", "_printed = (")
    scope = {"_bundle": embedded}
    exec(code, scope)  # noqa: S102 - our own generated snippet
    assert s.generated_ids == scope["out"][0, len(s.prompt_ids):].tolist()
    assert generate_kwargs(cfg, embedded)["top_k"] == 0


def test_cached_logits_equal_full_forward(embedded):
    s = Session(embedded, "The quick brown fox jumps over the lazy dog because")
    for n in (1, 8, 24):
        while len(s.records) < n:
            s.step(SamplingConfig(temperature=1.0, seed=1))
        with torch.inference_mode():
            full = embedded.model(torch.tensor([s.ids]), use_cache=False).logits[0, -1]
        assert torch.allclose(s.pending_logits, full, atol=1e-3, rtol=1e-4)


def test_undo_then_step_same_record(embedded):
    cfg = SamplingConfig(temperature=1.0, top_p=0.9, seed=3)
    s = Session(embedded, "My favourite food is")
    s.generate(5, cfg)
    last = s.records[-1]
    s.undo()
    again = s.step(cfg)
    assert (again.token_id, again.prob, again.rank) == (last.token_id, last.prob, last.rank)
    assert torch.equal(again.logits, last.logits)


def test_embedded_model_facts(embedded):
    spec = embedded.spec
    assert (spec.n_layers, spec.n_heads, spec.n_kv_heads, spec.head_dim) == (30, 9, 3, 64)
    assert embedded.spec.vocab == 49152 and embedded.has_chat_template
    assert 2 in embedded.eos_token_ids


def test_first_load_converts_once_then_reloads_the_copy(embedded, monkeypatch, tmp_path):
    from autoreg_core import load_model
    from autoreg_core.engine import loading

    conversions = []
    convert = loading.convert_embedded
    monkeypatch.setattr(loading, "convert_embedded", lambda *a: (conversions.append(a), convert(*a)))
    first = load_model(cache_folder=tmp_path)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (folder / "model.safetensors").exists() and (folder / "config.json").exists()
    assert not list(tmp_path.glob("*.tmp-*"))  # the temporary folder was renamed into place
    second = load_model(cache_folder=tmp_path)
    assert len(conversions) == 1  # the second load read the safetensors copy
    ids = torch.tensor([embedded.tokenizer("The cat sat on the")["input_ids"]])
    with torch.inference_mode():
        for bundle in (first, second):
            assert torch.allclose(bundle.model(ids).logits, embedded.model(ids).logits, atol=1e-5)
