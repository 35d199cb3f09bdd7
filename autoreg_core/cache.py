"""The KV cache as numbers: tensor shapes, measured bytes, the memory formula and its presets.

Every decoder layer keeps two tensors, K and V, of shape ``[batch, kv_heads, positions, head_dim]``.
Prefill writes all prompt positions at once; each decode step appends one position. So

    cache bytes = 2 × layers × batch × kv_heads × head_dim × positions × bytes-per-element

and this module checks that the bytes measured from the tensors equal that formula exactly.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

# bytes per element of the precisions the calculator offers (4-bit packs two values per byte)
PRECISIONS: dict[str, float] = {
    "float32": 4,
    "float16 / bfloat16": 2,
    "int8 / fp8": 1,
    "4-bit": 0.5,
}


def dtype_bytes(dtype) -> int:
    """Bytes per element of a torch dtype (``torch.float32`` → 4)."""
    import torch

    return int(torch.empty((), dtype=dtype).element_size())


def precision_name(bytes_per_element: float) -> str:
    for name, size in PRECISIONS.items():
        if size == bytes_per_element:
            return name
    return f"{bytes_per_element:g} bytes"


# ---------------------------------------------------------------- the formula
def kv_cache_bytes(n_layers: int, n_kv_heads: int, head_dim: int, positions: int,
                   bytes_per_element: float, batch: int = 1) -> int:
    """2 (K and V) × layers × batch × kv_heads × head_dim × positions × bytes per element."""
    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("head_dim", head_dim),
                        ("positions", positions), ("batch", batch)):
        if int(value) != value or value < 0:
            raise ValueError(f"{name} must be a whole number ≥ 0, got {value!r}")
    if bytes_per_element <= 0:
        raise ValueError(f"bytes_per_element must be > 0, got {bytes_per_element!r}")
    elements = 2 * int(n_layers) * int(batch) * int(n_kv_heads) * int(head_dim) * int(positions)
    return int(round(elements * bytes_per_element))


def bytes_per_position(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_element: float,
                       batch: int = 1) -> float:
    """What one more token costs in the cache (all layers, K and V)."""
    return 2 * n_layers * batch * n_kv_heads * head_dim * bytes_per_element


# ---------------------------------------------------------------- measuring a live cache
@dataclass(frozen=True)
class LayerCacheShape:
    layer: int
    keys: tuple[int, ...]  # [batch, kv_heads, positions, head_dim]
    values: tuple[int, ...]
    dtype: str
    nbytes: int  # measured: keys + values


def layer_shapes(cache) -> list[LayerCacheShape]:
    """Shape and measured bytes of K and V in every layer of a transformers ``DynamicCache``."""
    if cache is None:
        return []
    rows = []
    for i, layer in enumerate(getattr(cache, "layers", [])):
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if keys is None or values is None:
            continue
        nbytes = keys.numel() * keys.element_size() + values.numel() * values.element_size()
        rows.append(LayerCacheShape(i, tuple(keys.shape), tuple(values.shape),
                                    str(keys.dtype).replace("torch.", ""), int(nbytes)))
    return rows


def measured_bytes(cache) -> int:
    """Bytes of every K and V tensor in the cache, counted from the tensors themselves."""
    return sum(row.nbytes for row in layer_shapes(cache))


def formula_bytes_for(bundle, positions: int, batch: int = 1) -> int:
    """The memory formula with the loaded model's numbers and dtype."""
    return kv_cache_bytes(bundle.n_layers, bundle.n_kv_heads, bundle.head_dim, positions,
                          dtype_bytes(bundle.dtype), batch)


# ---------------------------------------------------------------- the cache over a session
@dataclass(frozen=True)
class CachePoint:
    step: int  # 0 = prefill, then decode steps 1, 2, ...
    phase: str  # "prefill" | "decode"
    positions: int
    measured_bytes: int
    formula_bytes: int
    ms: float  # forward time of this pass


def cache_timeline(session) -> list[CachePoint]:
    """Cache length and bytes after the prefill and after every decode step (measured per record)."""
    pre = session.prefill_record
    if pre is None:
        return []
    bundle = session.bundle
    points = [CachePoint(0, "prefill", pre.n_tokens, pre.cache_bytes,
                         formula_bytes_for(bundle, pre.n_tokens), pre.time_ms)]
    for rec in session.records:
        points.append(CachePoint(rec.index, "decode", rec.cache_len, rec.cache_bytes,
                                 formula_bytes_for(bundle, rec.cache_len), rec.forward_ms))
    return points


@dataclass(frozen=True)
class PhaseTimes:
    prefill_tokens: int
    prefill_ms: float
    prefill_ms_per_token: float
    decode_steps: int
    decode_ms_median: float  # median forward pass of one decode step (one token)

    @property
    def ratio(self) -> float:
        """How many times longer a decode step takes than one prompt token inside the prefill."""
        if self.prefill_ms_per_token <= 0:
            return float("nan")
        return self.decode_ms_median / self.prefill_ms_per_token


def phase_times(session) -> PhaseTimes | None:
    """Measured prefill time per prompt token against the forward time of a decode step."""
    pre = session.prefill_record
    if pre is None or not session.records:
        return None
    decode = [r.forward_ms for r in session.records]
    return PhaseTimes(pre.n_tokens, pre.time_ms, pre.time_ms / max(1, pre.n_tokens), len(decode),
                      statistics.median(decode))


# ---------------------------------------------------------------- the calculator
@dataclass(frozen=True)
class ModelShape:
    """What the memory formula needs to know about a model, plus its weight count."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    n_params: int
    seq_len: int  # the preset's sequence length
    bytes_per_element: float = 2
    batch: int = 1
    note: str = ""

    @property
    def gqa_group(self) -> int:
        return self.n_heads // self.n_kv_heads

    def cache_bytes(self, seq_len: int | None = None, batch: int | None = None,
                    bytes_per_element: float | None = None) -> int:
        return kv_cache_bytes(self.n_layers, self.n_kv_heads, self.head_dim,
                              self.seq_len if seq_len is None else seq_len,
                              self.bytes_per_element if bytes_per_element is None else bytes_per_element,
                              self.batch if batch is None else batch)

    def weight_bytes(self, bytes_per_element: float | None = None) -> int:
        bpe = self.bytes_per_element if bytes_per_element is None else bytes_per_element
        return int(round(self.n_params * bpe))

    def cache_bytes_without_gqa(self, seq_len: int | None = None, batch: int | None = None,
                                bytes_per_element: float | None = None) -> int:
        """The same cache if every query head kept its own K and V (plain multi-head attention)."""
        return replace(self, n_kv_heads=self.n_heads).cache_bytes(seq_len, batch, bytes_per_element)


PRESETS: dict[str, ModelShape] = {
    "GPT-2 Small": ModelShape("GPT-2 Small", n_layers=12, n_heads=12, n_kv_heads=12, head_dim=64,
                              n_params=124_439_808, seq_len=1024, bytes_per_element=2,
                              note="Full 1,024-token context, one K/V per head"),
    "7B model, 128K context": ModelShape("7B model", n_layers=32, n_heads=32, n_kv_heads=32,
                                         head_dim=128, n_params=7_000_000_000, seq_len=131_072,
                                         bytes_per_element=2,
                                         note="Llama-2-7B shape, no GQA"),
    "70B model with GQA, 4K tokens": ModelShape("70B model", n_layers=80, n_heads=64, n_kv_heads=8,
                                                head_dim=128, n_params=70_000_000_000, seq_len=4096,
                                                bytes_per_element=2,
                                                note="Llama-2-70B shape: 64 query heads share 8 K/V heads"),
}


def shape_of_bundle(bundle, seq_len: int | None = None) -> ModelShape:
    """The loaded model as a calculator preset (its own dtype and full context by default)."""
    return ModelShape(bundle.name, bundle.n_layers, bundle.n_heads, bundle.n_kv_heads, bundle.head_dim,
                      int(bundle.n_params), int(seq_len or bundle.max_positions),
                      dtype_bytes(bundle.dtype),
                      note=f"The loaded model at its full {bundle.max_positions:,}-token context")


def human_bytes(n: float) -> str:
    """1536 → '1.50 KiB' (binary units, as memory is sold and measured)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.2f} {unit}"
        n /= 1024
    return f"{n:.2f} TiB"
