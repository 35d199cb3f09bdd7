"""Class mode's charts: the guesses beside the model, and the class's draws as an icicle tree."""
from autoreg_core.experiments.continuation_tree import merge
from autoreg_ui.charts import figure_table
from autoreg_ui.classroom.figures import reveal_bars, reveal_figure, tree_figure


def test_reveal_bars_put_the_most_guessed_first_then_the_models_top_tokens():
    probs = {1: 0.5, 2: 0.2, 3: 0.1, 9: 0.01}
    bars = reveal_bars([9, 2, 9], [1, 2, 3], probs.get, lambda t: f"t{t}")
    assert bars.labels == ["t9", "t2", "t1", "t3"]
    assert bars.class_share == [2 / 3, 1 / 3, 0.0, 0.0]
    assert bars.model_prob == [0.01, 0.2, 0.5, 0.1]
    fig = reveal_figure(bars, "title", "class", "model")
    assert [t.name for t in fig.data] == ["class", "model"] and list(fig.data[1].y) == bars.model_prob


def test_the_tree_has_a_box_per_branch_sized_by_the_students_who_took_it():
    draws = [(5, 6), (5, 7), (4,)]
    fig = tree_figure(merge(draws), len(draws), lambda t: f"tok{t}", "tree", "your text")
    trace = fig.data[0]
    assert trace.type == "icicle" and trace.branchvalues == "total"
    assert list(trace.values) == [3, 2, 1, 1, 1]
    assert list(trace.labels) == ["your text · 3", "tok5 · 2", "tok4 · 1", "tok6 · 1", "tok7 · 1"]
    assert list(trace.parents) == ["", "root", "root", "n5", "n5"]
    table = figure_table(fig)  # its numbers, one click away: one row per box, named by its path
    assert list(table.iloc[:, 0]) == ["your text · 3", "your text · 3 › tok5 · 2", "your text · 3 › tok4 · 1",
                                      "your text · 3 › tok5 · 2 › tok6 · 1", "your text · 3 › tok5 · 2 › tok7 · 1"]
    assert list(table.iloc[:, 1]) == [3, 2, 1, 1, 1]
