"""The sampling settings of one generation, shared by every page through the sidebar."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

MAX_NEW_TOKENS_CAP = 2048


@dataclass(frozen=True)
class SamplingConfig:
    """How the next token is chosen. Frozen and passed per call: the model is never mutated.

    temperature 0 means greedy (argmax); top_k 0, top_p 1, min_p 0 and repetition_penalty 1 mean
    "off", exactly as in ``transformers.GenerationConfig``.
    """

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    seed: int = 0
    max_new_tokens: int = 64
    stop_sequences: tuple[str, ...] = field(default_factory=tuple)

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def normalized(self, vocab_size: int) -> tuple[SamplingConfig, list[str]]:
        """Clamp out-of-range values into what the warpers accept; say what was changed and why."""
        notes: list[str] = []
        changes: dict = {}
        if self.temperature < 0:
            changes["temperature"] = 0.0
            notes.append("Temperature below 0 is meaningless; using 0 (greedy).")
        if self.top_k < 0:
            changes["top_k"] = 0
            notes.append("top-k below 0 turns the filter off (0).")
        elif self.top_k > vocab_size:
            changes["top_k"] = 0
            notes.append(f"top-k {self.top_k} is larger than the vocabulary ({vocab_size}); it keeps "
                         "every token, so the filter is off.")
        if not 0.0 <= self.top_p <= 1.0:
            changes["top_p"] = min(max(self.top_p, 0.0), 1.0)
            notes.append("top-p must lie between 0 and 1; clamped.")
        if not 0.0 <= self.min_p <= 1.0:
            changes["min_p"] = min(max(self.min_p, 0.0), 1.0)
            notes.append("min-p must lie between 0 and 1; clamped.")
        if self.repetition_penalty <= 0:
            changes["repetition_penalty"] = 1.0
            notes.append("Repetition penalty must be positive; using 1 (off).")
        if self.max_new_tokens < 1 or self.max_new_tokens > MAX_NEW_TOKENS_CAP:
            changes["max_new_tokens"] = min(max(self.max_new_tokens, 1), MAX_NEW_TOKENS_CAP)
            notes.append(f"max new tokens must lie between 1 and {MAX_NEW_TOKENS_CAP}; clamped.")
        stops = tuple(s for s in self.stop_sequences if s)
        if stops != self.stop_sequences:
            changes["stop_sequences"] = stops
        if not self.greedy:
            if (changes.get("top_p", self.top_p)) == 0.0:
                notes.append("top-p 0 keeps only the single most likely token (like greedy).")
            if (changes.get("min_p", self.min_p)) == 1.0:
                notes.append("min-p 1 keeps only the tokens tied with the most likely one.")
        return (replace(self, **changes) if changes else self), notes

    @staticmethod
    def parse_stop_sequences(text: str) -> tuple[str, ...]:
        """One stop sequence per line; ``\\n`` written literally stands for a newline."""
        out = []
        for line in text.splitlines():
            if line == "":
                continue
            out.append(line.replace("\\n", "\n").replace("\\t", "\t"))
        return tuple(out)


GREEDY = SamplingConfig(temperature=0.0)  # argmax at every step: the one greedy config of the engine
