"""The stepping machine: one session's prefill, decode steps, sampling and replay; torch + transformers only."""
