"""The `model.generate` call that matches a SamplingConfig, so learners can map the app to the API."""
from __future__ import annotations

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.loading import ModelBundle


def generate_kwargs(config: SamplingConfig, bundle: ModelBundle) -> dict:
    """Keyword arguments for ``model.generate`` that choose tokens exactly as the session does.

    Every filter is passed explicitly (top_k=0 included) because generate falls back to
    top_k=50 when sampling without one.
    """
    kwargs: dict = {"max_new_tokens": config.max_new_tokens, "use_cache": True,
                    "pad_token_id": bundle.pad_id}
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


def _encode_lines(prompt: str, chat: bool) -> str:
    """Source that turns the prompt into ``ids`` as the session does (chat template in chat mode), on the model's
    device: the loop feeds them to the model and appends its tokens to them, so on a GPU they must live there too
    (a no-op on a CPU)."""
    if chat:
        return (f"text = tok.apply_chat_template([{{'role': 'user', 'content': {prompt!r}}}],\n"
                "                               add_generation_prompt=True, tokenize=False)\n"
                "ids = tok(text, add_special_tokens=False, return_tensors='pt').input_ids.to(model.device)")
    return f"ids = tok({prompt!r}, return_tensors='pt').input_ids.to(model.device)"


def generate_snippet(config: SamplingConfig, bundle: ModelBundle, prompt: str, chat: bool) -> str:
    """Python source a learner can paste into a notebook to run the same generation in one call."""
    kwargs = generate_kwargs(config, bundle)
    args = ",\n    ".join(f"{k}={v!r}" for k, v in kwargs.items() if v is not None)
    encode = _encode_lines(prompt, chat)
    seed = "" if config.greedy else (f"torch.manual_seed({config.seed})  # on a CPU: the app's tokens "
                                     "(a GPU draws from its own generator)\n")
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


def _warper_lines(config: SamplingConfig) -> list[str]:
    """The processors ``generate`` would build for ``config``, in its order (switched-off ones left out)."""
    out = []
    if config.repetition_penalty != 1.0:
        out.append(f"RepetitionPenaltyLogitsProcessor({config.repetition_penalty!r})")
    if not config.greedy:
        if config.temperature != 1.0:
            out.append(f"TemperatureLogitsWarper({config.temperature!r})")
        if config.top_k:
            out.append(f"TopKLogitsWarper({int(config.top_k)})")
        if config.top_p < 1.0:
            out.append(f"TopPLogitsWarper({config.top_p!r})")
        if config.min_p > 0.0:
            out.append(f"MinPLogitsWarper({config.min_p!r})")
    return out


def loop_snippet(config: SamplingConfig, bundle: ModelBundle, prompt: str, chat: bool = False) -> str:
    """The generation loop written out by hand (prefill, then one decode step per token on the cache).

    Same tokens as ``generate`` and, on a CPU, as this app (a test runs this very text): the processors run in
    generate's order and the draw is ``torch.multinomial`` after the same seed (on a GPU it draws from the GPU's
    generator, so only greedy runs give the app's tokens there). Stop sequences are left
    out to keep the loop short; EOS and max new tokens are in.
    """
    warpers = _warper_lines(config)
    names = sorted({line.split("(")[0] for line in warpers})
    choose = ("scores.argmax(-1, keepdim=True)                    # greedy" if config.greedy else
              "torch.multinomial(scores.softmax(-1), 1)           # the random draw")
    seed = "" if config.greedy else f"torch.manual_seed({config.seed})\n"
    return (
        "import torch\n"
        f"from transformers import {', '.join(['DynamicCache', 'LogitsProcessorList', *names])}\n"
        "from autoreg_core import load_model\n\n"
        "bundle = load_model()\n"
        f"model, tok, eos = bundle.model, bundle.tokenizer, {sorted(bundle.eos_token_ids)!r}\n"
        f"{_encode_lines(prompt, chat)}\n"
        f"process = LogitsProcessorList([{', '.join(warpers)}])\n{seed}"
        "cache, new = DynamicCache(), []\n"
        "logits = model(ids, past_key_values=cache).logits[:, -1]      # prefill: the whole prompt\n"
        f"for _ in range({int(config.max_new_tokens)}):\n"
        "    scores = process(ids, logits)                              # repetition, ÷T, top-k, top-p, min-p\n"
        f"    token = {choose}\n"
        "    ids = torch.cat([ids, token], dim=1)\n"
        "    new.append(token.item())\n"
        "    if token.item() in eos:\n"
        "        break\n"
        "    logits = model(token, past_key_values=cache).logits[:, -1]  # one decode step: one token in\n"
        "print(tok.decode(new))\n"
    )
