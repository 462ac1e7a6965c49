"""Calibrating sub-query dedup: labelled query pairs, false-drop / false-keep rates per threshold, the choice rule.

A pair is *judged duplicate* at threshold t when the cosine of its two embeddings is at least t and — with the
lexical guard — ``deepsearcher.agents.dedup_rules.lexically_distinct`` is False. Two error rates:

- **false drop**: share of different-meaning pairs judged duplicate (the agent would drop a real follow-up; a
  dropped gap query can end the research loop);
- **false keep**: share of same-meaning pairs not judged duplicate (the agent searches the same thing again).

Used by ``scripts/calibrate_dedup.py``; the pairs are ``tests/fixtures/dedup/query_pairs.jsonl``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class QueryPair(BaseModel):
    """One labelled pair of sub-queries.

    Attributes:
        id: unique id, "<lang>-<nn>".
        lang: ISO 639-1 language of both queries.
        kind: why the pair is (not) a duplicate: paraphrase, reorder, synonym, case_punct, abbreviation,
            number_format (same meaning); number, year, version, name, product_variant, negation, antonym, aspect
            (different meaning).
        duplicate: True when both queries ask the same thing (one search answers both).
        a, b: the two queries.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    lang: str = Field(min_length=2)
    kind: str = Field(min_length=1)
    duplicate: bool
    a: str = Field(min_length=1)
    b: str = Field(min_length=1)


def load_pairs(path: Path) -> list[QueryPair]:
    """Read a JSONL file of ``QueryPair`` rows (blank lines skipped).

    Raises:
        ValueError: a line is not JSON or not a valid pair (the message names file and line), or an id repeats.
    """
    pairs: list[QueryPair] = []
    seen: set[str] = set()
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            pair = QueryPair.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise ValueError(f"{path}:{number}: not a query pair: {exc}") from exc
        if pair.id in seen:
            raise ValueError(f"{path}:{number}: id {pair.id!r} repeats")
        seen.add(pair.id)
        pairs.append(pair)
    return pairs


@dataclass(frozen=True)
class SweepRow:
    """Error rates at one threshold.

    Attributes:
        threshold: cosine at or above which a pair is judged duplicate.
        guarded: the lexical guard was applied.
        false_drops / false_keeps: error counts; ``different`` / ``same``: the denominators.
    """

    threshold: float
    guarded: bool
    false_drops: int
    different: int
    false_keeps: int
    same: int

    @property
    def false_drop(self) -> float:
        """Share of different-meaning pairs judged duplicate, in [0, 1] (0 when there are none)."""
        return self.false_drops / self.different if self.different else 0.0

    @property
    def false_keep(self) -> float:
        """Share of same-meaning pairs not judged duplicate, in [0, 1] (0 when there are none)."""
        return self.false_keeps / self.same if self.same else 0.0


def judged_duplicate(cosine: float, distinct: bool, threshold: float, guarded: bool) -> bool:
    """The dedup decision for one pair: cosine reaches ``threshold`` and (with the guard) no anchor differs."""
    return cosine >= threshold and not (guarded and distinct)


def sweep(pairs: Sequence[QueryPair], cosines: Sequence[float], distinct: Sequence[bool],
          thresholds: Sequence[float], guarded: bool) -> list[SweepRow]:
    """False drops and false keeps of ``pairs`` at each threshold.

    Args:
        pairs: the labelled pairs.
        cosines: cosine of each pair's embeddings, same order.
        distinct: ``lexically_distinct(a, b)`` of each pair, same order.
        thresholds: the thresholds to try.
        guarded: apply the lexical guard.

    Raises:
        ValueError: the three sequences differ in length.
    """
    if not len(pairs) == len(cosines) == len(distinct):
        raise ValueError(f"{len(pairs)} pairs, {len(cosines)} cosines, {len(distinct)} guard results")
    same = sum(p.duplicate for p in pairs)
    rows = []
    for t in thresholds:
        judged = [judged_duplicate(c, d, t, guarded) for c, d in zip(cosines, distinct)]
        drops = sum(j and not p.duplicate for p, j in zip(pairs, judged))
        keeps = sum(p.duplicate and not j for p, j in zip(pairs, judged))
        rows.append(SweepRow(float(t), guarded, drops, len(pairs) - same, keeps, same))
    return rows


def choose_threshold(rows: Sequence[SweepRow], false_keep_ceiling: float) -> SweepRow:
    """The row with the fewest false drops among those whose false-keep rate is at most the ceiling.

    Ties go to the higher threshold: false drops only fall as the threshold rises, so among thresholds with equally
    few false drops on the pair set the highest one keeps the widest margin for pairs not in it. When no row meets
    the ceiling, the row with the fewest false keeps (then fewest false drops, then higher threshold) is returned:
    no threshold meets the ceiling, and dedup then removes as many duplicates as it can.

    Raises:
        ValueError: ``rows`` is empty.
    """
    if not rows:
        raise ValueError("no sweep rows to choose from")
    within = [r for r in rows if r.false_keep <= false_keep_ceiling]
    if within:
        return min(within, key=lambda r: (r.false_drops, -r.threshold))
    return min(rows, key=lambda r: (r.false_keeps, r.false_drops, -r.threshold))
