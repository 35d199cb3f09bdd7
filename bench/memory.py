"""How much memory one browser tab holds: a ``Session``'s records after 512 and 2,048 generated tokens.

Each tab keeps one ``Session``; the model is shared by every tab, so what a tab adds is its KV cache
and its step records. This measures both, separately, on a real session:

* record tensors: the bytes of the storages behind every tensor a ``StepRecord`` holds (full logits
  of recent steps, the top-token tensors, generator states, attention rows), each storage counted
  once (a view counts its whole storage, since that is what stays allocated);
* the rest of the records: ``len(pickle.dumps(...))`` of the records with those tensor fields set to
  None. Pickle is compact; live Python objects take somewhat more (object headers, dicts), so this
  part is a lower bound, and small next to the tensors;
* the KV cache: the bytes of its K and V tensors (``cache.measured_bytes``), with the formula
  (``bundle.spec.cache_bytes``) next to it.

If the model ends its text (EOS) before the target, the EOS step is undone and a plain token is
forced in its place, so every run reaches exactly the planned number of tokens.
"""
from __future__ import annotations

import dataclasses
import pickle
import time

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.kv_cache import measured_bytes
from autoreg_core.engine.session import FULL_LOGITS_KEPT, TOP_STORED
from autoreg_core.engine.stopping import EOS

MIB = 2**20
GOAL_MIB = 30  # issue 8: under 30 MiB per tab at 2,048 tokens, KV cache excluded
TENSOR_FIELDS = {"logits": ("logits",), "top_tokens": ("top_ids", "top_probs", "top_probs_filtered"),
                 "generator_states": ("generator_state",), "attention": ("attention",)}
METHOD = ("record tensors: bytes of each distinct tensor storage held by session.records; rest of the records: "
          "len(pickle.dumps) of the records with their tensor fields set to None (a lower bound for live "
          "Python objects); KV cache: bytes of its K and V tensors, reported separately and excluded from the "
          "per-tab total")


def _storage_bytes(tensors, seen: set[int]) -> int:
    total = 0
    for t in tensors:
        if t is None:
            continue
        storage = t.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            total += storage.nbytes()
    return total


def records_bytes(records) -> dict:
    """Bytes held by step records: tensors by kind (each storage once) and the rest by pickle size."""
    seen: set[int] = set()
    out = {kind: _storage_bytes((getattr(r, f) for r in records for f in fields), seen)
           for kind, fields in TENSOR_FIELDS.items()}
    out["tensors_total"] = sum(out.values())
    stripped = [dataclasses.replace(r, **{f: None for fields in TENSOR_FIELDS.values() for f in fields})
                for r in records]
    out["rest_pickled"] = len(pickle.dumps(stripped, protocol=pickle.HIGHEST_PROTOCOL))
    out["total"] = out["tensors_total"] + out["rest_pickled"]
    return out


def snapshot(session: Session) -> dict:
    """What the tab holds now: records (tensors + rest), the pending logits, and the KV cache apart."""
    held = records_bytes(session.records)
    pending = _storage_bytes([session.pending_logits], set())
    cache = measured_bytes(session.cache)
    full = sum(r.logits is not None for r in session.records)
    return {"generated_tokens": len(session.records), "records_with_full_logits": full,
            "record_bytes": held, "pending_logits_bytes": pending,
            "tab_bytes_without_kv_cache": held["total"] + pending,
            "tab_mib_without_kv_cache": round((held["total"] + pending) / MIB, 2),
            "kv_cache_positions": session.cache_len, "kv_cache_bytes": cache,
            "kv_cache_formula_bytes": session.bundle.spec.cache_bytes(session.cache_len),
            "kv_cache_mib": round(cache / MIB, 2)}


def _plain_token(bundle) -> int:
    """A token to force when the model says EOS early: ' the' where the tokenizer has it."""
    ids = bundle.tokenizer(" the", add_special_tokens=False)["input_ids"]
    return int(ids[0]) if len(ids) == 1 else 0


def tab_memory(bundle, prompt: str, checkpoints: tuple[int, ...] = (512, 2048), config: SamplingConfig | None = None,
               capture_attention: bool = False) -> dict:
    """Generate up to the last checkpoint in one session, snapshotting the memory at each checkpoint."""
    target = max(checkpoints)
    config = config or SamplingConfig(temperature=0.0, max_new_tokens=target)
    session = Session(bundle, prompt)
    plain, forced_past_eos, snaps = _plain_token(bundle), 0, []
    t0 = time.perf_counter()
    while len(session.records) < target:
        rec = session.step(config, capture_attention=capture_attention)
        if rec.stop is not None and rec.stop[0] == EOS and len(session.records) < target:
            session.undo()
            session.force(plain, config, capture_attention=capture_attention)
            forced_past_eos += 1
        if len(session.records) in checkpoints:
            snaps.append(snapshot(session))
    return {"config": {"temperature": config.temperature, "seed": config.seed,
                       "max_new_tokens": config.max_new_tokens, "capture_attention": capture_attention},
            "prompt_tokens": session.prompt_len, "eos_steps_replaced_by_forced_token": forced_past_eos,
            "seconds": round(time.perf_counter() - t0, 1), "checkpoints": snaps}


def memory_report(bundle, prompt: str, checkpoints: tuple[int, ...] = (512, 2048),
                  capture_attention: bool = False) -> dict:
    """Greedy and sampled runs (a sampled step also keeps its generator state, for Undo)."""
    target = max(checkpoints)
    runs = {"greedy": SamplingConfig(temperature=0.0, max_new_tokens=target),
            "sampled": SamplingConfig(temperature=1.0, seed=0, max_new_tokens=target)}
    report = {"method": METHOD, "goal_mib_per_tab_without_kv_cache": GOAL_MIB,
              "full_logits_kept_for_last_steps": FULL_LOGITS_KEPT, "top_tokens_kept_per_step": TOP_STORED,
              "runs": {name: tab_memory(bundle, prompt, checkpoints, config, capture_attention)
                       for name, config in runs.items()}}
    worst = max(snap["tab_bytes_without_kv_cache"] for run in report["runs"].values() for snap in run["checkpoints"])
    report["worst_tab_mib_without_kv_cache"] = round(worst / MIB, 2)
    report["within_goal"] = worst < GOAL_MIB * MIB
    return report


__all__ = ["GOAL_MIB", "memory_report", "records_bytes", "snapshot", "tab_memory"]
