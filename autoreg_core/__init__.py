"""autoreg_core: the engine behind the autoreg explainer, usable from a notebook.

    from autoreg_core import load_model, Session, SamplingConfig
    bundle = load_model()                       # the embedded SmolLM2-135M-Instruct
    s = Session(bundle, "The cat sat on the")
    rec = s.step(SamplingConfig(temperature=0))  # one greedy decode step
"""
from .config import SamplingConfig
from .loading import (
                      EMBEDDED_MODEL,
                      ModelBundle,
                      ModelLoadError,
                      UnknownModelError,
                      allowed_models,
                      bundle_from_model,
                      load_model,
)
from .session import GenerationStopped, PrefillRecord, Session, SessionError, StepRecord, token_id_for

__all__ = [
    "EMBEDDED_MODEL", "GenerationStopped", "ModelBundle", "ModelLoadError", "PrefillRecord",
    "SamplingConfig", "Session", "SessionError", "StepRecord", "UnknownModelError", "allowed_models",
    "bundle_from_model", "load_model", "token_id_for",
]
