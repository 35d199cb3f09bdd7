"""Figures for the sampling lab: the pipeline stage by stage, the draw, many draws, the temperature
sweep, the strategies side by side (``pipeline``), and the beam search tree (``beam``)."""
from autoreg_ui.lessons.sampling.figures.beam import beam_tree_figure, beams_frame, tree_layout
from autoreg_ui.lessons.sampling.figures.pipeline import (
           draw_figure,
           draws_figure,
           pipeline_figure,
           strategies_figure,
           sweep_figure,
)

__all__ = ["beam_tree_figure", "beams_frame", "tree_layout", "draw_figure", "draws_figure", "pipeline_figure",
           "strategies_figure", "sweep_figure"]
