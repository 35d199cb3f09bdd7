"""autoreg_core: the engine behind the autoreg explainer, usable from a notebook.

Three wings: ``engine`` steps one session (torch + transformers only, and neither other wing);
``runtime`` lets many sessions on a server share one model (the cross-tab batcher, the forward-slot
limiter, the prefix cache); ``experiments`` holds what the lessons compute, each returning every
intermediate so a page can draw any stage of it.

    from autoreg_core import load_model, Session, SamplingConfig
    bundle = load_model()                       # the embedded SmolLM2-135M-Instruct
    s = Session(bundle, "The cat sat on the")
    rec = s.step(SamplingConfig(temperature=0))  # one greedy decode step
"""
from .engine.config import SamplingConfig
from .engine.loading import (
                      EMBEDDED_MODEL,
                      ModelBundle,
                      ModelLoadError,
                      UnknownModelError,
                      allowed_models,
                      bundle_from_model,
                      load_model,
)
from .engine.session import GenerationStopped, PrefillRecord, Session, SessionError, StepRecord, token_id_for

__all__ = [
    "EMBEDDED_MODEL", "GenerationStopped", "ModelBundle", "ModelLoadError", "PrefillRecord",
    "SamplingConfig", "Session", "SessionError", "StepRecord", "UnknownModelError", "allowed_models",
    "bundle_from_model", "load_model", "token_id_for",
]
