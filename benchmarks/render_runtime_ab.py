"""The table "What each mechanism buys" of ``docs/runtime.md``, rendered from a saved run of
``benchmarks/bench_runtime_ab.py`` (never typed by hand).

    python -m benchmarks.render_runtime_ab [benchmarks/runtime_ab.json] [--doc docs/runtime.md] [--block NAME]
                                            [--check]

Replaces what lies between the lines ``<!-- NAME: begin -->`` and ``<!-- NAME: end -->`` of the document with the
table (``NAME`` is ``runtime-ab`` by default; ``runtime-ab-group`` holds the run of the mechanisms left out
together, ``benchmarks/runtime_ab_group.json``); ``--check`` writes nothing and exits with 1 when the document's
table is not the one the file renders.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
JSON = HERE / "runtime_ab.json"
DOC = HERE.parent / "docs" / "runtime.md"


def _interval(e, scale=1.0, fmt="+.2f") -> str:
    if not e or e.get("value") is None:
        return "not measured"
    v = format(e["value"] * scale, fmt)
    if e.get("lo") is None or e.get("hi") is None:
        return f"{v} (no interval)"
    return f"{v} [{format(e['lo'] * scale, fmt)}, {format(e['hi'] * scale, fmt)}]"


def _per_scheme(row, key, scale, fmt) -> str:
    return ", ".join(f"{s} {format(v[key] * scale, fmt)}" if v.get(key) is not None else f"{s} -"
                     for s, v in row["per_scheme"].items())


def _verdicts(mech: dict) -> str:
    """One sentence: which mechanisms earn their place, which buy nothing, which the run could not tell."""
    groups = {}
    for name, v in mech.items():
        key = ("earn their place" if v["earns"] else "buy nothing measurable" if v.get("nothing") else
               "cannot be told from the baseline")
        groups.setdefault(key, []).append(f"`{name}`")
    if not groups:
        return ""
    return "On this run, " + "; ".join(f"{', '.join(names)} {key}" for key, names in groups.items()) + "."


def _missing(arms: dict, only=None) -> str:
    """A sentence naming the arms the benchmark has now that the saved run did not measure (none, or a run of
    chosen arms, ``--arms``: empty)."""
    from benchmarks.bench_runtime_ab import arms as all_arms

    left = [f"`{a}`" for a in all_arms() if a not in arms] if not only else []
    return f" The saved run has no row for {', '.join(left)} (added to the benchmark after it)." if left else ""


def table(data: dict) -> str:
    """The markdown of the table and the lines that say how it was measured."""
    arms, mech = data["arms"], data["mechanisms"]
    base = arms["baseline"]
    load = data.get("load", {})
    lines = [
        f"Measured {data.get('measured', '(date not recorded)')} with `python -m benchmarks.bench_runtime_ab "
        f"--rounds {data['rounds']} --iterations {data['iterations']} --time-scale {data['time_scale']:g}"
        f"{' --arms ' + ' '.join(data['only']) if data.get('only') else ''}` "
        f"(schemes {', '.join(data['schemes'])}; K = {data['workers']}, {data['stragglers']} straggler; "
        f"{load.get('cores', '?')} cores, load average {load.get('before')} before and {load.get('after')} after; "
        f"{data['seconds']:g} s). Baseline (every mechanism on): median overhead per iteration "
        f"{_per_scheme(base, 'median_overhead_ms', 1.0, '.2f')} ms; measured/predicted - 1 "
        f"{_per_scheme(base, 'relative_error', 100.0, '+.1f')} %.",
        "",
        "Each row leaves out one mechanism, two that stand in for each other, or (the last row) all of them; its "
        "numbers are differences to the baseline of the same scheme in the same round, with their 95% intervals: "
        f"{data['rule']}. {_verdicts(mech)}{_missing(arms, data.get('only'))}",
        "",
        "| left out | what the run does instead | median overhead, ms (vs baseline) | size of measured/predicted - 1, "
        "percentage points (vs baseline) | failed runs | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for arm, row in arms.items():
        if arm == "baseline":
            continue
        what = mech[arm]["what_without"] if arm in mech else "the plain polling loop: every mechanism left out"
        verdict = mech[arm]["verdict"] if arm in mech else "-"
        lines.append(f"| `{arm}` | {what} | {_interval(row.get('overhead_ms_vs_baseline'))} | "
                     f"{_interval(row.get('abs_relative_error_vs_baseline'), 100.0)} | "
                     f"{row['failed']} of {row['runs']} | {verdict} |")
    return "\n".join(lines) + "\n"


def render(doc_text: str, data: dict, block: str = "runtime-ab") -> str:
    """``doc_text`` with the part between the markers of ``block`` replaced by :func:`table`."""
    begin, end = f"<!-- {block}: begin -->", f"<!-- {block}: end -->"
    if begin not in doc_text or end not in doc_text:
        raise SystemExit(f"the document has no lines {begin} and {end} to put the table between")
    head, rest = doc_text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{table(data)}{end}{tail}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.render_runtime_ab", description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="?", default=str(JSON))
    p.add_argument("--doc", default=str(DOC))
    p.add_argument("--block", default="runtime-ab", help="the name of the markers the table goes between")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the document's table differs")
    a = p.parse_args(argv)
    data = json.loads(Path(a.json).read_text())
    doc = Path(a.doc)
    text = doc.read_text()
    new = render(text, data, a.block)
    if a.check:
        if new != text:
            print(f"{doc}: the table is not the one {a.json} renders", file=sys.stderr)
            return 1
        return 0
    doc.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
