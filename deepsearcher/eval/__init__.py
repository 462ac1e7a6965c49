"""Evaluation: recall@k over gold titles, answer EM/F1, usage; the harness behind ``deepsearcher eval``."""

from deepsearcher.eval.datasets import EvalDataset, EvalQuestion, load_dataset
from deepsearcher.eval.harness import EvalHarness, EvalRow, EvalSummary, collection_name
from deepsearcher.eval.metrics import citation_share, exact_match, normalize_answer, recall_at_k, token_f1

__all__ = [
    "EvalDataset", "EvalHarness", "EvalQuestion", "EvalRow", "EvalSummary", "citation_share", "collection_name",
    "exact_match", "load_dataset", "normalize_answer", "recall_at_k", "token_f1",
]
