"""Throughput-against-size plots from the runner's JSON: one PNG per family and device, with
myops, torch (first baseline) and the bandwidth floor (the measured copy bandwidth).

    python benchmarks/plot.py benchmarks/results/cpu-2026-11-24.json
"""

import collections
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def plot(json_path):
    with open(json_path) as f:
        data = json.load(f)
    meta, rows = data["meta"], data["rows"]
    stem = os.path.splitext(json_path)[0]
    written = []
    by_family = collections.defaultdict(list)
    for r in rows:
        if r.get("series") and r.get("bytes") and r.get("numel"):
            by_family[r["family"]].append(r)
    for fam, frows in by_family.items():
        if fam == "latency":
            written.append(plot_latency(frows, meta, f"{stem}-{fam}.png"))
            continue
        series = collections.defaultdict(list)
        for r in frows:
            series[r["series"]].append(r)
        series = {k: v for k, v in series.items() if len({r["numel"] for r in v}) >= 2}
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(10, 5))
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (name, srows) in enumerate(sorted(series.items())):
            srows.sort(key=lambda r: r["numel"])
            xs = [r["numel"] for r in srows]
            c = colors[i % len(colors)]
            ax.plot(xs, [r["bytes"] / r["myops_s"] / 1e9 for r in srows], "o-", color=c, label=f"myops {name}")
            base = next(iter(srows[0]["baselines"]))
            ax.plot(
                xs,
                [r["bytes"] / r["baselines"][base]["s"] / 1e9 for r in srows],
                "x--",
                color=c,
                label=f"{base} {name}",
            )
        ax.axhline(meta["copy_GBps"], color="k", lw=1, ls=":", label=f"floor: copy {meta['copy_GBps']:.0f} GB/s")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s (bytes that must move / time)")
        ax.set_title(f"{fam} — {meta['device_name']} — torch {meta['torch']} — {meta['date']}", fontsize=9)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        out = f"{stem}-{fam}.png"
        fig.savefig(out, dpi=110)
        plt.close(fig)
        written.append(out)
        print(f"wrote {out}")
    return written


def plot_latency(rows, meta, out):
    """Per-call time of myops and torch for every op, one panel per size (bars, log scale)."""
    sizes = sorted({r["numel"] for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 4.8), sharey=True)
    if len(sizes) == 1:
        axes = [axes]
    for ax, n in zip(axes, sizes):
        srows = [r for r in rows if r["numel"] == n]
        labels = [r["label"] for r in srows]
        ys = range(len(srows))
        my = [r["myops_s"] * 1e6 for r in srows]
        base = [next(iter(r["baselines"].values()))["s"] * 1e6 for r in srows]
        ax.barh([y + 0.2 for y in ys], my, height=0.4, label="myops")
        ax.barh([y - 0.2 for y in ys], base, height=0.4, label="torch")
        ax.set_yticks(list(ys))
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("µs per call")
        ax.set_title(f"{n} elements", fontsize=9)
        ax.grid(True, axis="x", which="both", alpha=0.3)
    axes[0].invert_yaxis()
    axes[-1].legend(fontsize=8)
    fig.suptitle(f"latency — {meta['device_name']} — torch {meta['torch']} — {meta['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    for p in sys.argv[1:]:
        plot(p)
