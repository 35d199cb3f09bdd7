"""Settings normalisation and model loading rules (no model weights needed)."""
import pytest
import torch

from autoreg_core import SamplingConfig, UnknownModelError, allowed_models, load_model
from autoreg_core.loading import ENV_ALLOWED, ENV_CACHE_DIR, cache_dir, choose_device, choose_dtype, ModelLoadError
from autoreg_core.decode import entropy_bits, process, rank_of


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
    # transformers' warpers accept the clamped values: the pipeline ends in a distribution
    probs = process(torch.randn(1000), [1, 2, 3], SamplingConfig(**kwargs)).probs
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-5) and int((probs > 0).sum()) >= 1


def test_pipeline_stages_run_in_generates_order_and_greedy_skips_the_warpers():
    def active(cfg):
        return [s.name for s in process(torch.randn(300), [4, 5], cfg).stages if s.active]

    assert active(SamplingConfig(temperature=0, top_k=5, top_p=0.5)) == ["raw logits", "greedy"]
    assert active(SamplingConfig(temperature=0.5, top_k=3, top_p=0.9, min_p=0.1, repetition_penalty=1.1)) == [
        "raw logits", "repetition penalty", "temperature", "top-k", "top-p", "min-p"]
    assert active(SamplingConfig(temperature=1.0, top_k=0, top_p=1.0)) == ["raw logits"]


def test_stop_sequences_parse_escaped_newlines():
    assert SamplingConfig.parse_stop_sequences("\\n\\n\nEnd\n\n") == ("\n\n", "End")


def test_entropy_and_rank():
    probs = torch.tensor([0.5, 0.25, 0.25, 0.0])
    assert entropy_bits(probs) == pytest.approx(1.5)
    assert rank_of(probs, 0) == 1 and rank_of(probs, 2) == 2 and rank_of(probs, 3) == 4


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
    assert bundle.spec.n_layers == tiny.spec.n_layers and bundle.spec.vocab == tiny.spec.vocab
    assert not bundle.model.training
