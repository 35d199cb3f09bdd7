"""Why a model cannot be had, said clearly: offline and not cached, gated, remote code, too large, no folder;
and what the sidebar learns of a model that loads."""
import json

import huggingface_hub.constants
import pytest
import torch
import zoo

from autoreg_core import ModelLoadError, allowed_models, load_model
from autoreg_core.engine import loading
from autoreg_core.engine.loading import ModelFacts, load_failure


def _load(name: str):
    return load_model(name, device="cpu", allowed=allowed_models([name]))


def test_a_hub_id_not_cached_while_offline(monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError) as err:
        _load("someorg/not-cached-model")
    assert str(err.value) == (
        "'someorg/not-cached-model' is not in this machine's Hugging Face cache and the Hub cannot be reached: "
        "download it once while online (`hf download someorg/not-cached-model`), or copy its folder here and "
        "allow that folder.")


def test_a_model_that_needs_remote_code_is_refused(tmp_path):
    folder = tmp_path / "custom"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "my_custom_lm", "auto_map": {"AutoConfig": "configuration_my.MyConfig",
                                                   "AutoModelForCausalLM": "modeling_my.MyModel"}}))
    with pytest.raises(ModelLoadError, match=r"needs its own Python code, shipped with the checkpoint "
                                             r"\(trust_remote_code\), which this app never runs"):
        _load(str(folder))


def test_a_model_too_large_for_the_free_memory(monkeypatch):
    folder = str(zoo.folder("gpt2"))
    n_params = zoo.bundle("gpt2").spec.n_params
    monkeypatch.setattr(loading, "available_memory", lambda device: n_params * 4 - 1)  # one byte short
    with pytest.raises(ModelLoadError, match=r"does not fit here: its 0\.\d million parameters take \d+\.\d MiB in "
                                             r"float32, and this machine has \d+\.\d MiB of memory available\.$"):
        _load(folder)
    monkeypatch.setattr(loading, "available_memory", lambda device: n_params * 4)  # just enough
    assert _load(folder).spec.n_params == n_params


def test_the_weights_needed_are_counted_without_loading_them():
    n_params, need = loading.weight_bytes_needed(str(zoo.folder("mistral")), torch.bfloat16)
    assert n_params == zoo.bundle("mistral").spec.n_params and need == 2 * n_params


def test_a_missing_folder():
    with pytest.raises(ModelLoadError, match="^Could not load '/no/such/folder': there is no such folder"):
        _load("/no/such/folder")


@pytest.mark.parametrize("exc,start", [
    (OSError("You are trying to access a gated repo.\nMake sure to have access to it."),
     "'org/m' is gated on the Hugging Face Hub: accept its terms"),
    (ValueError("Unrecognized configuration class <class 'X'> for this kind of AutoModel: AutoModelForCausalLM."),
     "'org/m' is not a text-generating (causal) language model that transformers knows."),
    (ValueError("The checkpoint you are trying to load has model type `newlm` but Transformers does not recognize "
                "this architecture."), "'org/m' has an architecture that transformers "),
    (RuntimeError("something else"), "Could not load 'org/m': RuntimeError: something else"),
])
def test_each_failure_has_its_own_message(exc, start):
    assert load_failure("org/m", exc).startswith(start)


def test_the_cause_is_found_down_the_chain():
    try:
        try:
            raise OSError("You are trying to access a gated repo.")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert "is gated" in load_failure("org/m", outer)


@pytest.mark.parametrize("name,family", [("gpt2", "GPT-2"), ("gpt_neox", "GPT-NeoX"), ("opt", "OPT"),
                                         ("phi3", "Phi-3"), ("llama", "Llama"), ("qwen2", "Qwen2"),
                                         ("qwen3", "Qwen3"), ("mistral", "Mistral"), ("gemma2", "Gemma 2")])
def test_every_family_loads_from_its_folder_and_says_what_it_is(name, family):
    folder = str(zoo.folder(name))
    bundle = _load(folder)
    assert bundle.facts() == ModelFacts(name=folder, family=family, n_params=zoo.bundle(name).spec.n_params,
                                        device="cpu", dtype="float32", source=folder)
    assert bundle.spec.family == name and bundle.spec.has_chat_template == (name not in zoo.WITHOUT_CHAT_TEMPLATE)
    ids = bundle.tokenizer("The cat sat")["input_ids"]
    with torch.inference_mode():
        torch.testing.assert_close(bundle.model(torch.tensor([ids])).logits,
                                   zoo.bundle(name).model(torch.tensor([ids])).logits)
