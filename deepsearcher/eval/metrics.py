"""Evaluation metrics: retrieval recall@k over gold titles, SQuAD answer exact match and token F1, citation share.

Recall@k follows the reference system's 2WikiMultiHopQA evaluation (zilliztech/deep-searcher ``evaluation/evaluate.py``,
after HippoRAG): the share of distinct gold titles found among the titles of the first k retrieved chunks. EM and F1
use the SQuAD v1.1 answer normalisation (Rajpurkar et al. 2016, the official ``evaluate-v1.1.py``): lower-case,
drop punctuation, drop the articles a/an/the, collapse whitespace.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Sequence

from deepsearcher.agents.citations import cited_numbers, strip_citations

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def recall_at_k(retrieved_titles: Sequence[str], gold_titles: Iterable[str] | None, k: int) -> float | None:
    """Share of distinct gold titles among the first ``k`` retrieved titles.

    Args:
        retrieved_titles: titles of the retrieved chunks, best first. A title can repeat (several chunks of one
            passage); each of the first k positions counts, so repeats take room as they do for the reader.
        gold_titles: the gold supporting titles. Repeats count once (MuSiQue titles are not unique).
        k: cut-off, > 0.

    Returns:
        A value in [0, 1], or None when there is no gold title (the question is left out of the mean, not scored 0).

    Raises:
        ValueError: k < 1.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    gold = {t for t in (gold_titles or []) if t}
    if not gold:
        return None
    top = set(retrieved_titles[:k])
    return len(gold & top) / len(gold)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lower-case, remove punctuation and articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold_answers: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer, else 0.0 (0.0 with no gold)."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in gold_answers if g is not None))


def token_f1(prediction: str, gold_answers: Sequence[str]) -> float:
    """Best SQuAD token F1 of the prediction against any gold answer (bag of normalised tokens)."""
    pred_tokens = normalize_answer(prediction).split()
    best = 0.0
    for gold in gold_answers:
        if gold is None:
            continue
        gold_tokens = normalize_answer(gold).split()
        if not pred_tokens or not gold_tokens:
            best = max(best, float(pred_tokens == gold_tokens))
            continue
        common = Counter(pred_tokens) & Counter(gold_tokens)
        same = sum(common.values())
        if same == 0:
            continue
        precision, recall = same / len(pred_tokens), same / len(gold_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


#: "yes" / "no" standing as an answer: at a line's end or before punctuation ("No.", "**Yes**", "No [1]", "Answer:
#: no"), not a determiner before a noun ("no answer is given", "no relevant information")
_POLAR = {"yes", "no"}


def _says(prediction: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){word}(?![\w-])[ \t]*(?:[^\w\s]|$)", prediction, re.IGNORECASE | re.MULTILINE) \
        is not None


def cover_match(prediction: str, gold_answers: Sequence[str]) -> float:
    """1.0 when a normalised gold answer appears in the normalised prediction as whole words (cover-EM), else 0.0.

    A yes/no gold answer must stand as an answer (``_says``): measured on our chain_of_rag's HotpotQA rows, the
    refusal "… so no answer is given …" covered the gold "no" once in every run of 20 (2026-12-03)."""
    pred = f" {normalize_answer(prediction)} "
    for gold in gold_answers:
        norm = normalize_answer(gold) if gold is not None else ""
        if not norm:
            continue
        if norm in _POLAR:
            if _says(prediction, norm):
                return 1.0
        elif f" {norm} " in pred:
            return 1.0
    return 0.0


def citation_share(answer: str, source_numbers: Iterable[int], removed: int = 0) -> float | None:
    """Share of the citations the model wrote that resolve to a source.

    Args:
        answer: the final answer text (after unresolved citations were removed, if the agent removes them).
        source_numbers: numbers of the report's sources.
        removed: citations the agent already dropped because they resolved to nothing.

    Returns:
        resolved / (all citations written), or None when the model cited nothing.
    """
    numbers = set(source_numbers)
    cited = cited_numbers(answer)
    resolved = sum(1 for n in cited if n in numbers)
    total = len(cited) + removed
    return None if total == 0 else resolved / total


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None
