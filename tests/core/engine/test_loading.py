"""Model loading rules: the allowlist, the models file, device and dtype, the cache dir (no model weights needed)."""
import pytest
import torch

from autoreg_core import UnknownModelError, allowed_models, load_model
from autoreg_core.engine.loading import (
    ENV_ALLOWED,
    ENV_CACHE_DIR,
    ModelLoadError,
    cache_dir,
    choose_device,
    choose_dtype,
)


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
