"""The `model.generate` call that matches a SamplingConfig, so learners can map the app to the API."""
from __future__ import annotations

from .config import SamplingConfig
from .loading import ModelBundle


def generate_kwargs(config: SamplingConfig, bundle: ModelBundle) -> dict:
    """Keyword arguments for ``model.generate`` that choose tokens exactly as the session does.

    Every filter is passed explicitly (top_k=0 included) because generate falls back to
    top_k=50 when sampling without one.
    """
    kwargs: dict = {"max_new_tokens": config.max_new_tokens, "use_cache": True,
                    "pad_token_id": bundle.tokenizer.pad_token_id if bundle.tokenizer.pad_token_id is not None
                    else (bundle.eos_token_ids or [None])[0]}
    if config.repetition_penalty != 1.0:
        kwargs["repetition_penalty"] = config.repetition_penalty
    if config.greedy:
        kwargs["do_sample"] = False
    else:
        kwargs.update(do_sample=True, temperature=config.temperature, top_k=config.top_k,
                      top_p=config.top_p, min_p=config.min_p if config.min_p > 0 else None)
    if config.stop_sequences:
        kwargs["stop_strings"] = list(config.stop_sequences)
    return kwargs


def generate_snippet(config: SamplingConfig, bundle: ModelBundle, prompt: str, chat: bool) -> str:
    """Python source a learner can paste into a notebook to run the same generation in one call."""
    kwargs = generate_kwargs(config, bundle)
    args = ",\n    ".join(f"{k}={v!r}" for k, v in kwargs.items() if v is not None)
    if chat:
        encode = (f"text = tok.apply_chat_template([{{'role': 'user', 'content': {prompt!r}}}],\n"
                  "                               add_generation_prompt=True, tokenize=False)\n"
                  "ids = tok(text, add_special_tokens=False, return_tensors='pt').input_ids")
    else:
        encode = f"ids = tok({prompt!r}, return_tensors='pt').input_ids"
    seed = "" if config.greedy else f"torch.manual_seed({config.seed})  # same seed → same tokens as the app\n"
    stop = ",\n    tokenizer=tok  # stop_strings needs it" if config.stop_sequences else ""
    return (
        "import torch\n"
        "from autoreg_core import load_model\n\n"
        "bundle = load_model()  # or AutoModelForCausalLM.from_pretrained(...)\n"
        "model, tok = bundle.model, bundle.tokenizer\n"
        f"{encode}\n{seed}"
        f"out = model.generate(\n    ids,\n    {args}{stop},\n)\n"
        "print(tok.decode(out[0, ids.shape[1]:]))\n"
    )
