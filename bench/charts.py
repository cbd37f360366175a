"""SVG charts of a benchmark record, one per workload (W1 region reads, W2 large 1-D arrays).

Each case is a group of horizontal bars: zarrxt, its floor and every peer that ran it, at the
median time of the kept trials, with a whisker from the fastest to the slowest trial (the floor of
a multi-threaded case is derived, max(floor_1 / P, bytes / bandwidth), so it has no whisker of its
own). The time axis is logarithmic: the cases span four orders of magnitude. Drawn with Debian's
python3-matplotlib; the output is deterministic for a given record (no date, fixed element ids),
so regenerating a committed chart changes nothing.

    harness.py --charts RECORD.json [--charts-dir DIR]    (scripts/bench --charts RECORD.json)
"""

import os

SERIES = ["zarrxt", "floor", "python3-zarr", "gdal", "zarrita"]
LABELS = {"zarrxt": "zarrxt", "floor": "floor", "python3-zarr": "python3-zarr 2.13", "gdal": "GDAL", "zarrita": "zarrita"}
COLORS = {
    "zarrxt": "#1f77b4",
    "floor": "#9a9a9a",
    "python3-zarr": "#2ca02c",
    "gdal": "#d62728",
    "zarrita": "#ff7f0e",
}
W1_ARRAYS = {
    "v2_gzip": "v2 gzip",
    "v3_raw": "v3 raw",
    "v3_gzip": "v3 gzip",
    "v3_sharded": "v3 sharded",
    "index_stress": "index stress",
}


def _spread(s):
    """(median, min, max) in ms of a summary {"median", "min", "max"}."""
    return (s["median"] / 1e6, s["min"] / 1e6, s["max"] / 1e6)


def case_bars(case):
    """The bars of one case: {series: (median, min, max)} in ms."""
    bars = {"zarrxt": _spread(case["ours"]["ns"])}
    floor = case.get("floor") or {}
    if case.get("threads", 1) == 1 and "ns_1thread" in floor:
        bars["floor"] = _spread(floor["ns_1thread"])
    elif "ns" in floor:
        v = floor["ns"] / 1e6
        bars["floor"] = (v, v, v)
    for peer, p in sorted(case.get("peers", {}).items()):
        bars[peer] = _spread(p["ns"])
    return bars


def w1_label(case):
    name = W1_ARRAYS.get(case["array"], case["array"])
    label = "%s %d²" % (name, case["extent"])
    if case["array"] == "index_stress":
        label += {"lru": ", LRU cache warm", "none": ", no cache"}.get(case["cache"], ", " + case["cache"])
    if case["threads"] != 1:
        label += ", %d threads" % case["threads"]
    return label


def w2_label(case):
    return "%s%s %s %s, %d thread%s" % (
        "" if case.get("n", 100_000_000) == 100_000_000 else "%.0e elements, " % case["n"],
        case["layout"],
        case["data"].replace("_", "-"),
        case["codec"],
        case["threads"],
        "" if case["threads"] == 1 else "s",
    )


def _panel(ax, groups, title):
    """Horizontal grouped bars; `groups` is [(label, {series: (median, min, max)})]."""
    y = 0.0
    ticks, names, seen = [], [], set()
    for label, bars in groups:
        first = y
        for s in [s for s in SERIES if s in bars]:
            med, lo, hi = bars[s]
            err = [[med - lo], [hi - med]] if hi > lo else None
            ax.barh(
                y,
                med,
                height=0.85,
                color=COLORS[s],
                xerr=err,
                error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333333"},
                label=None if s in seen else LABELS[s],
            )
            ax.text(hi * 1.08, y, ("%.3g" % med), va="center", fontsize=6.5, color="#333333")
            seen.add(s)
            y += 1.0
        ticks.append((first + y - 1.0) / 2.0)
        names.append(label)
        y += 0.9
    ax.set_yticks(ticks)
    ax.set_yticklabels(names, fontsize=8)
    ax.set_ylim(y - 0.5, -0.9)
    ax.set_xscale("log")
    ax.set_xlabel("ms (median; whiskers: fastest and slowest trial)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", which="both", color="#e4e4e4", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=10)
    lo = min(b[1] for _, bars in groups for b in bars.values())
    hi = max(b[2] for _, bars in groups for b in bars.values())
    ax.set_xlim(lo / 2.0, hi * 4.0)
    return y


def _subtitle(rec):
    m = rec["machine"]
    return "record %s; %s, %d cores; %s; %d kept trials per case, each a fresh process" % (
        rec["id"],
        m["cpu_model"],
        m["cores"],
        "%s, %s build" % (rec["build"]["compiler_version"], rec["build"]["options"].get("buildtype", "?")),
        rec["settings"]["trials"],
    )


def render(rec, out_dir):
    """Writes <id>-w1.svg and <id>-w2.svg (for the workloads the record has) into out_dir; returns the paths."""
    import matplotlib

    matplotlib.use("svg")
    matplotlib.rcParams["svg.hashsalt"] = "zarrxt-bench"  # stable element ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    written = []

    if rec.get("w1"):
        groups = [(w1_label(c), case_bars(c)) for c in rec["w1"]]
        bars = sum(len(b) for _, b in groups)
        fig, ax = plt.subplots(figsize=(9.0, 1.2 + 0.17 * bars + 0.16 * len(groups)))
        _panel(ax, groups, "W1: region reads of a 4096 x 4096 uint16 array at [7, 11]")
        ax.legend(loc="lower right", fontsize=8, framealpha=0.95)
        fig.text(0.01, 0.005, _subtitle(rec), fontsize=6.5, color="#555555")
        fig.tight_layout(rect=(0, 0.015, 1, 1))
        path = os.path.join(out_dir, rec["id"] + "-w1.svg")
        fig.savefig(path, metadata={"Date": None})
        plt.close(fig)
        written.append(path)

    if rec.get("w2"):
        reads = [(w2_label(c), case_bars(c)) for c in rec["w2"] if c["op"] == "read"]
        writes = [(w2_label(c), case_bars(c)) for c in rec["w2"] if c["op"] == "write"]
        panels = [(g, t) for g, t in ((reads, "reads"), (writes, "writes")) if g]
        bars = max(sum(len(b) for _, b in g) for g, _ in panels)
        groups = max(len(g) for g, _ in panels)
        fig, axes = plt.subplots(1, len(panels), figsize=(7.0 * len(panels), 1.4 + 0.17 * bars + 0.16 * groups))
        if len(panels) == 1:
            axes = [axes]
        for ax, (g, t) in zip(axes, panels):
            _panel(ax, g, "W2: whole 1e8-element uint8 arrays, %s (layout, data, codec, threads)" % t)
            ax.legend(loc="lower right", fontsize=8, framealpha=0.95)
        fig.text(
            0.01,
            0.005,
            _subtitle(rec)
            + ". Layouts: a 1e5-element chunks; b one chunk per shard; c one shard of 1,000 chunks"
            + ("; v2 Zarr v2 as a (python3-zarr's)." if any(c["layout"] == "v2" for c in rec["w2"]) else "."),
            fontsize=6.5,
            color="#555555",
        )
        fig.tight_layout(rect=(0, 0.015, 1, 1))
        path = os.path.join(out_dir, rec["id"] + "-w2.svg")
        fig.savefig(path, metadata={"Date": None})
        plt.close(fig)
        written.append(path)
    return written
