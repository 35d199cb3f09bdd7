"""Model loading rules: the allowlist, the models file, device and dtype, the cache dir (no model weights needed).
Every rule takes its value as an argument: the engine reads no environment."""
import pytest
import torch

from autoreg_core import UnknownModelError, allowed_models, load_model
from autoreg_core.engine.loading import (
    ALLOWLIST_SETTING,
    ModelLoadError,
    cache_dir,
    choose_device,
    choose_dtype,
)


def test_allowlist_and_unknown_model(monkeypatch):
    monkeypatch.setenv(ALLOWLIST_SETTING, "org/model-a")  # the engine does not read it
    assert allowed_models() == ["SmolLM2-135M-Instruct"]
    assert allowed_models(["org/model-a", " /some/folder"]) == ["SmolLM2-135M-Instruct", "org/model-a", "/some/folder"]
    with pytest.raises(UnknownModelError, match="not available.*AUTOREG_ALLOWED_MODELS environment variable"):
        load_model("evil/remote-code-model")
    with pytest.raises(UnknownModelError, match="Choose one of: SmolLM2-135M-Instruct, org/model-a. "):
        load_model("evil/x", allowed=allowed_models(["org/model-a"]))


def test_allowlisted_but_missing_model_gives_clear_error(tmp_path):
    missing = str(tmp_path / "nothing-here")
    with pytest.raises(ModelLoadError, match="Could not load"):
        load_model(missing, allowed=allowed_models([missing]))


def test_models_file(tmp_path):
    f = tmp_path / "models.txt"
    f.write_text("# comment\nlocal/one\n\nlocal/two\n")
    assert allowed_models(models_file=f)[1:] == ["local/one", "local/two"]
    assert allowed_models(["local/two", "org/b"], str(f))[1:] == ["local/two", "org/b", "local/one"]
    assert allowed_models(models_file=tmp_path / "absent.txt") == ["SmolLM2-135M-Instruct"]


def test_device_dtype_and_cache_dir(tmp_path):
    assert choose_device("cpu").type == "cpu"
    assert choose_dtype(torch.device("cpu")) == torch.float32
    assert choose_dtype(torch.device("cpu"), "bfloat16") == torch.bfloat16
    with pytest.raises(ModelLoadError):
        choose_dtype(torch.device("cpu"), "float99")
    if not torch.cuda.is_available():
        with pytest.raises(ModelLoadError, match="CUDA"):
            choose_device("cuda")
    assert cache_dir(tmp_path) == tmp_path and cache_dir(str(tmp_path)) == tmp_path
    assert cache_dir().name == "autoreg"


def test_allowlisted_local_folder_loads(tmp_path, tiny):
    folder = tmp_path / "tiny-model"
    tiny.model.save_pretrained(folder)
    tiny.tokenizer.save_pretrained(folder)
    bundle = load_model(str(folder), device="cpu", allowed=allowed_models([str(folder)]))
    assert bundle.name == str(folder) and bundle.device.type == "cpu" and bundle.dtype == torch.float32
    assert bundle.spec.n_layers == tiny.spec.n_layers and bundle.spec.vocab == tiny.spec.vocab
    assert not bundle.model.training
