"""A zoo of tiny random models, one per family the app supports, built from transformers' own config
classes in well under a second each.

Each model keeps what makes its family different from Llama, so a test on the zoo meets every shape a
teacher's checkpoint can have: learned absolute positions (GPT-2, OPT), fused q/k/v weights (GPT-2's
``c_attn``, GPT-NeoX's per-head interleaved ``query_key_value``, Phi-3's ``qkv_proj``), partial rotary
and parallel attention + MLP (GPT-NeoX), an untied LM head (Llama, Mistral, Phi-3, GPT-NeoX), q/k norms
(Qwen3), a sliding window (Mistral: every layer, window 8; Gemma 2: alternate layers, window 8) and
logit soft-capping (Gemma 2). GPT-2, GPT-NeoX and OPT tokenizers carry no chat template, as their real
checkpoints do not.

    from tests import zoo
    for name in zoo.FAMILIES:
        bundle = zoo.bundle(name)          # cached: one model per family per process
    zoo.bundle("gpt2", attn="eager")       # eager attention (for output_attentions); default: the family's own
    zoo.folder("mistral")                  # a saved folder, for load_model(folder, allowed=[folder])

The weights are drawn larger than the default initialisation so that greedy output depends on the
whole context (the default repeats one token whatever the prompt).
"""
from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    Gemma2Config,
    GPT2Config,
    GPTNeoXConfig,
    LlamaConfig,
    MistralConfig,
    OPTConfig,
    Phi3Config,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen3Config,
)

from autoreg_core import bundle_from_model
from autoreg_core.engine.loading import ModelBundle
from tests.tiny import tiny_tokenizer

WINDOW = 8  # the sliding window of the Mistral and Gemma 2 models: small, so tests cross it in a few steps
HIDDEN, LAYERS, HEADS, HEAD_DIM, FFN, POSITIONS = 64, 2, 4, 16, 128, 256


def _common(tok: PreTrainedTokenizerFast) -> dict:
    return dict(vocab_size=len(tok), eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                bos_token_id=tok.bos_token_id)


def _gpt2(tok) -> PretrainedConfig:
    return GPT2Config(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=FFN, n_positions=POSITIONS,
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **_common(tok))


def _gpt_neox(tok) -> PretrainedConfig:
    # Pythia's shape: a quarter of each head rotated, attention and MLP in parallel, untied head.
    return GPTNeoXConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                         intermediate_size=FFN, max_position_embeddings=POSITIONS, rotary_pct=0.25,
                         use_parallel_residual=True, tie_word_embeddings=False, **_common(tok))


def _opt(tok) -> PretrainedConfig:
    return OPTConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, ffn_dim=FFN,
                     word_embed_proj_dim=HIDDEN, max_position_embeddings=POSITIONS, dropout=0.0,
                     attention_dropout=0.0, **_common(tok))


def _phi3(tok) -> PretrainedConfig:
    return Phi3Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                      num_key_value_heads=2, intermediate_size=FFN, max_position_embeddings=POSITIONS,
                      original_max_position_embeddings=POSITIONS, tie_word_embeddings=False, **_common(tok))


def _llama(tok) -> PretrainedConfig:
    return LlamaConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                       num_key_value_heads=2, head_dim=HEAD_DIM, intermediate_size=FFN,
                       max_position_embeddings=POSITIONS, tie_word_embeddings=False, **_common(tok))


def _qwen2(tok) -> PretrainedConfig:
    return Qwen2Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                       num_key_value_heads=2, intermediate_size=FFN, max_position_embeddings=POSITIONS,
                       tie_word_embeddings=True, **_common(tok))


def _qwen3(tok) -> PretrainedConfig:
    return Qwen3Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                       num_key_value_heads=2, head_dim=HEAD_DIM, intermediate_size=FFN,
                       max_position_embeddings=POSITIONS, tie_word_embeddings=True, **_common(tok))


def _mistral(tok) -> PretrainedConfig:
    return MistralConfig(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                         num_key_value_heads=2, head_dim=HEAD_DIM, intermediate_size=FFN,
                         max_position_embeddings=POSITIONS, sliding_window=WINDOW, tie_word_embeddings=False,
                         **_common(tok))


def _gemma2(tok) -> PretrainedConfig:
    # Layer 0 slides over the last WINDOW positions, layer 1 sees everything (Gemma 2 alternates).
    return Gemma2Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                        num_key_value_heads=2, head_dim=HEAD_DIM, intermediate_size=FFN,
                        max_position_embeddings=POSITIONS, sliding_window=WINDOW, query_pre_attn_scalar=HEAD_DIM,
                        attn_logit_softcapping=50.0, final_logit_softcapping=30.0, **_common(tok))


CONFIGS: dict[str, Callable[[PreTrainedTokenizerFast], PretrainedConfig]] = {
    "gpt2": _gpt2, "gpt_neox": _gpt_neox, "opt": _opt, "phi3": _phi3, "llama": _llama,
    "qwen2": _qwen2, "qwen3": _qwen3, "mistral": _mistral, "gemma2": _gemma2,
}
FAMILIES: tuple[str, ...] = tuple(CONFIGS)
WITHOUT_CHAT_TEMPLATE = frozenset({"gpt2", "gpt_neox", "opt"})  # as their real checkpoints
SLIDING = frozenset({"mistral", "gemma2"})
# Gemma 2 multiplies its embeddings by √hidden and normalises every sublayer's output, so larger
# embeddings drown the layers and the model repeats its input token; the others vary at 0.5.
EMBED_SCALE = {"gemma2": 0.03}


@cache
def tokenizer(name: str) -> PreTrainedTokenizerFast:
    """The tiny byte-level BPE tokenizer, without a chat template for the families whose checkpoints have none."""
    tok = tiny_tokenizer()
    if name in WITHOUT_CHAT_TEMPLATE:
        tok = copy.deepcopy(tok)
        tok.chat_template = None
    return tok


def config(name: str) -> PretrainedConfig:
    if name not in CONFIGS:
        raise KeyError(f"unknown family {name!r}; the zoo has {', '.join(FAMILIES)}")
    return CONFIGS[name](tokenizer(name))


def model(name: str, attn: str | None = None, seed: int = 0) -> PreTrainedModel:
    """A fresh tiny model of ``name``'s family, with weights large enough to vary with the context.
    ``attn``: the attention implementation (None: what transformers picks for the family, as when a
    checkpoint is loaded; Gemma 2 has no SDPA path and gets eager)."""
    torch.manual_seed(seed)
    kw = {} if attn is None else {"attn_implementation": attn}
    built = AutoModelForCausalLM.from_config(config(name), **kw)
    generator = torch.Generator().manual_seed(seed)
    embed_scale = EMBED_SCALE.get(name, 0.5)
    with torch.no_grad():
        for pname, param in built.named_parameters():
            if param.dim() == 2:
                scale = embed_scale if ("embed" in pname or "wte" in pname or "wpe" in pname) else 0.25
                param.copy_(torch.randn(param.shape, generator=generator) * scale)
    tok = tokenizer(name)
    built.generation_config.eos_token_id = tok.eos_token_id
    built.generation_config.pad_token_id = tok.pad_token_id
    built.generation_config.bos_token_id = tok.bos_token_id
    return built.eval()


@cache
def bundle(name: str, attn: str | None = None) -> ModelBundle:
    """The app's bundle for ``name``'s tiny model (cached per family and attention implementation)."""
    return bundle_from_model(model(name, attn), tokenizer(name), name=f"tiny-{name}")


@cache
def folder(name: str) -> Path:
    """``name``'s tiny model and tokenizer saved as a folder (kept for the process), for ``load_model``."""
    target = Path(tempfile.mkdtemp(prefix=f"autoreg-zoo-{name}-"))
    built = bundle(name)
    built.model.save_pretrained(target)
    built.tokenizer.save_pretrained(target)
    return target


__all__ = ["CONFIGS", "FAMILIES", "SLIDING", "WINDOW", "WITHOUT_CHAT_TEMPLATE", "bundle", "config", "folder",
           "model", "tokenizer"]
