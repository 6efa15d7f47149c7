"""Summarises several `make bench` runs (issue 14): for every judged row of
taskkey-bench's table, the key figure of each run (the ratio to the floor or
peer, the share of the floor's throughput, or the measured value), its median
and range over the runs, and in how many runs the goal was met.

    for i in 1 2 3; do make bench > .build/bench-$i.log; done
    python3 scripts/bench_summary.py .build/bench-1.log .build/bench-2.log .build/bench-3.log

Prints a Markdown table. Each ratio is a same-run figure; the range is across
runs.
"""
import re
import statistics
import sys


def key_figure(measured: str) -> str:
    """The figure a goal is judged on, as printed, with its unit."""
    ratios = re.findall(r"[\d.]+x\b", measured)
    if ratios:
        return ratios[-1]
    share = re.search(r"[\d.]+ of floor", measured)
    if share:
        return share.group(0)
    found = re.search(r"[\d.]+\s*(k values/s|µs/call|ms|s\b|MiB)?", measured)
    return found.group(0).strip() if found else measured


def summary(figures: list) -> str:
    """`median unit (min-max)`, or the figures as printed if not numbers."""
    try:
        values = [float(re.match(r"[\d.]+", figure).group(0)) for figure in figures]
    except AttributeError:
        return ", ".join(figures)
    unit = re.sub(r"^[\d.]+\s*", "", figures[0])
    spacer = "" if unit in ("", "x") else " "
    return "%g%s%s (%g-%g)" % (statistics.median(values), spacer, unit, min(values), max(values))


def rows(path: str) -> list:
    found = []
    with open(path, encoding="utf-8") as log:
        for line in log:
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) != 6 or cells[0] in ("check", "---") or cells[5] == "(reported)":
                continue
            found.append(cells)
    return found


def main(paths: list) -> None:
    order, table = [], {}
    for path in paths:
        for name, size, measured, _spread, goal, result in rows(path):
            key = (name, size)
            if key not in table:
                order.append(key)
                table[key] = {"goal": goal, "figures": [], "met": 0}
            rss = re.search(r"peak RSS ([\d.]+ MiB)", measured)
            if rss:
                table[key].setdefault("rss", []).append(rss.group(1))
            table[key]["figures"].append(key_figure(measured))
            table[key]["met"] += result == "met"
    print("| check | size | median (min-max) over %d runs | goal | met |" % len(paths))
    print("|---|---|---|---|---|")
    for name, size in order:
        entry = table[(name, size)]
        figures = summary(entry["figures"])
        if "rss" in entry:
            figures += ", peak RSS " + summary(entry["rss"])
        print("| %s | %s | %s | %s | %d/%d |" % (name, size, figures, entry["goal"], entry["met"], len(paths)))


if __name__ == "__main__":
    main(sys.argv[1:])
