"""The text tools/figures.py writes between each figure's markers, from its measurements: the
numbers as a run gave them, then the machine (cores, CPU model), its load average while
measured and the date (:func:`_stamp`, what ``figures.py --check`` looks for)."""

from __future__ import annotations

from typing import Any

import _figure_refit
from _figure_transcripts import TRANSCRIPTS, transcript_text
from refitwire.cli.cache import human as size  # one way to write a size, the cache verb's


def _stamp(found: dict[str, Any]) -> str:
    low, high = sorted(found["load"])
    load = f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}"
    cores = found["cores"]
    return f"(this machine: {cores} core{'s' if cores != 1 else ''}, {found['cpu']}, load average {load}; {found['date']})"


def _failures(found: dict[str, Any]) -> str:
    outcomes = found["outcomes"]
    return (f"{found['required_failed']:,} Required failures, {found['recommended_failed']:,} Recommended "
            f"failures (not enforced), {found['xpassed']:,} unexpected passes, "
            f"{outcomes.get('xfailed', 0):,} expected failures, {outcomes.get('skipped', 0):,} skipped")  # fmt: skip


def _conformance(found: dict[str, Any]) -> str:
    verdict = "passed" if found["exit"] == 0 else f"failed (exit {found['exit']})"
    return (f"{found['cases']:,} cases in {found['seconds']:.1f} s ({found['wall']:.0f} s of wall clock), "
            f"{verdict}: {_failures(found)}; the released versions {found['upstream']} {_stamp(found)}")  # fmt: skip


def _expected(found: dict[str, Any]) -> str:
    by = found["expected_by_participant"]
    return (f"{sum(by.values()):,} expected failures: "
            + ", ".join(f"{label} {count:,}" for label, count in by.items()) + f" {_stamp(found)}")  # fmt: skip


COUNTED = {
    "no_rule": "rejections that gave no rule",
    "no_pointer": "rejections that gave no pointer",
    "refusal_no_rule": "refusals that named no rule",
    "no_digest": "digest cases the testee cannot answer",
}


def _counted(found: dict[str, Any]) -> str:
    parts = [f"{count:,} {COUNTED[key]}" for key, count in found["counted"].items() if count]
    return f"{', '.join(parts) or 'none'} {_stamp(found)}"


def _caches(found: dict[str, Any]) -> str:
    sizes = found["sizes"]
    envs = found["envs"]
    each = f"{len(envs)} environment{'s' if len(envs) != 1 else ''}"
    if envs:
        low, high = size(min(envs.values())), size(max(envs.values()))
        each += f", {low} each" if low == high else f", {low} to {high} each"
    listed = ", ".join(f"{name} {size(count)}" for name, count in sizes.items() if name != "compat-envs")
    return (f"{size(found['total'])} in all: the upstream environments {size(sizes.get('compat-envs', 0))} "
            f"({each}), {listed} {_stamp(found)}")  # fmt: skip


def texts(measured: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The text of each figure that ``measured`` has what it needs for."""
    out: dict[str, str] = {}
    if "matrix" in measured:
        m = measured["matrix"]
        out["matrix"] = (f"{m['cases']:,} cases in {m['seconds']:.1f} s ({m['participants']} participants, "
                         f"{m['examples']} payloads, no size cases; {m['wall']:.0f} s of wall clock); "
                         f"{_failures(m)} {_stamp(m)}")  # fmt: skip
        out["matrix-expected"] = _expected(m)
        out["matrix-counted"] = _counted(m)
        rate = m["cases"] / m["seconds"] if m["seconds"] else 0
        out["matrix-throughput"] = (f"runs {m['cases']:,} cases in {m['seconds']:.1f} s, some {rate:,.0f} cases/s "
                                    f"{_stamp(m)}")  # fmt: skip
    if "page" in measured:
        p = measured["page"]
        out["page"] = (f"the page of that run today: {size(p['bytes'])} for {p['cases']:,} cases, written in "
                       f"{p['wall']:.1f} s {_stamp(p)}")  # fmt: skip
    if "codec-start" in measured:
        c = measured["codec-start"]
        shown = ", ".join(f"`{verb}` {s:.2f} s" for verb, s in c["medians"].items())
        out["codec-start"] = (f"{min(c['medians'].values()):.1f}-{max(c['medians'].values()):.1f} s "
                              f"({shown}; the median of {c['repeats']} starts each) {_stamp(c)}")  # fmt: skip
    if "caches" in measured:
        c = measured["caches"]
        out["caches"] = _caches(c)
        envs = c["envs"]
        if envs:
            low, high = size(min(envs.values())), size(max(envs.values()))
            out["env-size"] = (f"{low if low == high else f'{low} to {high}'} each, "
                               f"{size(c['sizes'].get('compat-envs', 0))} for the {len(envs)} here {_stamp(c)}")  # fmt: skip
        out["size-cases"] = f"{size(c['sizes'].get('size-cases', 0))} {_stamp(c)}"
    if "env-build" in measured:
        e = measured["env-build"]
        out["env-build"] = (f"building the released {e['version']}'s environment into an empty folder took "
                            f"{e['wall']:.0f} s and {size(e['bytes'])} {_stamp(e)}")  # fmt: skip
    for name in ("conformance-js", "conformance-reference"):
        if name in measured:
            out[name] = _conformance(measured[name])
    for name in TRANSCRIPTS:
        if name in measured:
            out[name] = transcript_text(name, measured[name], _stamp(measured[name]))
    written_by = {"refit-demo": [("refit-demo", _figure_refit.demo_text)],
                  "refit-models": [("refit-models", _figure_refit.models_text)],
                  "refit-shapes": [("refit-shapes", _figure_refit.shapes_text)],
                  "refit-scaling": [("refit-scaling", _figure_refit.scaling_text)],
                  "fleet": [("fleet", _figure_refit.fleet_text), ("refit-discovery", _figure_refit.discovery_text)],
                  "bench": [("bench", _figure_refit.bench_text)], "fuzz": [("fuzz", _figure_refit.fuzz_text)]}  # fmt: skip
    for source, figures in written_by.items():
        if source in measured:
            found = measured[source]
            out.update((name, write(_runs_of(found), _stamp(found))) for name, write in figures)
    return out


def _runs_of(found: dict[str, Any]) -> Any:
    """A measurement without its stamp; the per-model and per-layout runs as the dict they were."""
    return {key: value for key, value in found.items() if key not in ("load", "date", "cores", "cpu")}
