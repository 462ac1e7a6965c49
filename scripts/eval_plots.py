"""Plot recall vs k (from scripts/eval_retrieval.py results) and latency vs collection size (scripts/bench_retrieval.py).

Usage:
    python scripts/eval_plots.py --recall results.json [--recall-label "2Wiki, 839 questions"] \
        --latency bench.json [--latency more.json ...] --out docs/
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_recall(results: dict, out: Path, label: str) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, summary in results["modes"].items():
        recall = {int(k): v for k, v in summary["recall_complete"].items()}
        ks = sorted(recall)
        ax.plot(ks, [recall[k] for k in ks], marker="o", label=mode)
    ax.axhline(0.594, color="grey", linestyle=":", linewidth=1)
    ax.annotate("reference naive dense R@5 0.594", (5, 0.594), textcoords="offset points", xytext=(4, -12),
                fontsize=8, color="grey")
    ax.set_xlabel("k (chunks retrieved)")
    ax.set_ylabel("Recall@k of gold titles")
    ax.set_xticks([1, 2, 5, 10])
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title(f"Recall@k — {label}", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_latency(benches: list[dict], out: Path) -> None:
    """p95 wall latency and mean CPU per query vs size, one colour per Milvus engine (bench JSON "engine"; a JSON
    with "runs" holds several engines of one run)."""
    benches = [run for bench in benches for run in bench.get("runs", [bench])]
    by_engine: dict[str, dict[int, dict]] = {}
    for bench in benches:
        engine = bench.get("engine", "milvus-lite 3.x (earlier run)")
        for size, entry in bench["sizes"].items():
            by_engine.setdefault(engine, {})[int(size)] = entry
    colours = iter(["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    all_ns: list[int] = []
    for engine, sizes in sorted(by_engine.items()):
        colour = next(colours)
        ns = sorted(sizes)
        all_ns += ns
        for mode, marker in (("dense", "o"), ("hybrid", "^")):
            have = [n for n in ns if mode in sizes[n]]
            if not have:  # e.g. hybrid on a server without full-text search
                continue
            ax.plot(have, [sizes[n][mode]["p95_ms"] for n in have], marker=marker, color=colour,
                    linestyle="-" if mode == "dense" else "--", label=f"{engine}: {mode} p95 wall")
            cpu = [n for n in have if "cpu_mean_ms" in sizes[n][mode]]
            if cpu:
                ax.plot(cpu, [sizes[n][mode]["cpu_mean_ms"] for n in cpu], marker=marker, color=colour,
                        linestyle=":", alpha=0.6, label=f"{engine}: {mode} mean CPU")
    ax.axhline(50, color="grey", linestyle=":", linewidth=1)
    ax.annotate("aim: p95 50 ms at 100k", (min(all_ns), 50), textcoords="offset points", xytext=(2, 3), fontsize=8,
                color="grey")
    if max(all_ns) >= 1_000_000:
        ax.plot([1_000_000], [200], marker="_", markersize=20, color="grey")
        ax.annotate("aim: 200 ms at 1M", (1_000_000, 200), textcoords="offset points", xytext=(-60, 5), fontsize=8,
                    color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the collection")
    ax.set_ylabel("embed + search per query (ms)")
    ax.set_title("Milvus query latency vs size, by engine; shared 2-core machine", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6.5)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--recall", default=None)
    parser.add_argument("--recall-label", default="2WikiMultiHopQA, 839 questions, complete gold")
    parser.add_argument("--latency", nargs="*", default=[])
    parser.add_argument("--out", default="docs")
    args = parser.parse_args()
    out = Path(args.out)
    if args.recall:
        plot_recall(json.loads(Path(args.recall).read_text()), out / "recall_vs_k.png", args.recall_label)
    if args.latency:
        plot_latency([json.loads(Path(p).read_text()) for p in args.latency], out / "latency_vs_size.png")


if __name__ == "__main__":
    main()
