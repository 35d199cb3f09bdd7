"""A generation session: prefill once, then one decode step per call on a KV cache.

The loop the app teaches, written out by hand so every intermediate can be shown::

    logits = model(prompt)              # prefill: every prompt token at once, fills the cache
    repeat:
        scores = processors(logits)     # repetition penalty, temperature, top-k, top-p, min-p
        token  = draw(scores)           # argmax (greedy) or multinomial (sampling)
        logits = model(token, cache)    # decode step: one token in, the cache grows by one row

Invariant: the cache holds exactly the tokens of the sequence, and ``pending_logits`` are the
model's logits for the next position. Each step is recorded in a ``StepRecord``.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from transformers import DynamicCache

from . import sampling, stopping
from .attention import attention_weights, supports_attention
from .config import SamplingConfig
from .loading import ModelBundle
from .tokens import TokenView, sequence_text, token_views

TOP_STORED = 50  # raw-logit entries kept per step for tables (the full logits are kept too)
# Attention is kept in float16 per tab; these bounds keep that memory to tens of MB.
MAX_PREFILL_CAPTURE = 384  # prefill capture stores [layers, heads, P, P]
MAX_DECODE_CAPTURE = 1024  # decode capture stores [layers, heads, cache_len] per step


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


@dataclass
class StepRecord:
    """Everything one decode step decided, enough to redraw any chart or replay it exactly."""

    index: int  # 1-based step number
    token_id: int
    forced: bool
    config: SamplingConfig
    logits: torch.Tensor  # float32 [vocab] on CPU: the raw logits the choice was made from
    context_ids: torch.Tensor  # int32 [context_len]: the sequence before this step
    prob: float  # probability of the chosen token under the model's softmax
    prob_filtered: float  # ... under the distribution actually sampled from
    rank: int  # 1 = the model's favourite
    logprob: float  # natural log of ``prob``
    entropy_bits: float  # entropy of the model's softmax
    kept: int  # tokens left with non-zero probability after the filters
    generator_state: torch.Tensor | None  # RNG state just before the draw (None when not drawn)
    cache_len: int  # positions in the KV cache after this step
    cache_bytes: int  # measured: bytes of every K and V tensor in the cache after this step
    time_ms: float  # the whole step: processors + draw + forward pass
    forward_ms: float  # the decode forward pass alone
    top_ids: list[int] = field(default_factory=list)
    top_logits: list[float] = field(default_factory=list)
    attention: torch.Tensor | None = None  # float16 [layers, heads, cache_len]: the new token's row
    stop: tuple[str, str] | None = None  # (kind, message) when generation stopped at this step

    @property
    def context_len(self) -> int:
        return int(self.context_ids.shape[0])

    def probs_before(self) -> torch.Tensor:
        """The model's full-vocabulary distribution, softmax(logits)."""
        return sampling.probs_from_scores(self.logits)

    def scores_after(self) -> torch.Tensor:
        """The processed scores (recomputed exactly from the stored logits and context)."""
        return sampling.process_logits(self.logits, self.context_ids.long(), self.config)

    def probs_after(self) -> torch.Tensor:
        """The distribution the token was drawn from (one-hot for greedy)."""
        return sampling.filtered_probs(self.scores_after(), self.config)


class Session:
    """One browser tab's generation: its own cache, generator and records; the model is shared."""

    def __init__(self, bundle: ModelBundle, prompt: str, chat: bool = False,
                 capture_attention: bool = False):
        self.bundle = bundle
        self.prompt = prompt
        self.chat = chat
        self.capture_attention = capture_attention
        self._lock = threading.RLock()
        self.prompt_ids = encode_prompt(bundle, prompt, chat)
        self.reset()

    @property
    def lock(self) -> threading.RLock:
        """Hold it to read records, ids and cache as one consistent picture while a step may run."""
        return self._lock

    # ---------------------------------------------------------------- state
    def reset(self) -> None:
        """Back to just the prompt: empty cache, no records; the generator is reseeded on the next step."""
        with self._lock:
            self.seed: int | None = None  # set from the config at the first step after a reset
            self.ids: list[int] = list(self.prompt_ids)
            self.records: list[StepRecord] = []
            self.cache: DynamicCache | None = None
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
        """Bytes held by the cache's K and V tensors, measured from the tensors themselves."""
        if self.cache is None:
            return 0
        return sum(t.numel() * t.element_size() for layer in self.cache.layers
                   for t in (layer.keys, layer.values) if t is not None)

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
        """exp(−mean log-prob) of the generated tokens; 1 would mean the model was certain."""
        if not self.records:
            return float("nan")
        return math.exp(-self.sequence_logprob() / len(self.records))

    # ---------------------------------------------------------------- forward passes
    def _forward(self, input_ids: torch.Tensor, capture: bool) -> tuple[torch.Tensor, float, torch.Tensor | None]:
        """Run tokens through the model on the cache; return last logits, ms, attention rows."""
        model = self.bundle.model
        start_pos = self.cache_len
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = model(input_ids=input_ids.to(self.bundle.device), past_key_values=self.cache,
                        use_cache=True, output_hidden_states=capture)
            logits = out.logits[0, -1].float().cpu()
        if self.bundle.device.type == "cuda":
            torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1000.0
        self.cache = out.past_key_values
        att = None
        if capture:
            with torch.inference_mode():
                att = attention_weights(model, out.hidden_states, self.cache, q_start=start_pos)
            att = att.to(torch.float16).cpu()
        return logits, ms, att

    def _want_attention(self, capture: bool | None) -> bool:
        want = self.capture_attention if capture is None else capture
        return bool(want) and supports_attention(self.bundle.model)

    def prefill(self, capture_attention: bool | None = None) -> PrefillRecord:
        """Process the whole prompt in one pass, filling the cache. Idempotent."""
        with self._lock:
            if self.prefill_record is not None:
                return self.prefill_record
            capture = self._want_attention(capture_attention) and self.prompt_len <= MAX_PREFILL_CAPTURE
            self.cache = DynamicCache(config=self.bundle.config)
            ids = torch.tensor([self.prompt_ids], dtype=torch.long)
            logits, ms, att = self._forward(ids, capture)
            self.pending_logits = logits
            self.prefill_record = PrefillRecord(
                n_tokens=self.prompt_len, time_ms=ms, cache_bytes=self.cache_bytes,
                attention=att,  # [L, H, P, P] or None
            )
            return self.prefill_record

    def next_distribution(self, config: SamplingConfig) -> tuple[torch.Tensor, torch.Tensor]:
        """(model softmax, filtered distribution) for the next token, from the pending logits."""
        config, _ = config.normalized(self.bundle.vocab_size)
        with self._lock:
            self.prefill()
            logits = self.pending_logits
            scores = sampling.process_logits(logits, torch.tensor(self.ids, dtype=torch.long), config)
        return sampling.probs_from_scores(logits), sampling.filtered_probs(scores, config)

    # ---------------------------------------------------------------- stepping
    def stop_reason(self, config: SamplingConfig) -> tuple[str, str] | None:
        """Why the sequence must stop under ``config`` (recomputed, so loosening a limit resumes)."""
        return stopping.stop_reason(
            torch.tensor(self.ids), self.prompt_len, self.generated_text, config.max_new_tokens,
            self.bundle.eos_token_ids, config.stop_sequences)

    def step(self, config: SamplingConfig, capture_attention: bool | None = None,
             force_token: int | None = None) -> StepRecord:
        """One decode step: choose the next token from the pending logits, then feed it in."""
        config, _ = config.normalized(self.bundle.vocab_size)
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
            logits = self.pending_logits
            context = torch.tensor(self.ids, dtype=torch.long)
            scores = sampling.process_logits(logits, context, config)
            generator_state = None
            if force_token is not None:
                token = int(force_token)
                if not 0 <= token < logits.shape[-1]:
                    raise SessionError(f"Token id {token} is outside the vocabulary (0–{logits.shape[-1] - 1}).")
            else:
                if not config.greedy:
                    generator_state = self.generator.get_state()
                token = sampling.draw(scores, config, self.generator)
            probs = sampling.probs_from_scores(logits)
            after = sampling.filtered_probs(scores, config)
            top = torch.topk(logits, k=min(TOP_STORED, logits.shape[-1]))
            capture = self._want_attention(capture_attention) and self.cache_len < MAX_DECODE_CAPTURE
            self.ids.append(token)
            new_logits, fwd_ms, att = self._forward(torch.tensor([[token]], dtype=torch.long), capture)
            self.pending_logits = new_logits
            record = StepRecord(
                index=len(self.records) + 1, token_id=token, forced=force_token is not None,
                config=config, logits=logits, context_ids=context.to(torch.int32),
                prob=float(probs[token]), prob_filtered=float(after[token]),
                rank=sampling.rank_of(probs, token),
                logprob=float(torch.log_softmax(logits.double(), dim=-1)[token]),
                entropy_bits=sampling.entropy_bits(probs), kept=int((after > 0).sum()),
                generator_state=generator_state, cache_len=self.cache_len, cache_bytes=self.cache_bytes,
                time_ms=(time.perf_counter() - t0) * 1000.0, forward_ms=fwd_ms,
                top_ids=top.indices.tolist(), top_logits=top.values.tolist(),
                attention=None if att is None else att[:, :, 0, :],
            )
            record.stop = self.stop_reason(config)
            self.records.append(record)
            return record

    def force(self, token: int | str, config: SamplingConfig, capture_attention: bool | None = None) -> StepRecord:
        """Append a chosen token instead of a sampled one (teacher forcing / "what if")."""
        token_id = token if isinstance(token, int) else token_id_for(self.bundle, token)
        return self.step(config, capture_attention=capture_attention, force_token=token_id)

    def generate(self, n: int, config: SamplingConfig, capture_attention: bool | None = None,
                 on_step: Callable[[StepRecord], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> list[StepRecord]:
        """Up to ``n`` steps; ends early on a stop condition or when ``should_stop()`` says so."""
        done: list[StepRecord] = []
        if self.stop_reason(config.normalized(self.bundle.vocab_size)[0]) is not None:
            return done  # already stopped; afterwards each record says whether it stopped
        for _ in range(max(0, int(n))):
            if should_stop is not None and should_stop():
                break
            rec = self.step(config, capture_attention=capture_attention)
            done.append(rec)
            if on_step is not None:
                on_step(rec)
            if rec.stop is not None:
                break
        return done

    def undo(self) -> StepRecord | None:
        """Drop the last token: crop one row off the cache and restore the logits and RNG state."""
        with self._lock:
            if not self.records:
                return None
            record = self.records.pop()
            self.ids.pop()
            self.cache.crop(-1)
            self.pending_logits = record.logits
            if record.generator_state is not None:
                self.generator.set_state(record.generator_state)
            return record


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
    limit = bundle.max_positions - 1
    if len(ids) > limit:
        raise SessionError(f"The prompt is {len(ids)} tokens long; {bundle.name} reads at most "
                           f"{bundle.max_positions} positions, and one must be left to generate into.")
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
