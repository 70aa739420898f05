"""The leave-one-conversation-out cross-validation of bench/locomo/cv.py on made-up lists:
parameters are chosen without the held-out project, and the floor is calibrated from
questions asked in the wrong project."""

from __future__ import annotations

import importlib

import pytest

from search_svc.fusion import fuse

pytestmark = pytest.mark.unit


def load_cv():
    return importlib.import_module("bench.locomo.cv")


def case(cv, project: str, index: int, answer: str, cross_similarity: float):
    """The answer is the lexical top and a close vector neighbour; in the wrong project the
    best neighbour reaches `cross_similarity`."""
    own = ([(answer, 9.0), ("noise", 2.0)], [(answer, 0.2), ("noise", 0.7)])
    cross = ([("other", 1.0)], [("other", 1.0 - cross_similarity)])
    return cv.Case((project, index), project, 4, frozenset({answer}), own, cross, "elsewhere")


def test_every_held_out_project_is_scored_with_parameters_chosen_without_it():
    cv = load_cv()
    cases = [case(cv, p, i, f"{p}-{i}", 0.3 + i / 100) for p in ("a", "b", "c") for i in range(10)]
    result = cv.CrossValidation(cases, lambda project, dia: 0).run()
    assert [fold.held_out for fold in result.folds] == ["a", "b", "c"]
    assert set(result.ranked_cv) == {c.key for c in cases}
    assert cv.recall_at(cases, result.ranked_cv) == 1.0
    assert result.nothing_found_cv >= 0.8  # the gate sits at the 90th percentile of wrong-project tops
    assert all(fold.floor.keep <= fold.floor.gate for fold in result.folds)


def test_the_gate_lets_at_most_the_target_share_of_wrong_project_questions_through():
    cv = load_cv()
    cases = [case(cv, "a", i, f"a-{i}", i / 100) for i in range(100)]
    own = {c.key: fuse(*c.own) for c in cases}
    cross = {c.key: fuse(*c.cross) for c in cases}
    floor = cv.calibrate_floor(cases, own, cross, bm25_weight=0.0)
    assert cv.NOTHING_FOUND_TARGET == 0.93
    assert floor.gate == pytest.approx(0.921, abs=0.01)
    through = sum(1 for c in cases if max(f.similarity or 0 for f in cross[c.key]) >= floor.gate)
    assert through <= 7


def test_the_wordless_gate_is_calibrated_on_the_wrong_project_questions_without_a_lexical_candidate():
    cv = load_cv()
    cases = [case(cv, "a", i, f"a-{i}", 0.5 + i / 200) for i in range(100)]
    wordless = [cv.Case(("b", i), "b", 4, frozenset({f"b-{i}"}), cases[0].own, ([], [("other", 1.0 - i / 100)]),
                        "elsewhere") for i in range(100)]
    both = cases + wordless
    own = {c.key: fuse(*c.own) for c in both}
    cross = {c.key: fuse(*c.cross) for c in both}
    floor = cv.calibrate_floor(both, own, cross, bm25_weight=0.0)
    assert floor.wordless_gate == pytest.approx(0.96, abs=0.01)  # 97% of 0.00..0.99 under it
    assert cv.calibrate_floor(cases, own, cross, bm25_weight=0.0).wordless_gate is None  # too few of them
