"""What every "Predict, then check" box says whatever its lesson: its title, its intro, and the verdicts.

Each lesson's questions, their choices and answer templates are in that lesson's ``text.py`` (used by its
``questions.py``); ``predict`` fills the templates with numbers the live model or the engine computes when
the learner has answered; nothing here is a result.
"""
from __future__ import annotations

TITLE = "Predict, then check"
INTRO = ("Pick an answer before you look: the check runs only once you have chosen, on the live model or "
         "with the app's own arithmetic.")
CORRECT, NOT_QUITE = "Right.", "Not quite."
NO_SESSION = "Start a prompt first: this check reads the live session."
FAILED = "This check could not run: {error}"

ASKED_AT = ("These questions are about step {step}; after the next click they are asked again, with that "
            "step's numbers.")
