"""Every count and byte of a model in one place: ``ModelSpec``.

The attention page, the memory calculator, the naive-vs-cache race and the bench all take their
numbers from here, so they agree by construction. Conventions (one multiply-add = 2 FLOPs), for a
model with ``N_body`` weights inside its layers, hidden size d, vocabulary V, ``n_l`` layers,
``n_h`` query heads and ``n_kv`` cached K/V heads of size ``d_h``:

* KV cache: 2 (K and V) × n_l × n_kv × d_h × positions × batch × bytes per element;
* a token through the layers: 2·N_body FLOPs (every weight used once);
* the LM head for the one position whose logits we need: 2·d·V FLOPs;
* one query against one cached position: 4·n_l·n_h·d_h FLOPs (QKᵀ and the weighted sum of V);
* a decode step reads every weight once plus the whole cache.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` → ``'float32'``."""
    return str(dtype).replace("torch.", "")


def dtype_bytes(dtype: torch.dtype) -> int:
    """Bytes per element of a torch dtype (``torch.float32`` → 4)."""
    return int(dtype.itemsize)


# bytes per element of the precisions the calculator offers. 4-bit formats also store scales: GGUF's Q4_1
# (the embedded model's format) gives each block of 32 values a 16-bit scale and a 16-bit minimum,
# 4 + 32/32 = 5 bits per value.
Q4_1_BYTES = (4 + 2 * 16 / 32) / 8
PRECISIONS: dict[str, float] = {"float32": 4, "float16 / bfloat16": 2, "int8 / fp8": 1,
                                "4-bit, Q4_1 (5 bits with its scales)": Q4_1_BYTES}


def precision_name(bytes_per_element: float) -> str:
    return next((name for name, size in PRECISIONS.items() if size == bytes_per_element),
                f"{bytes_per_element:g} bytes")


def _whole(name: str, value) -> int:
    if int(value) != value or value < 0:
        raise ValueError(f"{name} must be a whole number ≥ 0, got {value!r}")
    return int(value)


def _body_params(model) -> int:
    """Weights inside the layers: everything but the token embedding and the LM head (tied counted once)."""
    skip = {id(p) for module in (model.get_input_embeddings(), model.get_output_embeddings())
            if module is not None for p in module.parameters()}
    seen = {id(p): p for p in model.parameters() if id(p) not in skip}
    return int(sum(p.numel() for p in seen.values()))



ROTARY, LEARNED, NO_POSITIONS = "rotary", "learned", "none"

# transformers' model_type → the family's name as its authors write it (the zoo tests each of these)
FAMILY_NAMES: dict[str, str] = {
    "gpt2": "GPT-2", "gpt_neox": "GPT-NeoX", "opt": "OPT", "phi3": "Phi-3", "llama": "Llama",
    "qwen2": "Qwen2", "qwen3": "Qwen3", "mistral": "Mistral", "gemma2": "Gemma 2",
}


def _positions(model) -> tuple[str, float]:
    """How the model knows where a token is: rotated queries and keys (with the rotated share of each head)
    or a learned vector added to the embedding (GPT-2's ``wpe``, OPT's ``embed_positions``)."""
    body = getattr(model, "base_model", model)
    body = getattr(body, "decoder", body)
    if getattr(body, "rotary_emb", None) is not None:
        rope = getattr(model.config, "rope_parameters", None) or {}
        fraction = rope.get("partial_rotary_factor", None) if isinstance(rope, dict) else None
        fraction = fraction or getattr(model.config, "partial_rotary_factor", None) or 1.0
        return ROTARY, float(fraction)
    if any(getattr(body, name, None) is not None for name in ("wpe", "embed_positions")):
        return LEARNED, 0.0
    return NO_POSITIONS, 0.0


def _tied(model) -> bool:
    head, embedding = model.get_output_embeddings(), model.get_input_embeddings()
    weight = getattr(head, "weight", None)  # a quantised head (precision's variants) may hold no plain weight
    return weight is not None and weight is getattr(embedding, "weight", None)


def _parallel(cfg) -> bool:
    """Attention and MLP side by side on the same normalised input (GPT-NeoX, GPT-J, Phi-1/2, Falcon)."""
    if getattr(cfg, "use_parallel_residual", None) is not None:
        return bool(cfg.use_parallel_residual)
    if getattr(cfg, "parallel_attn", None) is not None:
        return bool(cfg.parallel_attn)
    return getattr(cfg, "model_type", "") in ("gptj", "phi", "codegen")


def layer_windows(config) -> tuple[int | None, ...]:
    """Each layer's sliding window as transformers' own ``DynamicCache`` decides it for this config
    (None: the layer keeps and sees every position)."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicSlidingWindowLayer

    cache = DynamicCache(config=config)
    return tuple(int(layer.sliding_window) if isinstance(layer, DynamicSlidingWindowLayer) else None
                 for layer in cache.layers)


def gqa_group(n_heads: int, n_kv_heads: int) -> int:
    """Query heads that share one cached K/V head under grouped-query attention (1 = plain multi-head)."""
    return max(1, n_heads // max(1, n_kv_heads))


@dataclass(frozen=True)
class ModelSpec:
    """The shape of a decoder-only model and the precisions it is stored in."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    n_params: int  # every parameter, tied weights counted once
    body_params: int  # weights inside the layers (no token embedding, no LM head)
    max_positions: int
    weight_bytes_per_param: float = 4  # precision of the weights
    cache_bytes_per_element: float = 4  # precision of the KV cache (may differ from the weights')
    seq_len: int = 0  # a calculator preset's sequence length (0: the full context)
    batch: int = 1
    note: str = ""
    # -- what makes this family differ from Llama (read from the loaded model; defaults: a Llama-shaped one)
    family: str = ""  # transformers' model_type: "llama", "gpt2", "gpt_neox", "opt", "gemma2" …
    layer_windows: tuple[int | None, ...] = ()  # each layer's sliding window, None = sees every position
    tied: bool = True  # the LM head is the token embedding matrix
    positions: str = ROTARY  # ROTARY (keys and queries rotated) or LEARNED (a position vector added)
    rotary_fraction: float = 1.0  # share of each head's dimensions that is rotated (GPT-NeoX: 0.25)
    parallel_attention: bool = False  # attention and MLP read the same input and are added together
    attn_softcap: float | None = None  # Gemma 2: scores become cap · tanh(scores / cap)
    final_softcap: float | None = None  # Gemma 2: the logits, likewise
    has_chat_template: bool = False  # the tokenizer can format a conversation (set by the bundle)

    # -------------------------------------------- building one
    @classmethod
    def from_model(cls, model, name: str, dtype: torch.dtype | None = None) -> ModelSpec:
        cfg = model.config
        n_heads = int(cfg.num_attention_heads)
        dtype = dtype or next(model.parameters()).dtype
        size = dtype_bytes(dtype)
        n_params = int(model.num_parameters())  # tied embedding and LM head counted once
        positions, rotary_fraction = _positions(model)
        return cls(name=name, n_layers=int(cfg.num_hidden_layers), n_heads=n_heads,
                   n_kv_heads=int(getattr(cfg, "num_key_value_heads", None) or n_heads),
                   head_dim=int(getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads),
                   hidden=int(cfg.hidden_size), vocab=int(cfg.vocab_size), n_params=int(n_params),
                   body_params=_body_params(model),
                   max_positions=int(getattr(cfg, "max_position_embeddings", 0) or 2048),
                   weight_bytes_per_param=size, cache_bytes_per_element=size,
                   family=str(getattr(cfg, "model_type", "") or ""), layer_windows=layer_windows(cfg),
                   tied=_tied(model), positions=positions, rotary_fraction=rotary_fraction,
                   parallel_attention=_parallel(cfg),
                   attn_softcap=getattr(cfg, "attn_logit_softcapping", None) or None,
                   final_softcap=getattr(cfg, "final_logit_softcapping", None) or None)

    @classmethod
    def preset(cls, name: str, *, n_layers: int, n_heads: int, n_kv_heads: int, head_dim: int, hidden: int,
               vocab: int, n_params: int, seq_len: int, max_positions: int | None = None,
               weight_bytes: float = 2, cache_bytes: float = 2, tied: bool = False, note: str = "") -> ModelSpec:
        """A model known only by its published shape (the body is the parameters minus the token
        embedding and the LM head, one matrix when ``tied``)."""
        embeddings = (1 if tied else 2) * hidden * vocab
        return cls(name=name, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim,
                   hidden=hidden, vocab=vocab, n_params=n_params, body_params=n_params - embeddings,
                   max_positions=max_positions or seq_len, weight_bytes_per_param=weight_bytes,
                   cache_bytes_per_element=cache_bytes, seq_len=seq_len, note=note)

    def with_precision(self, weight_bytes: float | None = None, cache_bytes: float | None = None) -> ModelSpec:
        weights = self.weight_bytes_per_param if weight_bytes is None else weight_bytes
        cache = self.cache_bytes_per_element if cache_bytes is None else cache_bytes
        return replace(self, weight_bytes_per_param=weights, cache_bytes_per_element=cache)

    def without_gqa(self) -> ModelSpec:
        """The same model if every query head kept its own K and V (plain multi-head attention)."""
        return replace(self, n_kv_heads=self.n_heads)

    # -------------------------------------------- the KV cache
    @property
    def gqa_group(self) -> int:
        """Query heads that share one cached K/V head."""
        return gqa_group(self.n_heads, self.n_kv_heads)

    @property
    def cache_bytes_per_position(self) -> float:
        """What one more token adds to the cache: K and V in every layer (while no sliding layer is full)."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * self.cache_bytes_per_element

    @property
    def sliding_layers(self) -> tuple[int, ...]:
        """The layers that see (and keep) only a window of recent positions."""
        return tuple(i for i, window in enumerate(self.layer_windows) if window is not None)

    def positions_kept(self, layer: int, positions: int) -> int:
        """Positions layer ``layer`` holds in its cache after ``positions`` tokens: all of them, or in a
        sliding layer at most window − 1 (transformers' ``DynamicSlidingWindowLayer``: the next token's
        own key completes the window it attends to)."""
        window = self.layer_windows[layer] if layer < len(self.layer_windows) else None
        return positions if window is None else min(positions, window - 1)

    def cache_bytes(self, positions: int | None = None, batch: int | None = None) -> int:
        """2 × layers × batch × kv_heads × head_dim × positions × bytes per element; a sliding layer counts
        the positions it keeps (``positions_kept``) instead of all of them."""
        positions = _whole("positions", self.seq_len if positions is None else positions)
        batch = _whole("batch", self.batch if batch is None else batch)
        if not self.sliding_layers:
            return int(round(self.cache_bytes_per_position * positions * batch))
        kept = sum(self.positions_kept(layer, positions) for layer in range(self.n_layers))
        per_layer_position = 2 * self.n_kv_heads * self.head_dim * self.cache_bytes_per_element
        return int(round(per_layer_position * kept * batch))

    # -------------------------------------------- weights
    @property
    def lm_head_params(self) -> int:
        return self.hidden * self.vocab

    @property
    def weight_bytes(self) -> int:
        return int(round(self.n_params * self.weight_bytes_per_param))

    @property
    def weight_bytes_per_step(self) -> int:
        """Weights a decode step must read: the layers and the LM head (the embedding is one row)."""
        return int(round((self.body_params + self.lm_head_params) * self.weight_bytes_per_param))

    # -------------------------------------------- FLOPs per token
    @property
    def flops_layers_per_token(self) -> int:
        """2·N_body: one multiply-add per weight of the layers."""
        return 2 * self.body_params

    @property
    def flops_lm_head(self) -> int:
        """2·d·V: the logits of one position."""
        return 2 * self.lm_head_params

    @property
    def attention_flops_per_key(self) -> int:
        """4·n_l·n_h·d_h: one query against one cached position, over every layer."""
        return 4 * self.n_layers * self.n_heads * self.head_dim

    @property
    def attention_equals_layers_at(self) -> int:
        """The cache length at which a cached step's attention FLOPs equal its layers' weight FLOPs:
        L · 4·n_l·n_h·d_h = 2·N_body. Past it, reading the cache costs a step more than its weights."""
        return round(self.flops_layers_per_token / self.attention_flops_per_key)

    # -------------------------------------------- generating T tokens, with and without the cache
    @staticmethod
    def positions_total(T: int, cached: bool) -> int:
        """Positions pushed through the model to produce T tokens: T with the cache, T(T+1)/2 without."""
        return T if cached else T * (T + 1) // 2

    def dot_products_step(self, L: int, cached: bool) -> int:
        """QKᵀ scores computed by the step that produces position L (causal: position i sees i keys)."""
        return self.n_layers * self.n_heads * (L if cached else L * (L + 1) // 2)

    def dot_products_total(self, T: int, cached: bool) -> int:
        """Σ over steps L = 1..T of ``dot_products_step``: the cache still does T(T+1)/2 per head."""
        per = self.n_layers * self.n_heads
        return per * (T * (T + 1) // 2 if cached else T * (T + 1) * (T + 2) // 6)

    def flops_step(self, L: int, cached: bool) -> int:
        """FLOPs of the step producing position L: cached = 1 position, naive = all L positions."""
        positions = 1 if cached else L
        keys = L if cached else L * (L + 1) // 2
        return positions * self.flops_layers_per_token + self.flops_lm_head + keys * self.attention_flops_per_key

    def flops_total(self, T: int, cached: bool) -> int:
        """Σ over steps L = 1..T of ``flops_step`` (closed form)."""
        keys = T * (T + 1) // 2 if cached else T * (T + 1) * (T + 2) // 6
        return (self.positions_total(T, cached) * self.flops_layers_per_token + T * self.flops_lm_head
                + keys * self.attention_flops_per_key)

    # -------------------------------------------- why a decode step is memory-bound
    def step_bytes(self, L: int, batch: int = 1) -> dict[str, int]:
        """Bytes a decode step at length L reads: every weight once (whatever the batch), plus K and V of
        L positions for each of the ``batch`` rows. The roofline's numerator, in one place."""
        weights, cache = self.weight_bytes_per_step, self.cache_bytes(L, batch)
        return {"weights": weights, "cache": cache, "total": weights + cache}

    def arithmetic_intensity(self, L: int, cached: bool) -> float:
        """FLOPs per byte read. Naive: the weights are read once for all L positions (activations ignored)."""
        if cached:
            return self.flops_step(L, True) / self.step_bytes(L)["total"]
        return self.flops_step(L, False) / self.weight_bytes_per_step

    def count_table(self, T: int) -> list[dict]:
        """What generating T tokens costs both ways: positions, QKᵀ dot products, FLOPs.

        The cache removes the recomputed positions (projections and MLP), not the attention over the
        cache: per layer and head the cached run still does T(T+1)/2 dot products in total.
        """
        per_head = self.n_layers * self.n_heads
        rows = []
        for what, fn in (("token positions processed (projections, MLP)", lambda c: self.positions_total(T, c)),
                         ("attention dot products per layer and head",
                          lambda c: self.dot_products_total(T, c) // per_head),
                         ("attention dot products, all layers and heads", lambda c: self.dot_products_total(T, c)),
                         ("FLOPs", lambda c: self.flops_total(T, c))):
            naive, cached = fn(False), fn(True)
            rows.append({"quantity": what, "naive": naive, "KV cache": cached, "naive / cached": naive / cached})
        return rows


def _llama3(size: str, *, n_layers: int, n_heads: int, hidden: int, n_params: int) -> ModelSpec:
    """A Llama-3 shape (8 K/V heads of 128, vocabulary 128,256) at its full 128K context."""
    return ModelSpec.preset(f"{size} model", n_layers=n_layers, n_heads=n_heads, n_kv_heads=8, head_dim=128,
                            hidden=hidden, vocab=128_256, n_params=n_params, seq_len=131_072,
                            note=f"Llama-3-{size} shape: {n_heads} query heads share 8 K/V heads")


# Published shapes for the memory calculator (16-bit weights and cache unless said otherwise).
PRESETS: dict[str, ModelSpec] = {
    "GPT-2 Small": ModelSpec.preset(
        "GPT-2 Small", n_layers=12, n_heads=12, n_kv_heads=12, head_dim=64, hidden=768, vocab=50257,
        n_params=124_439_808, seq_len=1024, tied=True, note="Full 1,024-token context, one K/V per head"),
    "7B model, 128K context": ModelSpec.preset(
        "7B model", n_layers=32, n_heads=32, n_kv_heads=32, head_dim=128, hidden=4096, vocab=32000,
        n_params=6_738_415_616, seq_len=131_072, note="Llama-2-7B shape, no GQA"),
    "70B model with GQA, 4K tokens": ModelSpec.preset(
        "70B model", n_layers=80, n_heads=64, n_kv_heads=8, head_dim=128, hidden=8192, vocab=32000,
        n_params=68_976_648_192, seq_len=4096, note="Llama-2-70B shape: 64 query heads share 8 K/V heads"),
    "8B model with GQA, 128K context": _llama3("8B", n_layers=32, n_heads=32, hidden=4096, n_params=8_030_261_248),
    "70B model with GQA, 128K context": _llama3("70B", n_layers=80, n_heads=64, hidden=8192, n_params=70_553_706_496),
}
# The common serving setup: weights quantised to 4 bits, the KV cache kept in 16 bits.
PRESETS["70B model, 4-bit weights + 16-bit cache, 128K"] = replace(
    PRESETS["70B model with GQA, 128K context"].with_precision(weight_bytes=Q4_1_BYTES, cache_bytes=2),
    note="Llama-3-70B shape with 4-bit weights (5 bits each with their block scales), the cache kept in 16 bits")
