"""What the Start here page says: what the app teaches, and two paths through it for a lesson.

Each stop of a path is a replay link (the same format the app writes into the address bar), so a
click opens the page with the prompt, settings and steps already in place. A test opens every link.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

TITLE = "Start here"
WHAT = (
    "This app runs a real language model (SmolLM2-135M-Instruct) on this computer and lets you watch it "
    "write, one token at a time. Each click on **Next token** runs one forward pass and shows what the "
    "model chose from: the scores it gave every token, what temperature, top-k and top-p did to them, "
    "where the new token looked in the text so far, and what the key-value cache saves. Every number "
    "you see is computed or measured live, nothing is precomputed."
)
HOW = (
    "Pick a path below. Each stop opens a page already set up; read the short note, press the buttons "
    "it names, and ask the class the question before anyone clicks. Every page also has its own "
    "explanations, and the **Glossary** defines each term."
)
PATHS_TITLE = "Two paths through the app"


@dataclass(frozen=True)
class Stop:
    """One stop of a path: a page opened by a link, how long to spend, and what to do there."""
    title: str
    page: str  # url path ("" is the step page, served at /)
    params: tuple[tuple[str, str], ...]
    minutes: int
    do: str

    @property
    def link(self) -> str:
        """The relative link that opens this stop (a replay link the app itself understands)."""
        query = urlencode(self.params)
        return f"/{self.page}" + (f"?{query}" if query else "")


CAPITAL = (("prompt", "The capital of France is"), ("cfg_temperature", "0"))
STORY = (("prompt", "Once upon a time, a small robot"), ("cfg_seed", "7"))

SHORT = (
    Stop("The loop, one token at a time", "", CAPITAL + (("steps", "3"),), 10,
         "Press Next token a few times. Before each click, ask which word comes next; then look at the "
         "bar chart of the distribution it was chosen from."),
    Stop("Sampling: temperature, top-k, top-p", "sampling", STORY + (("steps", "2"),), 10,
         "Move the temperature slider from 0.3 to 1.5 and watch the distribution flatten. Then set "
         "top-p to 0.5 and count how many tokens survive."),
    Stop("Attention and the KV cache", "attention", CAPITAL + (("steps", "4"),), 10,
         "Step once and watch the causal triangle gain a row; compare the cache bytes measured from the "
         "tensors with the formula."),
    Stop("Why the cache matters", "cost", CAPITAL, 10,
         "Run the race: one cached step against recomputing everything, at growing lengths."),
    Stop("Wrap-up: how servers go fast", "serving", (), 5,
         "Look at the batching curve: tokens per second grow with the batch while the step time "
         "barely moves."),
)

LONG = (
    Stop("The loop, one token at a time", "", CAPITAL + (("steps", "3"),), 15,
         "Predict each next token before clicking; force an unlikely token and watch what follows."),
    Stop("Sampling: the pipeline stage by stage", "sampling", STORY + (("steps", "2"),), 15,
         "Walk the pipeline: temperature, top-k, top-p, min-p. Draw 1,000 times and compare the "
         "frequencies with the probabilities; run beam search and compare it with greedy."),
    Stop("Attention: where the new token looked", "attention", CAPITAL + (("steps", "4"),), 15,
         "Pick a layer and head; find a head that looks at the previous token and one that looks at the "
         "first token."),
    Stop("The KV cache: memory", "attention", CAPITAL + (("steps", "4"), ("layer", "15"), ("head", "mean")), 10,
         "Open the memory calculator: how big is a 70B model's cache at 4K tokens, with and without "
         "grouped-query attention?"),
    Stop("Naive vs cached: the race", "cost", CAPITAL, 10,
         "Run the race and read the counts: T(T+1)/2 positions naively against T with the cache."),
    Stop("Inside generation", "inside", CAPITAL + (("steps", "6"),), 15,
         "Read the text in one pass (teacher forcing) and check it reproduces every stepped log-prob; "
         "then use the logit lens to see at which layer the answer appears."),
    Stop("How servers go fast", "serving", (), 10,
         "Measure batching, then continuous batching and speculative decoding; explain each speedup, or "
         "why it is slower here."),
)

PATHS = {"A 45-minute lesson": SHORT, "A 90-minute lesson": LONG}


def path_minutes(path: tuple[Stop, ...]) -> int:
    """How long a path takes, from its stops."""
    return sum(stop.minutes for stop in path)


def stop_markdown(number: int, stop: Stop) -> str:
    """One stop as a numbered Markdown item with its link (the titles and notes are ours, not a user's)."""
    return f"{number}. **[{stop.title}]({stop.link})** · {stop.minutes} min — {stop.do}"
