"""Every sentence of class mode: the Class page, the sidebar's Start a class, a follower's step page."""
from __future__ import annotations

from autoreg_core.experiments.guess_score import POINTS_PER_BIT, points
from autoreg_ui.format import p_is, percent

TITLE = "Class"
START_BUTTON = "Start a class"
START_HELP = ("Make a class: students join with a short code, follow your steps on their own screens, guess "
              "the next token before the model shows its choice, and sample from your text all at once.")
INTRO = ("In a class the teacher's tab leads: it steps the model, and every following student's screen shows "
         "the same text within a couple of seconds. The teacher can ask the class to guess the next token and "
         "reveal the guesses beside the model's own distribution, or have every student's tab draw its own "
         "continuation and merge them into one tree.")
NO_CLASS = ("This tab is in no class. A teacher starts one with **Start a class** above; a student opens the "
            "link the teacher shows, or types its code here.")
START_HERE = "Teaching? Start a class: your students join with its code and follow your steps."
CODE_BOX = "Class code"
NICK_BOX = "Nickname (optional, shown to your teacher only if they turn names on)"
JOIN_BUTTON = "Join"
CLASS_GONE = "This class has ended or expired."

# ---------------------------------------------------------------- the teacher
TEACHER_HEADER = "Your class"
THIS_TAB_LEADS = ("This tab leads the class: the class's text is what you do here. Another tab opened with "
                  "this address first shows the class's current text, and leads from its first action on.")
OTHER_TAB_LEADS = ("Another tab with your teacher key moved the class's text last, so it leads; this tab shows "
                   "the class's current text and leads again from your next action here.")
JOIN_WITH = "Students join at"
JOIN_FOLDED = "Class code {code}: the join link and its QR code"
NO_TAB_LEADS_YET = ("No tab with your teacher key has acted on the class since this server started: the class's "
                    "text is the one it had, and the tab you act in next leads.")


def lead_line(leads: bool | None) -> str:
    """Which of the teacher's tabs leads, as ``live.leads`` says (None: none has acted since the server started)."""
    if leads is None:
        return NO_TAB_LEADS_YET
    return THIS_TAB_LEADS if leads else OTHER_TAB_LEADS


KEY_WARNING = ("This tab's address holds your **teacher key**: it lets this tab lead the class and come back to "
               "it after a reload or a server restart. Never share this address (hide the address bar when "
               "you project, e.g. full screen); share the join link above.")
QR_ALT = "QR code of the join link"
SEATS = "{joined} joined · {following} following · {exploring} exploring on their own"
WHERE_HEADER = "Where the class is"
WHERE_COLUMNS = ["page", "following", "exploring"]
NO_STUDENTS = "Nobody has joined yet."
TEACHER_TEXT = ("The text the class follows. Step it on **Step through generation** (every following student "
                "sees each step within about 2 s), or here with a question's Reveal.")
TEACHER_SETTINGS = "Settings the class sees: {settings}."
NO_TEXT_YET = "No text yet: start a prompt on **Step through generation**; the class sees it within 2 s."
NAMES_TOGGLE = "Show nicknames"
BOARD_TOGGLE = "Leaderboard"
REMOVE_WHO = "Remove a student"
REMOVE_BUTTON = "Remove"
REMOVED = "Removed: that tab has left the class."
END_BUTTON = "End the class…"
END_CONFIRM = ("End the class? Every student's page stops following, and everything the class held (its questions, "
               "guesses, scores and rounds) is deleted from this server. Download the class record first to keep it.")
END_SURE = "Yes, end the class and delete it"
END_KEEP = "Keep the class running"
END_DONE = "The class has ended; everything it held was deleted."
RECORD_CSV = "Class record (CSV)"
RECORD_JSON = "Class record (JSON)"
RECORD_HANDOUT = "Hand-out with the class record (HTML, works offline)"
RECORD_HELP = ("The steps of the text on your screen now, every question with the class's scored tokens, "
               "probabilities, ranks and points, the leaderboard if it is on, and every sampling round with its "
               "draws and its tree. A question's or a round's step number counts in the text on screen at the "
               "time, which may be an earlier one. Students are numbered unless Show nicknames is on; the text of "
               "their guesses is left out.")
RECORD_HEADER = "Class {code}: the class record"
BOARD_HEADER = "Leaderboard"
ANONYMOUS = "student {n}"

QUESTION_HEADER = "Predict the next token"
ASK_BUTTON = "Ask the class"
ASK_HELP = "Every student gets a box to guess the token the model will pick next."
REVEAL_BUTTON = "Reveal"
REVEAL_HELP = "Close the guesses, show them beside the model's distribution, then take the step."
MOVE_ON_BUTTON = "Close the question"
ANSWERS_IN = "**Answers in: {n} of {seated}**"
ASK_AGAIN_WARNING = ("{n} answers are in for the open question. Asking again closes it without a reveal and "
                     "drops them; **Reveal** keeps them.")
ASK_AGAIN_BUTTON = "Ask again and drop them"
ASK_KEEP_BUTTON = "Keep the question"
STOPPED = "The teacher's text has stopped ({why}): undo or reset it on the step page before asking."
MOVED = "the text moved since the question"

REVEAL_CHART = "The class's guesses beside the model's probabilities"
CLASS_SHARE = "share of the class"
MODEL_PROB = "model probability"
GUESS_COLUMNS = ["who", "guess", "scored token", "model probability", "rank", "score"]
COUNT_COLUMNS = ["scored token", "guesses", "model probability", "rank", "points each"]
TYPED_TOGGLE = "Show what students typed"
TYPED_HELP = ("Off: the page shows the tokens the guesses were scored as and how many guessed each, never the "
              "text a student typed. On: a table of every guess as typed, on this page only (the record never "
              "holds it).")
BOARD_COLUMNS = ["who", "points"]
SCORE_RULE = (f"A guess scores 100 points minus {POINTS_PER_BIT:.0f} per bit of surprisal (−log₂ p), never below 0: "
              f"a token the model gives p = ½ scores {points(0.5):.0f}, p = 1/1024 scores {points(1 / 1024):.0f}. "
              "A guess of several tokens is scored "
              "by its first token, in the spelling (with or without a leading space) the model finds likelier.")
RAW_NOTE = "both before the repetition penalty, temperature and filters"  # the record's prob and rank: raw softmax
MODEL_CHOSE = "The model drew {token} (model probability {p}, rank {rank}, " + RAW_NOTE + ")."
CLASS_BEST = "The class's most common guess: {token} ({count} of {n}); its model probability {prob}."
CLASS_TIE = "No single most common guess: {tokens} tie ({count} each of {n})."
NO_GUESSES = "Nobody guessed."

DESK_CODE = "Class {code}"
DESK_CODE_HELP = "The join link and its QR code, to show your students again."
DESK_NO_TEXT = "Start a prompt on **Step through generation** to ask the class or have it sample."
DESK_GUESSES = "Guesses ({n})"
DESK_GUESSES_HELP = "The guesses beside the model's probabilities, counted by scored token."
DESK_TREE = "The tree"
DESK_DRAWS = "**Draws in: {n} of {following} following**"
DESK_TREE_HELP = "The draws of this round merged into one tree."


def desk_sample_help(tokens: int, temperature: float, greedy: bool = False) -> str:
    """Everyone sample on the desk: the round's own length and temperature (the Class page sets others);
    ``greedy``: the teacher's own settings are greedy, so the round's temperature is not theirs (say why)."""
    why = " (your settings are greedy; at 0 every draw would take the most likely token)" if greedy else ""
    return (f"Each following student's tab draws up to {tokens} tokens after your text (fewer if the model ends "
            f"the text) with its own seed, at temperature {temperature:g}{why} and your other settings. The Class "
            "page lets you pick the length and temperature.")


SAMPLE_HEADER = "Everyone samples"
SAMPLE_INTRO = ("Every following student's tab draws its own continuation of your text, with its own seed and "
                "your settings (at the temperature chosen here). The draws are merged into one tree: a branch's "
                "number says how many students went that way. Run it again at another temperature and compare.")
SAMPLE_TOKENS = "Tokens per student"
SAMPLE_TEMPERATURE = "Temperature for this round"
SAMPLE_BUTTON = "Everyone sample"
SAMPLE_HELP = "Each student's tab draws a continuation of your text with its own seed."
SAMPLE_CLOSE = "Stop sampling"
SAMPLE_DRAWN = "Draws in: {n} of {following} following students."
TREE_CHART = "{n} draws of {tokens} tokens at temperature {temperature:g}: the class's prefix tree"
TREE_ROOT = "your text"
ROUNDS_HEADER = "Rounds so far"
ROUNDS_COLUMNS = ["round", "after step", "temperature", "draws", "different first tokens",
                  "share of the most common first token", "different draws"]
SHOW_ROUND = "Show the tree of round"
NO_DRAWS = "No draws yet: following students' tabs draw within a couple of seconds."

# ---------------------------------------------------------------- a student
STUDENT_HEADER = "Class {code}"
YOU_ARE = "You are in class {code}{as_name}."
AS_NAME = " as {name}"
FOLLOWING = "Following the teacher: this page updates by itself."
FOLLOWING_HERE = ("You are following your teacher (class {code}): this page shows the teacher's text and "
                  "updates by itself. Press **Explore on my own** to take over from here.")
EXPLORING = "You are exploring on your own; the class goes on without you."
EXPLORING_HERE = ("This is your own text, taken over from class {code}; the class goes on without you. "
                  "**Follow again** shows the teacher's text here.")
EXPLORE_BUTTON = "Explore on my own"
CLASS_AT_STOP = "The class is at stop {number} of {total}: **{title}**."
EXPLORE_STOP = "Explore on my own there"
EXPLORE_STOP_HELP = ("Open this stop's page in your tab, set up as the teacher's lesson sets it, and try it yourself; "
                     "the class goes on. To follow again, open the **Class** page and press **Follow again**.")
EXPLORE_HELP = "Start your own session from exactly this point, on the step page."
FOLLOW_BUTTON = "Follow again"
LEAVE_BUTTON = "Leave the class…"
LEAVE_CONFIRM = "Leave the class? Your teacher's text and questions stop reaching this tab."
LEAVE_SURE = "Yes, leave"
LEAVE_STAY = "Stay in the class"
SIDEBAR_FOLLOWING = ("While you follow your teacher, the teacher's model and settings make the text. Your own "
                     "settings are kept as you left them: they come back when you press **Explore on my own**.")
ROUND_MOVED_ON = ("The teacher's text has moved on since this sampling round began: your tab draws in the "
                  "teacher's next round.")
CODE_TOO_LONG = "A class code is at most {limit} characters; this box holds {n}. Type the code your teacher shows."
NICK_TOO_LONG = "A nickname is at most {limit} characters; this one has {n}. Shorten it and press Join again."
GUESS_TOO_LONG = "A guess is at most {limit} characters; this one has {n}. Shorten it and send it again."
ABOUT_CLASS = "About class mode"
WAITING = "Waiting for the teacher to start a prompt."
REMOVED_YOU = "Your teacher removed you from this class."
SETTINGS_LINE = "The teacher's settings: {settings}."
GUESS_BOX = "Your guess"
GUESS_HELP = "A word or a token: what will the model write next?"
GUESS_SEND = "Send my guess"
GUESS_KEPT = "Your guess “{text}” is in. You can change it until the teacher reveals."
FEED_RECONNECTING = "Reconnecting to the class… the text below is the last one received."
FEED_CONNECTING = "Reconnecting to the class…"  # no text received yet: nothing below to speak of
LAST_STEP_CHART = "The teacher's step {n}: the candidates and the one picked"
REBUILT = ("Rebuilt the teacher's text from the class record (this server restarted, or the teacher's tab is on "
           "another replica): {steps} steps replayed.")
YOUR_DRAW = "Your tab drew (seed {seed}):"
ROUND_SETTINGS = "This round's settings: {settings}."
DRAW_FAILED = "Your tab could not draw: {why}"


def pct(prob: float) -> str:
    """A probability as a percentage that never reads 0.0% for a token the model did give a chance (``percent``)."""
    return percent(prob)


def model_chose(token: str, prob: float, rank: int) -> str:
    return MODEL_CHOSE.format(token=token, p=p_is(prob), rank=rank)


def class_best(token: str, count: int, n: int, prob: float) -> str:
    return CLASS_BEST.format(token=token, count=count, n=n, prob=pct(prob))


def class_tie(tokens: list[str], count: int, n: int) -> str:
    return CLASS_TIE.format(tokens=", ".join(tokens[:-1]) + " and " + tokens[-1], count=count, n=n)


def record_note(names_on: bool) -> str:
    """Who the record names, as the class had it when the record was made."""
    who = ("Students are named by the nicknames they chose (Show nicknames was on); one who chose none is "
           "numbered in the order they joined." if names_on else
           "Students are numbered in the order they joined (Show nicknames was off).")
    return (f"{who} Questions and rounds are numbered in the order this class had them; their step numbers count in "
            "the text on screen at the time, which may be an earlier text than this hand-out's. A guess is listed by "
            "the token it was scored as, not by what was typed.")


def after_step(step: int) -> str:
    """Where a question or a round was in its text: steps count from 1, so 0 steps is right after the prompt."""
    return "after the prompt" if step == 0 else f"after step {step}"


def record_question(number: int, step: int, drew: str | None, prob: float | None, rank: int | None) -> str:
    """A question's heading in the hand-out: which token it asked for and, once revealed, what the model drew."""
    head = f"Question {number}: the token {after_step(step)}"
    if drew is None or prob is None:
        return head + " (not revealed)"
    return f"{head}; the model drew {drew} (model probability {p_is(prob)}, rank {rank}, {RAW_NOTE})"


def record_round(number: int, step: int, temperature: float, draws: int, tokens: int) -> str:
    """A round's heading in the hand-out: a draw ends early when the model ends the text, hence "up to"."""
    return (f"Round {number}: {draws} draw{'s' if draws != 1 else ''} of up to {tokens} "
            f"token{'s' if tokens != 1 else ''} {after_step(step)}, at temperature {temperature:g}")


def several_tokens(n: int) -> str:
    return f"(a guess of {n} tokens, scored by its first)"


def your_score(text: str, token: str, prob: float, rank: int, score: float, tokens: int) -> str:
    extra = f" {several_tokens(tokens)}" if tokens > 1 else ""
    return (f"Your guess “{text}” was scored as the token {token}{extra}: the model gave it {p_is(prob)}, "
            f"rank {rank}, so **{score:.1f} points**.")


def total_score(total: float, questions: int) -> str:
    return f"Your total: {total:.1f} points over {questions} revealed question{'s' if questions != 1 else ''}."


def settings_text(config: dict, round_tokens: int | None = None) -> str:
    """A recipe's settings in a line: greedy, or the temperature and every filter that is on. For a sampling
    round (``round_tokens``): its own temperature and filters, how many tokens each student draws, and no seed
    (each student's tab draws with its own)."""
    if float(config.get("temperature", 1.0)) <= 0:
        parts = ["greedy (temperature 0)"]
    else:
        parts = [f"temperature {float(config['temperature']):g}"]
        if int(config.get("top_k", 0)):
            parts.append(f"top-k {int(config['top_k'])}")
        if float(config.get("top_p", 1.0)) < 1:
            parts.append(f"top-p {float(config['top_p']):g}")
        if float(config.get("min_p", 0.0)) > 0:
            parts.append(f"min-p {float(config['min_p']):g}")
        if round_tokens is None:
            parts.append(f"seed {int(config.get('seed', 0))}")
    if float(config.get("repetition_penalty", 1.0)) != 1:
        parts.append(f"repetition penalty {float(config['repetition_penalty']):g}")
    if round_tokens is None:
        parts.append(f"at most {int(config.get('max_new_tokens', 64))} new tokens")
    else:
        parts.append(f"at most {round_tokens} token{'s' if round_tokens != 1 else ''} per student")
    return " · ".join(parts)


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    QUESTION_HEADER: (
        "The orange bars are the class's guesses, the blue ones the model's probabilities for the same tokens at "
        "the same step: where they meet, the class thought like the model.",
        "Ask the class at a point where the next word is obvious, then again where it is open; compare how the "
        "guesses and the model's bars spread.",
        "A guess the model gave 1% scored far fewer points than one it gave 50%. Is the model's favourite always "
        "the right answer?"),
    SAMPLE_HEADER: (
        "Each box is a token after the boxes to its left; its width and number are how many students' draws "
        "took that branch. One wide branch means the class agreed.",
        "Sample at temperature 0.3, then at 1.5, and compare the rounds table: how many different first tokens?",
        "Every student used the same text and settings; why did their continuations differ, and what would make "
        "them all equal?"),
}
