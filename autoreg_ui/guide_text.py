"""The folded Notice / Try / Ask box of every view: what to look at, one thing to change, one question for
the class. Keyed by the view's own heading or tab label (the pages pass it), so a renamed view fails a test.
"""
from __future__ import annotations

from autoreg_ui.lessons.inside.text import TTFT_MEANS

TITLE = "Notice · Try · Ask"
LIVE_PANEL = "This server, right now"  # the serving page's live panel (its heading there: serving_text.LIVE_TITLE)
NOTICE, TRY, ASK = "Notice", "Try", "Ask"

GUIDES: dict[str, tuple[str, str, str]] = {
    # ---- step page
    "This step's distribution": (
        "The pale bars are the model's own softmax; the dark ones are what is left after temperature, top-k, "
        "top-p and min-p. The outlined bar is the token that was picked.",
        "Set the temperature to 0, step, then set it to 1.5 and step again: compare how many bars stay tall.",
        "Why can a token with only 5% probability still be picked, and how often would you expect it?"),
    "Force the next token": (
        "These are the candidates for the next token before anything is drawn: the model has already done its "
        "work, only the choice is left.",
        "Click an unlikely bar to force it, then step a few times and watch the text bend around that choice.",
        "After a forced mistake, does the model ever go back and fix it? Why not?"),
    "The chain rule, running": (
        "Every bar is the log-probability of one chosen token; the line is their running sum, the log-probability "
        "of the whole continuation. It never goes up: a probability is at most 1.",
        "Force one very unlikely token and see how far the line drops at that step.",
        "Two continuations of the same length: which one did the model find more likely, and how can you tell?"),
    "History": (
        "Each row is one decode step: the token, its probability before and after the filters, its rank, the "
        "entropy of the distribution and the time the step took.",
        "Sort by entropy: are the uncertain steps the ones where the text could have gone several ways?",
        "Why does the cache length grow by exactly one per row?"),
    # ---- attention page
    "1 · Where it looked": (
        "One row of weights per head: how much the newest token's query drew from each earlier position. Each "
        "row adds up to 1.",
        "Step a few times and switch between layers 0, 15 and 29: where does the weight go in each?",
        "Look at the weight on the very first token in several heads. Where a head puts a lot there, what might "
        "that token be doing for it?"),
    "2 · Causal triangle": (
        "Each row is a query, each column a key; everything above the diagonal is empty because a token may not "
        "look at tokens after it.",
        "Press Next token and watch the triangle gain exactly one row and one column.",
        "If earlier rows never change when a token is added, what does the model not need to recompute?"),
    "3 · Grouped-query attention": (
        "Several query heads share one stored key/value head: the colours show which queries read the same cache.",
        "Compare the heads of one group: do queries that share keys still look at different places?",
        "What does sharing K and V between heads save, and what might it cost?"),
    "4 · KV cache": (
        "The cache bytes are measured from the tensors themselves and set next to the formula "
        "2 × layers × KV heads × head size × positions × bytes.",
        "Step ten times and check that the measured size grows by the same amount every step.",
        "Why is the cache exact: why would recomputing the old keys and values give the same numbers?"),
    "5 · Memory calculator": (
        "The same formula, for models you cannot run here: the cache grows with layers, KV heads, length and batch.",
        "Pick the 70B model at 4K tokens, then switch grouped-query attention off and compare the totals.",
        "For a long chat, which becomes the bigger problem: the weights or the cache?"),
    "6 · Prefill vs decode": (
        "The prefill reads the whole prompt in one pass; each decode step reads one new token. Compare the time "
        "per token of each: does reading every weight once for many tokens make a prompt token cheaper?",
        "Lengthen the prompt and step again: which of the two times moves?",
        "Why does the first token of an answer take longer to appear than the ones after it?"),
    # ---- sampling lab
    "The pipeline, stage by stage": (
        "The logits pass through each processor in a fixed order (repetition penalty, temperature, top-k, top-p, "
        "min-p); every stage shows what it removed or reshaped.",
        "Turn on top-k = 5 and top-p = 0.5 together: which one ends up deciding?",
        "Does the order of top-k and top-p matter, and can you think of a case where it would?"),
    "The draw": (
        "A draw is one uniform random number placed on the cumulative distribution: the token whose slice it "
        "lands in is picked. The seed fixes that number.",
        "Change the seed a few times and note how often the top token wins.",
        "With the same seed and the same settings, will the draw ever differ? Why does that matter for a demo?"),
    "Draw many": (
        "Drawing many times builds a histogram that settles on the probabilities; the whiskers show how far a "
        "count may wander by chance.",
        "Draw 100 times, then 10,000 times, and compare the largest gap between frequency and probability.",
        "How many draws would you need to tell a 1% token from a 2% token?"),
    "Temperature sweep": (
        "The same logits at many temperatures: low temperatures pile the mass on the leader, high ones spread it.",
        "Find the temperature at which the top token drops below one half.",
        "Why does temperature 0 mean 'always the top token' rather than 'divide by zero'?"),
    "2 · Strategies side by side": (
        "The same prompt continued by greedy decoding and by sampling with different settings, side by side.",
        "Run it twice with different seeds: which columns change and which stay put?",
        "Which strategy would you want for code, and which for a story?"),
    "3 · Continuations": (
        "Several continuations drawn from the same start show how far sampling can wander from one prompt.",
        "Raise the temperature and draw again: when do the continuations stop making sense?",
        "Do low-probability tokens early in a continuation change everything after them?"),
    "4 · Beam search": (
        "Beam search keeps the few most likely partial texts at each step instead of one; pruned beams are grey.",
        "Compare beam width 1 (greedy) with 4: does the best beam start with the greedy token?",
        "Beam search is standard in translation but rare in chat. Why might it make open-ended text dull?"),
    # ---- cost page
    "1 · The race": (
        "Each point is measured now: one cached step against recomputing the whole text, at growing lengths.",
        "Run the race to a longer length and watch where the two lines part.",
        "Which part of a cached step's work grows with the length of the text, and which part stays the same?"),
    "2 · Count, don't just time": (
        "The counts come from the model's shape: naively the T-th token re-reads T positions, so the total "
        "grows as T(T+1)/2; with the cache it grows as T.",
        "Double T and check how each total changes.",
        "Timing depends on the machine; counting does not. Which would you trust to compare two laptops?"),
    "3 · Is a decode step memory-bound?": (
        "A decode step reads every weight and the whole cache for one token. Its arithmetic intensity (FLOPs per "
        "byte read) against this processor's ridge point says which of the two sets its pace.",
        "Compare the intensity of a cached step with a naive step at the same length.",
        "What would serving many users in one step do to this intensity, and to the cost of each token?"),
    "4 · CPU vs GPU": (
        "The ratio between naive and cached steps depends on the hardware: the cache always saves work, but how "
        "much time it saves depends on how much parallel compute is idle.",
        "Read the speed-up at the longest length you measured and compare it with the count ratio.",
        "Would the gap between naive and cached be smaller or larger on a big GPU at short lengths?"),
    # ---- inside generation
    "1 · Training reads the whole text at once; generation cannot": (
        "One forward pass over the whole text gives the log-prob of every token; the table sets them next to the "
        "numbers the stepping produced one by one.",
        "Force a token on the step page, come back, and see where the model's own choice differs from the text.",
        "If training can read a whole text in one pass, why can't generation?"),
    "2 · The logit lens: a guess after every layer": (
        "Each row reads the hidden state after one layer through the output matrix: the model's guess so far.",
        "Find the layer where the final token first becomes the top guess, for two different steps.",
        "What do the early layers seem to hold, if not the answer?"),
    "3 · Prefill vs decode, in the units people quote": (
        f"Time to first token is {TTFT_MEANS}; after that the speed is tokens per second, one decode step per "
        "token.",
        "Lengthen the prompt and see which of the two quoted figures changes.",
        "A service advertises 100 tokens per second. What did it leave out?"),
    "4 · When the cache runs out": (
        "A model has a fixed context; past it, something must be dropped, and the window shows what the model "
        "can no longer see.",
        "Shrink the window and step: when does the text lose track of the prompt?",
        "What would you keep if you could keep only a few old tokens?"),
    "5 · The whole loop on four tokens": (
        "The scores come from a small table, but the processors, the softmax and the pick are the same code that "
        "steps the real model; each row of the trace is one pass of the loop.",
        "Set the temperature to 1 and try a few seeds: how often does the toy stop at <eos> early?",
        "What can a transformer do that this table cannot, given that both only score the next token?"),
    "6 · From the last hidden state to logits: W·h + b": (
        "Every logit is one dot product between h and a row of W; the sentence above the table says how far the "
        "rebuilt logits are from the model's own.",
        "Step once on the step page and come back: does the winning token also have the largest cos θ?",
        "Why can a token with a long row (large |W_t|) win even when h points less directly at it?"),
    # ---- serving
    "1 · Batching: one weight read, many sequences": (
        "One step for many sequences reads the weights once. Watch two numbers as the batch grows: the time of "
        "one step, and the tokens per second it delivers.",
        "Run the sweep and find the batch at which the step time starts to climb.",
        "Why is a server with many users cheaper per token than a laptop with one?"),
    "2 · Static vs continuous batching": (
        "Static batching waits for the longest request; continuous batching refills a finished slot at once.",
        "Compare the total time and the idle slots of both schedules.",
        "Which users gain most from continuous batching: the short requests or the long ones?"),
    "3 · Speculative decoding": (
        "A cheap draft proposes several tokens and the model checks them all in one pass; the output follows the "
        "model exactly, and the speed depends on how many drafted tokens are kept.",
        "Change the draft and compare its acceptance rate with its speed-up: do the two move together?",
        "Why can a bad draft make generation slower rather than wrong?"),
    "4 · Precision: fewer bytes per weight": (
        "Fewer bits per weight shrink memory and the bytes each step reads; the quality numbers show what "
        "rounding costs, measured against full precision.",
        "Turn the bit dial down until the top-1 agreement collapses.",
        "Weight-only int8 and dynamic int8 both store 8 bits per weight. Which one changes the answers more, "
        "and what does it round that the other does not?"),
    # ---- tokens
    "tokens": (
        "The model never sees letters: it reads ids, each standing for a piece of text, often a word with its "
        "leading space.",
        "Type the same word with and without a capital, and with and without a leading space.",
        "Why might a model be bad at counting the letters in a word?"),
    "scripts": (
        "The same sentence is counted in tokens per character for each script; a character the vocabulary has "
        "no piece for is spelled out in single bytes.",
        "Compare tokens per character for English and Tamil.",
        "Who pays more for the same message when a service charges per token?"),
    "vocabs": (
        "The loaded model's row is read from its tokenizer now; the other rows are published sizes, with where "
        "each is published.",
        "Find the loaded model among the published ones, then type a sentence in another script above and count "
        "its tokens again.",
        "A bigger vocabulary makes texts shorter in tokens but widens the last matrix product of every step. "
        "What else grows with it?"),
    # ---- start page
    "start": (
        "Each stop is a link that opens its page with the prompt, settings and steps already in place, so the "
        "class sees the same thing.",
        "Open the first stop, then answer one of the questions below before anyone checks it.",
        "Which question below would you ask the class before they touch the app, and what do you expect them "
        "to answer?"),
    # ---- class page
    "Predict the next token": (
        "The orange bars are the class's guesses, the blue ones the model's probabilities for the same tokens at "
        "the same step: where they meet, the class thought like the model.",
        "Ask the class at a point where the next word is obvious, then again where it is open; compare how the "
        "guesses and the model's bars spread.",
        "A guess the model gave 1% scored far fewer points than one it gave 50%. Is the model's favourite always "
        "the right answer?"),
    "Everyone samples": (
        "Each box is a token after the boxes to its left; its width and number are how many students' draws "
        "took that branch. One wide branch means the class agreed.",
        "Sample at temperature 0.3, then at 1.5, and compare the rounds table: how many different first tokens?",
        "Every student used the same text and settings; why did their continuations differ, and what would make "
        "them all equal?"),
    # ---- serving page: the live panel
    LIVE_PANEL: (
        "The panel counts this server's forward passes over the last minute by how many rows (tabs' steps) each "
        "one carried.",
        "Open several tabs, or ask the class, and press Next token at the same moment; then refresh and look at "
        "the rows.",
        "If a pass with 8 rows takes little more time than a pass with one, why would that be, and when would "
        "it stop being true?"),
}


def guide_markdown(view: str, notice: str | None = None) -> str:
    """The three lines of a view's box (``notice``: one computed from a measurement, in place of the stored one)."""
    stored, try_this, ask = GUIDES[view]
    notice = notice or stored
    return f"**{NOTICE}:** {notice}\n\n**{TRY}:** {try_this}\n\n**{ASK}:** {ask}"
