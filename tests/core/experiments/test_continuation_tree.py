"""Merging a class's draws into a prefix tree: every node counted, parents first, siblings most taken first."""
from autoreg_core.experiments.continuation_tree import ROOT, distinct_at, merge, top_share


def test_draws_merge_by_common_prefix_with_counts():
    draws = [(5, 6, 7), (5, 6, 8), (5, 9), (4,), (5, 6, 7)]
    tree = merge(draws)
    assert [(b.id, b.parent, b.token, b.depth, b.count) for b in tree] == [
        ("5", ROOT, 5, 1, 4), ("4", ROOT, 4, 1, 1),
        ("5/6", "5", 6, 2, 3), ("5/9", "5", 9, 2, 1),
        ("5/6/7", "5/6", 7, 3, 2), ("5/6/8", "5/6", 8, 3, 1)]
    assert sum(b.count for b in tree if b.depth == 1) == len(draws)  # the first tokens account for every draw
    for b in tree:  # a node's children never count more than it
        assert sum(c.count for c in tree if c.parent == b.id) <= b.count


def test_how_far_a_tree_fans_out():
    agreed, spread = merge([(1, 2)] * 4), merge([(1,), (2,), (3,), (1,)])
    assert distinct_at(agreed, 1) == 1 and top_share(agreed, 4) == 1.0
    assert distinct_at(spread, 1) == 3 and top_share(spread, 4) == 0.5
    assert merge([]) == [] and top_share([], 0) == 0.0
