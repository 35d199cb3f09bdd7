"""What the Start here page says: what the app teaches, and two paths through it for a lesson.

Each stop of a path is a replay link (the same format the app writes into the address bar), so a
click opens the page with the prompt, settings and steps already in place. A test opens every link.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

TITLE = "Start here"
WHAT = (
    "This app runs a real language model (SmolLM2-135M-Instruct by default; the sidebar names the one loaded) on "
    "the computer that serves this page and lets you watch it "
    "write, one token at a time. Each click on **Next token** runs one forward pass and shows what the "
    "model chose from: the scores it gave every token, what temperature, top-k and top-p did to them, "
    "where the new token looked in the text so far, and what the key-value cache saves. Every number "
    "you see is computed or measured live on that computer, except a few published figures (other models' "
    "vocabulary sizes, hosted models' speeds, reading speed), which are cited with their sources."
)
HOW = (
    "Pick a path below. Each stop opens a page already set up; read the short note, press the buttons "
    "it names, and ask the class the question before anyone clicks. Every page also has its own "
    "explanations, and the **Glossary** defines each term."
)
PATHS_TITLE = "Two paths through the app"
TRY_TITLE = "Try it now"
TRY_PROMPT = "A prompt for the model"
TRY_NEXT = "Next token"
TRY_NEXT_HELP = ("One decode step: the model reads the text so far, scores every token of its vocabulary, and "
                 "one token is picked and added. Press again for the next one.")
TRY_WAITING = "Press **Next token**: the model adds one token to this text, shaded by how likely it found it."
TRY_MORE = "See what the last step chose from, on the step page"
TEACH_TITLE = "For teachers"


@dataclass(frozen=True)
class Stop:
    """One stop of the paths: a page opened by a link, what to do there, and its minutes in each path
    (0: not in that path)."""
    title: str
    page: str  # url path of the page (every page opens by its own name)
    params: tuple[tuple[str, str], ...]
    short_minutes: int
    long_minutes: int
    do: str

    @property
    def link(self) -> str:
        """The relative link that opens this stop (a replay link the app itself understands)."""
        query = urlencode(self.params)
        return f"/{self.page}" + (f"?{query}" if query else "")


CAPITAL = (("prompt", "The capital of France is"), ("cfg_temperature", "0"))
STORY = (("prompt", "Once upon a time, a small robot"), ("cfg_seed", "7"))

STOPS = (
    Stop("Opening: what the class will see", "start", (), 3, 5,
         "Say what the class will watch: a real model writing one token at a time on this computer. If the "
         "students have their own screens, press **Start a class** on the lesson path's bar and show its join "
         "code: their pages then follow your steps. Then press **Next stop →**."),
    Stop("The loop, one token at a time", "step", CAPITAL, 8, 12,
         "Before each click on Next token, ask which word comes next; then look at the distribution it was "
         "chosen from. With more time, force an unlikely token and watch what follows."),
    Stop("Tokens: what the model reads", "tokens", (), 5, 8,
         "Type a word the class suggests and read its pieces and ids; ask why \u201cParis\u201d is one token and a "
         "rare name is several. With more time, compare how many tokens the same sentence takes in other scripts."),
    Stop("Sampling: temperature, top-k, top-p", "sampling", STORY + (("steps", "2"),), 8, 12,
         "Move the temperature from 0.3 to 1.5 and watch the distribution flatten; set top-p to 0.5 and count "
         "the tokens that survive. With more time, draw 1,000 times against the probabilities and run beam "
         "search next to greedy."),
    Stop("Attention: where the new token looked", "attention",
         CAPITAL + (("steps", "4"), ("view", "causal-triangle")), 8, 10,
         "Step once and watch the causal triangle gain a row. With more time, find a head that looks at the "
         "previous token and one that looks at the first token."),
    Stop("The KV cache: memory", "attention",
         CAPITAL + (("steps", "4"), ("layer", "15"), ("head", "mean"), ("view", "kv-cache")), 0, 8,
         "Compare the cache bytes measured from the tensors with the formula; in the memory calculator, size a "
         "70B model's cache at 4K tokens with and without grouped-query attention."),
    Stop("Why the cache matters: the race", "cost", CAPITAL, 8, 10,
         "Run the race: one cached step against recomputing everything, at growing lengths; read the counts, "
         "T(T+1)/2 positions naively against T with the cache."),
    Stop("Inside generation", "inside", CAPITAL + (("steps", "6"),), 0, 10,
         "Read the text in one pass (teacher forcing) and check that it gives every stepped log-prob; then "
         "use the logit lens to see at which layer the answer appears."),
    Stop("How servers go fast", "serving", (), 0, 10,
         "Measure the batching curve and ask what happens to the step time and to tokens per second as the "
         "batch grows, before reading them off. With more time, continuous batching and speculative decoding: "
         "explain each speedup, or why it is slower here."),
    Stop("Wrap-up: predict, then check", "start", (), 5, 5,
         "Ask the class the first question below (the tokens pushed through the model without a cache) and the "
         "belief about the KV cache; let them vote before anyone opens an answer. End on the loop: one token per "
         "step, each chosen from a distribution, the cache keeping what was already read."),
)
SHORT = tuple(stop for stop in STOPS if stop.short_minutes)
LONG = tuple(stop for stop in STOPS if stop.long_minutes)
PATHS = {"A 45-minute lesson": SHORT, "A 90-minute lesson": LONG}


def minutes(stop: Stop, path: tuple[Stop, ...]) -> int:
    """The stop's minutes in this path."""
    return stop.short_minutes if path is SHORT else stop.long_minutes


def path_minutes(path: tuple[Stop, ...]) -> int:
    """How long a path takes, from its stops."""
    return sum(minutes(stop, path) for stop in path)


def path_title(path: tuple[Stop, ...]) -> str:
    """A path's heading, its length computed from its stops ("A 45-minute lesson")."""
    return f"A {path_minutes(path)}-minute lesson"


def stop_line(number: int, stop: Stop, path: tuple[Stop, ...]) -> str:
    """One stop beside its button: its minutes and what to do there."""
    return f"{number}. {minutes(stop, path)} min — {stop.do}"


TEACH_PATH = "Teach this path here"
TEACH_PATH_HELP = ("Opens the first stop in this tab. Each stop's page then shows the stop's note on top (in "
                   "presenter mode, behind the bar's **Notes** button) and ← Previous stop / Next stop →; presenter "
                   "mode stays on, and the tab is kept for the whole lesson.")
STOP_HELP = "Open this stop in this tab, set up the way its note assumes, and follow the path from here."
LINKS_TITLE = "The stops as links (to share or bookmark)"


def stop_markdown(number: int, stop: Stop, path: tuple[Stop, ...]) -> str:
    """One stop as a numbered Markdown item with its link (the titles and notes are ours, not a user's)."""
    return f"{number}. **[{stop.title}]({stop.link})** · {minutes(stop, path)} min — {stop.do}"


# ---------------------------------------------------------------- predict, then check
QUIZ_TITLE = "Predict, then check"
QUIZ_INTRO = ("Answer each question before opening its answer. The answers are computed by the app's own "
              "engine (the same code the pages use), not typed in.")
CORRECT, NOT_QUITE = "Right.", "Not quite."


@dataclass(frozen=True)
class Question:
    """One question: the choices, which one is right, and the answer built from the engine's numbers."""
    key: str
    ask: str
    choices: tuple[str, ...]
    right: int
    answer: str  # a format string over ``start.quiz_numbers()``
    topic: str  # the url path of the page that teaches it (each one a stop of the 45-minute path)


QUIZ = (
    Question("naive", "A model writes 100 tokens after a 50-token prompt. Without a KV cache, how many token "
             "positions go through the model in total?", ("150", "about 10,000", "15,000"), 1,
             "Naively, the step choosing each token re-reads everything: 50, then 51, … up to 149 positions, "
             "**{naive_50_100:,}** in all. With the cache the prefill reads the 50 prompt tokens once and each "
             "later step reads one token: **{cached_50_100:,}** (the 100th token never needs to be fed; the "
             "app feeds it anyway so the next distribution is ready, so its cache ends with 150).", "cost"),
    Question("chain", "The model wrote a 3-token answer; at its three steps the chosen tokens had probabilities "
             "0.5, 0.4 and 0.5. How likely was it to write exactly this answer?", ("0.1", "0.47", "1.4"), 0,
             "Each step's distribution is conditioned on the tokens already written, so the probabilities "
             "multiply: {chain_product} = **{chain_p:g}**. Its log is the sum of the steps' log-probs, "
             "**{chain_logp:.2f}** nats: the step page adds them up the same way.", "step"),
    Question("top_p", "Top-p = 0.5 keeps the most likely tokens until their probabilities add up to 0.5. With "
             "probabilities 0.4, 0.3, 0.2 and 0.1, how many tokens can still be drawn?", ("1", "2", "3", "4"), 1,
             "0.4 alone is short of 0.5, so the next token joins: together they hold {top_p_mass:g}. The sampling "
             "pipeline keeps **{top_p_kept:g}** tokens and rescales them to sum to 1: {top_p_probs}.", "sampling"),
)

MYTHS_TITLE = "Four common beliefs: true or false?"
MYTHS = (
    Question("plans", "“The model works out its whole answer before writing it.”", ("true", "false"), 1,
             "False as stated: it commits to one token per step and never revises, with no search over "
             "futures. But it is not blind to what comes later either: probing studies find information about "
             "upcoming tokens in its hidden states.", "step"),
    Question("letters", "“The model reads text letter by letter.”", ("true", "false"), 1,
             "False: it reads **tokens**, pieces of text from a fixed vocabulary. A common word is often one "
             "token, a rare name several, and a space usually belongs to the word after it. The *Tokens* page "
             "splits any text you type.", "tokens"),
    Question("cache", "“The KV cache is a nice-to-have.”", ("true", "false"), 1,
             "False: without it, 1,000 tokens push **{naive_1000:,}** positions through the model (1 + 2 + … "
             "+ 1,000) instead of **{cached_1000:,}**. The *Naive vs KV cache* page measures it.", "cost"),
    Question("choice", "“Writing left to right is a limitation models are stuck with.”", ("true", "false"), 1,
             "False: it is a modelling choice. Masked prediction and diffusion-style models write in other "
             "orders; left-to-right was chosen because it gives a simple training objective (predict the next "
             "token) and matches how text is read.", "step"),
)


def answer_text(question: Question, numbers: dict[str, float | str]) -> str:
    """The question's answer with the engine's numbers filled in."""
    return question.answer.format(**numbers)


FURTHER_TITLE = "Further reading"
FURTHER = (
    "- Radford et al., 2019, *Language Models are Unsupervised Multitask Learners* (GPT-2): one model, "
    "trained only to predict the next token.\n"
    "- Leviathan, Kalman and Matias, 2023, *Fast Inference from Transformers via Speculative Decoding*: "
    "the accept rule used on the *How servers go fast* page.\n"
    "- Kwon et al., 2023, *Efficient Memory Management for Large Language Model Serving with "
    "PagedAttention* (vLLM): the KV cache kept in pages, so many requests share one GPU.\n"
    "- Ainslie et al., 2023, *GQA: Training Generalized Multi-Query Transformer Models*: fewer cached heads.\n"
    "- nostalgebraist, 2020, *interpreting GPT: the logit lens*: reading each layer's guess."
)


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "start": (
        "Each stop is a link that opens its page with the prompt, settings and steps already in place, so the "
        "class sees the same thing.",
        "Open the first stop, then answer one of the questions below before anyone checks it.",
        "Which question below would you ask the class before they touch the app, and what do you expect them "
        "to answer?"),
}


# ---------------------------------------------------------------- an advanced path
# After the 90 minutes: the two lessons no first course needs, with an opening and a wrap-up of their own. Its minutes
# are the stops' long_minutes (``minutes``), its title computed like the others'.
ADVANCED_NAME = "An advanced path, after the 90 minutes"
ADVANCED = (
    Stop("Opening: beyond the loop", "start", (), 0, 5,
         "Say what this hour adds to the loop the class already knows: what training measures, how positions "
         "reach the cache, why the same request can answer differently, and three tricks servers use. If the "
         "students have their own screens, press **Start a class** on the lesson path's bar first. Then press "
         "**Next stop →**."),
    Stop("Under the hood: loss, positions, determinism", "hood", CAPITAL + (("steps", "6"),), 0, 20,
         "Compute the loss of the text in one pass and set each token's term beside the log-prob its step "
         "recorded; feed the last token one position late and watch the logits move; then compute your last "
         "step alone and in a shared batch, and compare the difference with the gap between the top two tokens."),
    Stop("More serving tricks: shared prefixes, grammars, speculation", "tricks", CAPITAL, 0, 20,
         "Before running anything, ask how many tokens one speculative round should give at α = 0.8 and k = 4, "
         "then check it on the chart; open the prompt in many tabs with and without the prefix cache; and "
         "constrain the same prompt to a JSON schema and to a list of choices, beside its unconstrained answer."),
    Stop("Wrap-up: what was measured", "start", (), 0, 5,
         "Ask the class which of today's numbers would change on a GPU server and which would not (the loss, the "
         "rotation angles, a near-tie's gap); let them vote before anyone checks."),
)
PATHS[ADVANCED_NAME] = ADVANCED
COUNT_WORDS = ("One", "Two", "Three", "Four", "Five", "Six")
PATHS_TITLE = f"{COUNT_WORDS[len(PATHS) - 1]} paths through the app" if len(PATHS) <= len(COUNT_WORDS) else PATHS_TITLE
