"""Evaluation metrics against hand-computed values."""

from __future__ import annotations

import pytest

from deepsearcher.eval.metrics import (
    citation_share,
    cited_numbers,
    exact_match,
    mean,
    normalize_answer,
    recall_at_k,
    strip_citations,
    token_f1,
)


class TestRecallAtK:
    def test_counts_gold_titles_in_the_first_k(self) -> None:
        retrieved = ["A", "B", "A", "C"]
        assert recall_at_k(retrieved, ["A", "C"], 1) == 0.5
        assert recall_at_k(retrieved, ["A", "C"], 2) == 0.5
        assert recall_at_k(retrieved, ["A", "C"], 4) == 1.0
        assert recall_at_k(retrieved, ["A", "C"], 10) == 1.0  # k beyond the list

    def test_repeated_retrieved_title_counts_once_and_takes_room(self) -> None:
        # three chunks of passage A fill the top 3, so B (4th) is outside @3
        assert recall_at_k(["A", "A", "A", "B"], ["A", "B"], 3) == 0.5
        assert recall_at_k(["A", "A", "A", "B"], ["A", "B"], 4) == 1.0

    def test_repeated_gold_title_counts_once(self) -> None:
        # MuSiQue: a title can be gold twice; the gold set is {A, B}
        assert recall_at_k(["A"], ["A", "A", "B"], 1) == 0.5
        assert recall_at_k(["B", "A"], ["A", "A", "B"], 2) == 1.0

    def test_four_gold_titles(self) -> None:
        assert recall_at_k(["X", "G1", "Y", "G3", "Z"], ["G1", "G2", "G3", "G4"], 5) == 0.5

    @pytest.mark.parametrize("gold", [None, [], [""]])
    def test_missing_gold_is_none_not_zero(self, gold: list[str] | None) -> None:
        assert recall_at_k(["A", "B"], gold, 2) is None

    def test_no_retrieval_is_zero(self) -> None:
        assert recall_at_k([], ["A"], 5) == 0.0

    def test_k_must_be_positive(self) -> None:
        with pytest.raises(ValueError):
            recall_at_k(["A"], ["A"], 0)


class TestAnswerMetrics:
    @pytest.mark.parametrize("raw, expected", [
        ("The  Eiffel Tower!", "eiffel tower"),
        ("an apple a day", "apple day"),
        ("U.S.A.", "usa"),
        ("Theatre, the", "theatre"),
        ("  20 March 851 ", "20 march 851"),
        ("", ""),
    ])
    def test_squad_normalisation(self, raw: str, expected: str) -> None:
        assert normalize_answer(raw) == expected

    def test_exact_match_after_normalisation_against_any_alias(self) -> None:
        assert exact_match("The answer.", ["answer"]) == 1.0
        assert exact_match("Stanley Hall", ["G. Stanley Hall", "stanley hall"]) == 1.0
        assert exact_match("answers", ["answer"]) == 0.0
        assert exact_match("x", []) == 0.0

    def test_token_f1_hand_computed(self) -> None:
        # pred tokens: barack obama was president (4); gold: obama (1); overlap 1 -> P=1/4, R=1, F1=0.4
        assert token_f1("Barack Obama was president", ["Obama"]) == pytest.approx(0.4)
        # pred: march 851 (2); gold: 20 march 851 (3); overlap 2 -> P=1, R=2/3, F1=0.8
        assert token_f1("March 851", ["20 March 851"]) == pytest.approx(0.8)
        # best over aliases
        assert token_f1("March 851", ["nothing", "20 March 851"]) == pytest.approx(0.8)
        assert token_f1("the", ["a"]) == 1.0  # both normalise to no tokens
        assert token_f1("Paris", ["London"]) == 0.0

    def test_token_f1_counts_repeated_tokens_as_a_bag(self) -> None:
        # pred: new new york (3); gold: new york (2); overlap min counts: new 1 + york 1 = 2 -> P=2/3, R=1, F1=0.8
        assert token_f1("new new york", ["New York"]) == pytest.approx(0.8)


class TestCitations:
    def test_strip_citations_before_scoring_answers(self) -> None:
        assert strip_citations("It died on 20 March 851 [1][3].") == "It died on 20 March 851 ."
        assert exact_match(strip_citations("20 March 851 [2]"), ["20 March 851"]) == 1.0

    def test_cited_numbers_in_order(self) -> None:
        assert cited_numbers("a [2] b [10][1] c [2]") == [2, 10, 1, 2]

    def test_share_counts_removed_citations_as_unresolved(self) -> None:
        # written: [1] [3] [1] plus one already removed; resolve: the two [1]s -> 2/4
        assert citation_share("x [1] y [3] z [1]", [1, 2], removed=1) == 0.5
        assert citation_share("x [1] y [2]", [1, 2]) == 1.0
        assert citation_share("no citations", [1]) is None


def test_mean_skips_none() -> None:
    assert mean([None, 1.0, 0.0]) == 0.5
    assert mean([None]) is None
