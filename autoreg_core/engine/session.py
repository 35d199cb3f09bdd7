"""A generation session: prefill once, then one decode step per call on a KV cache.

Invariant: the cache holds exactly the tokens of the sequence, and ``pending_logits`` are the
model's logits for the next position. Each step leaves a ``StepRecord``.

Memory per tab stays bounded: a record keeps the full logits only while it is among the last
``FULL_LOGITS_KEPT`` steps; older records keep what the charts and tables draw (the chosen token's
numbers and the top ``TOP_STORED`` tokens before and after the filters), exactly.

A session runs its own passes unless handed others (``engine.passes``): ``step_pass`` runs each decode
token (a server hands its batcher's, so tabs stepping together share one pass), ``prefill_cache``
keeps prefills by prompt (a server hands its shared store). A notebook's ``Session(bundle, prompt)``
is solo and shares nothing.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autoreg_core.engine import decode, stopping
from autoreg_core.engine.attention import attention_weights, past_keys, supports_attention
from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.kv_cache import measured_bytes
from autoreg_core.engine.loading import ModelBundle
from autoreg_core.engine.passes import PrefillCache, StepPass, solo_step
from autoreg_core.engine.tokens import TokenView, sequence_text, token_views

TOP_STORED = 50  # top tokens (by the model's own probability) kept with every record
FULL_LOGITS_KEPT = 32  # the last this-many records keep their full [vocab] logits
# Captured attention is float16, and one decode row costs 2 B × layers × heads × cache length
# (540 B per position on SmolLM2), so a tab keeps at most ATTENTION_BUDGET bytes of it: the oldest
# decode rows are dropped first (the page shows them as not captured and can recompute them).
ATTENTION_BUDGET = 24 * 2**20
MAX_PREFILL_CAPTURE = 160  # prefill capture stores [layers, heads, P, P]: 13.2 MiB on SmolLM2 at 160
MAX_DECODE_CAPTURE = 1024  # no decode row is captured past this cache length


class SessionError(ValueError):
    """Bad input for a session (empty prompt, too long, not a single token ...): show the message."""


class GenerationStopped(SessionError):
    """A stop condition holds; stepping further needs Undo, Reset or a looser setting."""


@dataclass
class PrefillRecord:
    """The prefill pass: every prompt token through the model at once."""

    n_tokens: int
    time_ms: float
    cache_bytes: int  # measured: bytes of every K and V tensor in the cache after prefill
    attention: torch.Tensor | None = None  # float16 [layers, heads, P, P] when captured
    copied: bool = False  # the cache was copied from another tab's prefill of this prompt: time_ms is that pass's


@dataclass
class StepRecord:
    """What one decode step decided: enough to redraw its charts and to undo it exactly."""

    index: int  # 1-based step number
    token_id: int
    forced: bool
    config: SamplingConfig
    context_len: int  # tokens before this step (prompt + earlier steps)
    prob: float  # probability of the chosen token under the model's raw softmax
    prob_filtered: float  # ... under the distribution actually drawn from (after the filters)
    rank: int  # 1 = the model's favourite
    logprob: float  # natural log of ``prob``
    entropy_bits: float  # entropy of the model's raw softmax
    kept: int  # tokens left with non-zero probability after the filters
    generator_state: torch.Tensor | None  # RNG state just before the draw (None when not drawn)
    cache_len: int  # positions in the KV cache after this step
    cache_bytes: int  # measured from the K and V tensors after this step
    time_ms: float  # the whole step: processors + draw + forward pass
    forward_ms: float  # the decode forward pass alone
    top_ids: torch.Tensor  # int32 [TOP_STORED]: most likely first under the raw softmax
    top_probs: torch.Tensor  # float32: their raw probabilities
    top_probs_filtered: torch.Tensor  # float32: their probabilities after the filters
    logits: torch.Tensor | None  # float32 [vocab]: the raw logits; None once the record is old
    attention: torch.Tensor | None = None  # float16 [layers, heads, cache_len]: the new token's row
    stop: tuple[str, str] | None = None  # (kind, message) when generation stopped at this step
    pass_rows: int = 1  # rows of the forward pass this step rode in (1 = alone; more = other tabs' steps too)

    def full_logits(self) -> torch.Tensor:
        """The raw logits over the whole vocabulary (recent records only)."""
        if self.logits is None:
            raise LookupError(f"Step {self.index} is older than the last {FULL_LOGITS_KEPT} steps; "
                              "only its top tokens are kept.")
        return self.logits

    def probs_before(self) -> torch.Tensor:
        """The model's full-vocabulary softmax (recent records only)."""
        return decode.softmax(self.full_logits())


class Session:
    """One browser tab's generation: its own cache, generator and records; the model is shared.

    ``version`` grows by one with every change of the tokens and cache the session holds (prefill, step,
    force, undo, reset): a reader that kept the number it saw knows whether anything changed since.
    """

    def __init__(self, bundle: ModelBundle, prompt: str, chat: bool = False, capture_attention: bool = False, *,
                 step_pass: StepPass | None = None, prefill_cache: PrefillCache | None = None):
        self.bundle = bundle
        self.step_pass: StepPass = step_pass or solo_step(bundle)  # how one decode token runs
        self.prefill_cache = prefill_cache  # where prefills of the same prompt are shared (None: nowhere)
        self.prompt = prompt
        self.chat = chat
        self.capture_attention = capture_attention
        self._lock = threading.RLock()
        self.replay_corrections = 0  # replayed steps whose own pass chose another token than the recipe lists
        self.prompt_ids = encode_prompt(bundle, prompt, chat)
        self.version = 0  # see the class docstring
        self.reset()
        self.version = 0  # a new session: nothing has changed yet

    @property
    def lock(self) -> threading.RLock:
        """Hold it to read records, ids and cache as one consistent picture while a step may run."""
        return self._lock

    def snapshot(self) -> SessionSnapshot:
        """Everything a reader outside the tab's script thread needs (downloads, exports, class views),
        copied in one go under the lock, so a step running meanwhile can never show half of itself."""
        with self._lock:
            return SessionSnapshot(bundle=self.bundle, prompt=self.prompt, chat=self.chat,
                                   prompt_ids=tuple(self.prompt_ids), ids=tuple(self.ids),
                                   seed=self.seed, records=tuple(self.records),
                                   pending_logits=self.pending_logits)

    # ---------------------------------------------------------------- state
    def reset(self) -> None:
        """Back to just the prompt: empty cache, no records; the generator is reseeded on the next step."""
        with self._lock:
            self.version += 1
            self.seed: int | None = None  # set from the config at the first step after a reset
            self.ids: list[int] = list(self.prompt_ids)
            self.records: list[StepRecord] = []
            self.cache = None
            self.pending_logits: torch.Tensor | None = None
            self.prefill_record: PrefillRecord | None = None
            self.generator = torch.Generator(device="cpu")

    @property
    def prompt_len(self) -> int:
        return len(self.prompt_ids)

    @property
    def generated_ids(self) -> list[int]:
        return self.ids[self.prompt_len:]

    @property
    def cache_len(self) -> int:
        return 0 if self.cache is None else int(self.cache.get_seq_length())

    @property
    def cache_bytes(self) -> int:
        return measured_bytes(self.cache)

    @property
    def text(self) -> str:
        return sequence_text(self.bundle.tokenizer, self.ids)

    @property
    def generated_text(self) -> str:
        return sequence_text(self.bundle.tokenizer, self.generated_ids)

    def views(self) -> list[TokenView]:
        """Every token of the sequence, decoded in context (see ``tokens``)."""
        return token_views(self.bundle.tokenizer, self.ids)

    def sequence_logprob(self) -> float:
        """log P(generated | prompt) = Σ log p(x_t | x_<t): the chain rule, in nats."""
        return float(sum(r.logprob for r in self.records))

    def perplexity(self) -> float:
        """exp(−mean log-prob) of the generated tokens under the raw softmax; 1 = always certain."""
        if not self.records:
            return float("nan")
        return math.exp(-self.sequence_logprob() / len(self.records))

    def context(self, record: StepRecord | None = None) -> list[int]:
        """The ids a step chose from (all ids so far when ``record`` is None: the next step's)."""
        return list(self.ids if record is None else self.ids[:record.context_len])

    # ---------------------------------------------------------------- forward passes
    def _feed(self, ids: list[int], capture: bool) -> tuple[torch.Tensor, float, torch.Tensor | None]:
        """Feed tokens on the cache; return the next logits, the pass's ms, attention rows if captured."""
        logits, ms, att, _ = self._feed_shared(ids, capture)
        return logits, ms, att

    def _feed_shared(self, ids: list[int], capture: bool) -> tuple[torch.Tensor, float, torch.Tensor | None, int]:
        """``_feed``, and the rows of the pass: one decode token without capture goes through ``step_pass``
        (on a server it may share a pass with other tabs' steps); anything else is a solo pass."""
        if len(ids) == 1 and not capture:
            done = self.step_pass(self.cache, ids[0], owner=self)  # this tab, not this cache
            return done.logits, done.ms, None, done.rows
        start = self.cache_len
        past = past_keys(self.cache) if capture else None  # a sliding layer drops its oldest key in the pass
        fwd = decode.forward(self.bundle, ids, self.cache, hidden_states=capture)
        att = None
        if capture:
            with torch.inference_mode():
                att = attention_weights(self.bundle.model, fwd.hidden_states, self.cache, q_start=start, past=past)
            att = att.to(torch.float16).cpu()
        return fwd.logits[0], fwd.ms, att, 1

    def _want_attention(self, capture: bool | None) -> bool:
        want = self.capture_attention if capture is None else capture
        return bool(want) and supports_attention(self.bundle.model)

    def prefill(self, capture_attention: bool | None = None) -> PrefillRecord:
        """Process the whole prompt in one pass, filling the cache. Idempotent."""
        with self._lock:
            if self.prefill_record is not None:
                return self.prefill_record
            capture = self._want_attention(capture_attention) and self.prompt_len <= MAX_PREFILL_CAPTURE
            shared = None if capture else self.prefill_cache
            hit = None if shared is None else shared.lookup(self.bundle, self.prompt_ids)
            if hit is not None:  # another tab read this very prompt: start from a copy of its prefill
                self.cache, self.pending_logits, ms, att = hit.cache, hit.logits, hit.prefill_ms, None
            else:
                self.cache = decode.new_cache(self.bundle)
                self.pending_logits, ms, att = self._feed(self.prompt_ids, capture)
                if shared is not None:
                    shared.remember(self.bundle, self.prompt_ids, self.cache, self.pending_logits, ms)
            self.prefill_record = PrefillRecord(n_tokens=self.prompt_len, time_ms=ms,
                                                cache_bytes=self.cache_bytes, attention=att, copied=hit is not None)
            self.version += 1
            return self.prefill_record

    def next_pipeline(self, config: SamplingConfig) -> decode.Pipeline:
        """The sampling pipeline for the next token, from the pending logits (nothing is drawn)."""
        with self._lock:
            self.prefill()
            return decode.process(self.pending_logits, self.ids, config)

    def pipeline(self, record: StepRecord) -> decode.Pipeline:
        """The pipeline a recent step chose from, rebuilt exactly from its logits and context."""
        return decode.process(record.full_logits(), self.context(record), record.config)

    # ---------------------------------------------------------------- stepping
    def stop_reason(self, config: SamplingConfig) -> tuple[str, str] | None:
        """Why the sequence must stop under ``config`` (recomputed, so loosening a limit resumes)."""
        text = self.generated_text if config.stop_sequences else ""  # decoded only when a stop string is set
        return stopping.stop_reason(self.ids, self.prompt_len, text, config.max_new_tokens,
                                    self.bundle.eos_token_ids, config.stop_sequences)

    def step(self, config: SamplingConfig, capture_attention: bool | None = None,
             force_token: int | None = None, expect_token: int | None = None) -> StepRecord:
        """One decode step: choose the next token from the pending logits, then feed it in.

        ``expect_token`` (a replay of a recipe that lists its tokens) keeps the recorded token when this
        pass's logits tip a near-tie the other way: the draw still runs, so the generator stays in step.
        """
        return self._step(config.normalized(self.bundle.spec.vocab)[0], capture_attention, force_token, expect_token)

    def _step(self, config: SamplingConfig, capture_attention: bool | None, force_token: int | None,
              expect_token: int | None) -> StepRecord:
        """``step`` with ``config`` already normalised (``generate`` normalises once for all its steps)."""
        with self._lock:
            if self.seed is None:  # a session replays exactly: the seed is fixed at its first step
                self.seed = int(config.seed)
                self.generator.manual_seed(self.seed)
            self.prefill(capture_attention)
            reason = self.stop_reason(config)
            if reason is not None:
                raise GenerationStopped(f"Generation has stopped: {reason[1]}. "
                                        "Undo, Reset, or change the settings to go on.")
            t0 = time.perf_counter()
            logits, context_len = self.pending_logits, len(self.ids)
            try:
                choice = decode.choose(logits, self.ids, config, self.generator, force_token)
            except ValueError as exc:
                raise SessionError(str(exc)) from exc
            if expect_token is not None and not choice.forced and int(choice.token_id) != int(expect_token):
                choice.token_id = int(expect_token)
                self.replay_corrections += 1
            capture = self._want_attention(capture_attention) and self.cache_len < MAX_DECODE_CAPTURE
            self.ids.append(choice.token_id)
            self.pending_logits, fwd_ms, att, rows = self._feed_shared([choice.token_id], capture)
            fed = _Fed(cache_len=self.cache_len, cache_bytes=self.cache_bytes,
                       time_ms=(time.perf_counter() - t0) * 1000.0, forward_ms=fwd_ms, pass_rows=rows,
                       attention=None if att is None else att[:, :, 0, :])
            record = _record(len(self.records) + 1, choice, logits, context_len, fed, self.stop_reason(config))
            self.records.append(record)
            self._trim_attention()
            if len(self.records) > FULL_LOGITS_KEPT:
                self.records[-FULL_LOGITS_KEPT - 1].logits = None  # older steps keep their summary only
            self.version += 1
            return record

    def force(self, token: int | str, config: SamplingConfig, capture_attention: bool | None = None) -> StepRecord:
        """Append a chosen token instead of a sampled one ("what if the model had said ...")."""
        token_id = token if isinstance(token, int) else token_id_for(self.bundle, token)
        return self.step(config, capture_attention=capture_attention, force_token=token_id)

    def generate(self, n: int, config: SamplingConfig, capture_attention: bool | None = None,
                 on_step: Callable[[StepRecord], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> list[StepRecord]:
        """Up to ``n`` steps; ends early on a stop condition or when ``should_stop()`` says so."""
        done: list[StepRecord] = []
        config = config.normalized(self.bundle.spec.vocab)[0]
        if self.stop_reason(config) is not None:
            return done  # already stopped; afterwards each record says whether it stopped
        for _ in range(max(0, int(n))):
            with self._lock:  # the check and its step as one: another thread's step cannot slip in between
                if should_stop is not None and should_stop():
                    break
                rec = self._step(config, capture_attention, None, None)
            done.append(rec)
            if on_step is not None:
                on_step(rec)
            if rec.stop is not None:
                break
        return done

    def undo(self) -> StepRecord | None:
        """Drop the last token: crop one row off the cache and restore the logits and RNG state.

        A recent step's logits are kept, so nothing is recomputed; past that window, the logits of the
        new last position are recomputed with one decode step on the cropped cache. A sliding-window
        model past its window no longer holds the keys that going back needs, so its cache is rebuilt
        with one prefill pass over the kept tokens (``decode.crop_to``).
        """
        with self._lock:
            if not self.records:
                return None
            record = self.records.pop()
            self.ids.pop()
            if not decode.can_crop(self.cache, 1 if record.logits is not None else 2):
                # A sliding window already dropped the keys going back needs: one pass rebuilds the cache.
                rebuilt = decode.crop_to(self.bundle, self.cache, self.ids)
                self.pending_logits = record.logits if record.logits is not None else rebuilt
            elif record.logits is not None:
                self.cache.crop(-1)
                self.pending_logits = record.logits
            else:
                self.cache.crop(-2)
                self.pending_logits = self._feed(self.ids[-1:], False)[0]
            if record.generator_state is not None:
                self.generator.set_state(record.generator_state)
            self.version += 1
            return record


    def attention_bytes(self) -> int:
        """Bytes of captured attention this tab holds (prefill triangle + decode rows)."""
        held = [r.attention for r in self.records] + [None if self.prefill_record is None
                                                      else self.prefill_record.attention]
        return sum(t.numel() * t.element_size() for t in held if t is not None)

    def _trim_attention(self) -> None:
        """Drop the oldest decode rows (then the prefill triangle) until the tab is within its budget."""
        total = self.attention_bytes()
        for rec in self.records:
            if total <= ATTENTION_BUDGET:
                return
            if rec.attention is not None:
                total -= rec.attention.numel() * rec.attention.element_size()
                rec.attention = None
        if total > ATTENTION_BUDGET and self.prefill_record is not None:
            self.prefill_record.attention = None

    def fill_attention(self, full: torch.Tensor) -> int:
        """Fill the attention rows that were not captured from one full-sequence pass, within the budget.

        ``full`` is float [layers, heads, N, N] for the first N tokens of ``ids`` (row q = the query
        at position q). The newest rows are filled first; captured rows are left as they were.
        Returns how many rows were filled.
        """
        with self._lock:
            pre, n = self.prefill_record, int(full.shape[2])
            if pre is None:
                return 0
            full, room = full.to(torch.float16), ATTENTION_BUDGET - self.attention_bytes()
            filled = 0
            for pos in range(min(n, pre.n_tokens + len(self.records)) - 1, pre.n_tokens - 1, -1):
                rec = self.records[pos - pre.n_tokens]
                row_bytes = full[:, :, pos, :pos + 1].numel() * 2
                if rec.attention is None and row_bytes <= room:
                    rec.attention, room, filled = full[:, :, pos, :pos + 1].clone(), room - row_bytes, filled + 1
            triangle_bytes = full[:, :, :pre.n_tokens, :pre.n_tokens].numel() * 2
            if pre.attention is None and n >= pre.n_tokens and triangle_bytes <= room:
                pre.attention = full[:, :, :pre.n_tokens, :pre.n_tokens].clone()
                filled += pre.n_tokens
            return filled


@dataclass(frozen=True)
class _Fed:
    """What feeding the chosen token in left behind: the record's fields that the choice cannot know."""

    cache_len: int
    cache_bytes: int
    time_ms: float
    forward_ms: float
    pass_rows: int
    attention: torch.Tensor | None


def _record(index: int, choice: decode.Choice, logits: torch.Tensor, context_len: int, fed: _Fed,
            stop: tuple[str, str] | None) -> StepRecord:
    """The whole record of one step, built once: the summary of its choice that outlives the full logits,
    and what feeding the token in measured."""
    probs = choice.pipeline.raw_probs
    after = choice.pipeline.probs
    token = int(choice.token_id)
    top = torch.topk(probs, k=min(TOP_STORED, probs.shape[-1])).indices
    return StepRecord(
        index=index, token_id=token, forced=choice.forced, config=choice.config, context_len=context_len,
        prob=float(probs[token]), prob_filtered=float(after[token]), rank=decode.rank_of(probs, token),
        logprob=decode.logprob_of(logits, token), entropy_bits=decode.entropy_bits(probs),
        kept=int(choice.pipeline.kept), generator_state=choice.generator_state, cache_len=fed.cache_len,
        cache_bytes=fed.cache_bytes, time_ms=fed.time_ms, forward_ms=fed.forward_ms, top_ids=top.to(torch.int32),
        top_probs=probs[top].clone(), top_probs_filtered=after[top].clone(), logits=logits,
        attention=fed.attention, stop=stop, pass_rows=fed.pass_rows)


# ---------------------------------------------------------------- prompts and tokens
def encode_prompt(bundle: ModelBundle, prompt: str, chat: bool) -> list[int]:
    """Prompt text → token ids, wrapped in the chat template in chat mode; checked for size."""
    if prompt is None or not prompt.strip():
        raise SessionError("The prompt is empty. Type a few words for the model to continue.")
    tok = bundle.tokenizer
    if chat:
        if not bundle.has_chat_template:
            raise SessionError(f"{bundle.name} has no chat template; switch chat mode off.")
        text = tok.apply_chat_template([{"role": "user", "content": prompt}],
                                       add_generation_prompt=True, tokenize=False)
        ids = tok(text, add_special_tokens=False)["input_ids"]
    else:
        ids = tok(prompt)["input_ids"]
    if not ids:
        raise SessionError("The prompt produced no tokens.")
    limit = bundle.spec.max_positions - 1
    if len(ids) > limit:
        raise SessionError(f"The prompt is {len(ids)} tokens long; {bundle.name} reads at most "
                           f"{bundle.spec.max_positions} positions, and one must be left to generate into.")
    return [int(i) for i in ids]


def token_id_for(bundle: ModelBundle, text: str) -> int:
    """The id of a string that is exactly one token (as it would appear mid-text), else an error."""
    if text is None or text == "":
        raise SessionError("Type the token to force (for example ' mat' with its leading space).")
    tok = bundle.tokenizer
    piece_id = tok.convert_tokens_to_ids(text)
    unk = getattr(tok, "unk_token_id", None)
    if isinstance(piece_id, int) and piece_id >= 0 and piece_id != unk:
        return piece_id
    ids = tok(text, add_special_tokens=False)["input_ids"]
    if len(ids) == 1:
        return int(ids[0])
    pieces = tok.convert_ids_to_tokens(ids)
    raise SessionError(f"{text!r} is not a single token: it splits into {len(ids)} tokens {pieces}. "
                       "Force one of them, or pick a bar in the chart.")


@dataclass(frozen=True)
class SessionSnapshot:
    """A session at one moment, read-only: what exports and other threads read instead of the live session."""
    bundle: ModelBundle
    prompt: str
    chat: bool
    prompt_ids: tuple[int, ...]
    ids: tuple[int, ...]
    seed: int | None
    records: tuple[StepRecord, ...]
    pending_logits: torch.Tensor | None = None  # the next token's logits (None before the prefill); never mutated

    @property
    def prompt_len(self) -> int:
        return len(self.prompt_ids)

    @property
    def generated_ids(self) -> list[int]:
        return list(self.ids[self.prompt_len:])

    def views(self) -> list[TokenView]:
        return token_views(self.bundle.tokenizer, list(self.ids))

