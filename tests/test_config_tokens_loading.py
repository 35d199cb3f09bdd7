"""Settings normalisation, token display and model loading rules (no model weights needed)."""
import pytest
import torch

from autoreg_core import SamplingConfig, UnknownModelError, allowed_models, load_model
from autoreg_core.loading import ENV_ALLOWED, ENV_CACHE_DIR, cache_dir, choose_device, choose_dtype, ModelLoadError
from autoreg_core.sampling import build_processors, entropy_bits, rank_of
from autoreg_core.tokens import token_bytes, token_views, visible_whitespace


@pytest.mark.parametrize("kwargs, fragment", [
    ({"temperature": -1}, "greedy"),
    ({"top_k": 10**6}, "larger than the vocabulary"),
    ({"top_p": 0.0}, "single most likely"),
    ({"min_p": 1.0}, "tied with the most likely"),
    ({"top_p": 1.5}, "clamped"),
    ({"repetition_penalty": 0}, "positive"),
    ({"max_new_tokens": 0}, "clamped"),
])
def test_normalized_explains_every_change(kwargs, fragment):
    cfg, notes = SamplingConfig(**kwargs).normalized(vocab_size=1000)
    assert any(fragment in n for n in notes)
    assert build_processors(cfg) is not None  # transformers accepts the clamped values


def test_greedy_uses_no_warpers_and_top_k_off_at_zero():
    assert len(build_processors(SamplingConfig(temperature=0, top_k=5, top_p=0.5))) == 0
    names = [type(p).__name__ for p in build_processors(SamplingConfig(temperature=0.5, top_k=3, top_p=0.9, min_p=0.1, repetition_penalty=1.1))]
    assert names == ["RepetitionPenaltyLogitsProcessor", "TemperatureLogitsWarper", "TopKLogitsWarper",
                     "TopPLogitsWarper", "MinPLogitsWarper"]
    assert len(build_processors(SamplingConfig(temperature=1.0, top_k=0, top_p=1.0))) == 0


def test_stop_sequences_parse_escaped_newlines():
    assert SamplingConfig.parse_stop_sequences("\\n\\n\nEnd\n\n") == ("\n\n", "End")


def test_entropy_and_rank():
    probs = torch.tensor([0.5, 0.25, 0.25, 0.0])
    assert entropy_bits(probs) == pytest.approx(1.5)
    assert rank_of(probs, 0) == 1 and rank_of(probs, 2) == 2 and rank_of(probs, 3) == 4


def test_emoji_split_over_tokens_is_never_garbage(tiny):
    tok = tiny.tokenizer
    ids = tok("🙂🚀", add_special_tokens=False)["input_ids"]
    views = token_views(tok, ids)
    assert "".join(v.text for v in views) == "🙂🚀"
    assert b"".join(v.data for v in views) == "🙂🚀".encode()
    assert all("\ufffd" not in v.text for v in views)
    partial = [v for v in views if v.partial]
    assert partial and all(v.label.startswith("⟨") for v in partial)  # shown as bytes, not '�'


def test_token_pieces_and_whitespace(tiny):
    tok = tiny.tokenizer
    (tid,) = tok(" cat", add_special_tokens=False)["input_ids"]
    assert token_bytes(tok, tid) == b" cat"
    view = token_views(tok, [tid])[0]
    assert view.piece == "Ġcat" and view.label == "·cat"
    assert visible_whitespace(" \n\t") == "·↵→"
    special = token_views(tok, [tok.eos_token_id])[0]
    assert special.special and special.label == "<|im_end|>"


def test_allowlist_and_unknown_model(monkeypatch):
    monkeypatch.setenv(ENV_ALLOWED, "org/model-a, /some/folder")
    assert allowed_models() == ["SmolLM2-135M-Instruct", "org/model-a", "/some/folder"]
    with pytest.raises(UnknownModelError, match="not available"):
        load_model("evil/remote-code-model")


def test_allowlisted_but_missing_model_gives_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_ALLOWED, str(tmp_path / "nothing-here"))
    with pytest.raises(ModelLoadError, match="Could not load"):
        load_model(str(tmp_path / "nothing-here"))


def test_models_file(monkeypatch, tmp_path):
    f = tmp_path / "models.txt"
    f.write_text("# comment\nlocal/one\n\nlocal/two\n")
    monkeypatch.setenv("AUTOREG_MODELS_FILE", str(f))
    monkeypatch.delenv(ENV_ALLOWED, raising=False)
    assert allowed_models()[1:] == ["local/one", "local/two"]


def test_device_dtype_and_cache_dir(monkeypatch, tmp_path):
    assert choose_device("cpu").type == "cpu"
    assert choose_dtype(torch.device("cpu")) == torch.float32
    assert choose_dtype(torch.device("cpu"), "bfloat16") == torch.bfloat16
    with pytest.raises(ModelLoadError):
        choose_dtype(torch.device("cpu"), "float99")
    if not torch.cuda.is_available():
        with pytest.raises(ModelLoadError, match="CUDA"):
            choose_device("cuda")
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path))
    assert cache_dir() == tmp_path


def test_allowlisted_local_folder_loads(monkeypatch, tmp_path, tiny):
    folder = tmp_path / "tiny-model"
    tiny.model.save_pretrained(folder)
    tiny.tokenizer.save_pretrained(folder)
    monkeypatch.setenv(ENV_ALLOWED, str(folder))
    bundle = load_model(str(folder), device="cpu")
    assert bundle.name == str(folder) and bundle.device.type == "cpu" and bundle.dtype == torch.float32
    assert bundle.n_layers == tiny.n_layers and bundle.vocab_size == tiny.vocab_size
    assert not bundle.model.training
