"""Render a refit run report (the JSON of ``RunReport.to_json``) as a text table."""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["render_table", "summarize"]

_ORDER = ("verified", "unchecked", "unknown-step", "stale", "ahead", "corrupt")
# Errors that are not a verdict on a table: the step could not be carried out.
_FAILURES = ("TRANSFER_FAILED", "DISCOVERY_TIMEOUT", "RECEIVER_DIED", "STORE_UNAVAILABLE", "STORE_CORRUPT")


def _outcome(row: dict[str, Any]) -> str:
    if row.get("error"):
        rule = row["error"]["rule"]
        return f"{'failed' if rule in _FAILURES else 'refused'}: {rule}"
    counts = Counter(v["verdict"] for v in row.get("verdicts", []))
    return ", ".join(f"{counts[k]} {k}" for k in _ORDER if counts[k]) or "-"


def _holds(row: dict[str, Any]) -> str:
    step = row.get("holds_step", row.get("weights_step"))
    held = "-" if step is None else f"step {step}"
    if "matches_truth" in row:
        held += " (exact)" if row["matches_truth"] else " (WRONG)"
    return held


def _ratio(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """The cold steps (a new plan: checks, registration, page faults) apart from the warm ones:
    mean phases of each, and the warm steps' medians of wall, wall over transfer and the ratios
    to the raw READs of the same descriptors and of the same bytes in few large ones."""
    rows = [r for s in report["steps"] for r in s["receivers"] if r.get("phases_s") and not r.get("error")]
    out: dict[str, Any] = {}
    for label, group in (("cold", [r for r in rows if not r.get("plan_reused")]),
                         ("warm", [r for r in rows if r.get("plan_reused")])):  # fmt: skip
        if not group:
            continue
        phases = {k: sum(r["phases_s"][k] for r in group) / len(group) for k in group[0]["phases_s"]}
        entry: dict[str, Any] = {"rows": len(group), "phases_s": phases}
        for key in ("total_s", "transfer_s", "wall_over_transfer", "over_raw", "over_contiguous"):
            values = sorted(r[key] for r in group if r.get(key) is not None)
            entry[f"median_{key}"] = values[len(values) // 2] if values else None
        out[label] = entry
    return out


def _phases(report: dict[str, Any]) -> list[str]:
    lines = []
    for label, entry in summarize(report).items():
        what = "first step per plan" if label == "cold" else "later steps"
        phases = ", ".join(f"{k} {1e3 * v:.1f}" for k, v in entry["phases_s"].items())
        line = f"{label} ({what}, {entry['rows']} rows; ms, mean): {phases}; wall {1e3 * entry['median_total_s']:.1f} median"
        if label == "warm" and entry.get("median_over_contiguous") is not None:
            line += (f"; of raw {entry['median_over_raw']:.0%}, of raw in large descriptors "
                     f"{entry['median_over_contiguous']:.0%} (medians)")  # fmt: skip
        lines.append(line)
    return lines


def render_table(report: dict[str, Any]) -> str:
    """One line per step and receiver, then the totals and the overall result."""
    head = (
        "step",
        "injected",
        "recv",
        "shards",
        "installed",
        "holds",
        "wire MiB",
        "MiB/s",
        "of raw",
        "wall/xfer",
    )
    rows = []
    for step in report["steps"]:
        inject = step["inject"] or "-"
        if step["inject"]:
            inject += f"@pub{step['inject_rank']}"
        for row in step["receivers"]:
            rate = row.get("bytes_per_s", 0.0) / 2**20
            rows.append((
                str(step["step"]), inject, str(row["rank"]), _outcome(row),
                "yes" if row["installed"] else "no", _holds(row),
                f"{row.get('wire_bytes', 0) / 2**20:.2f}", f"{rate:.1f}" if rate else "-",
                _ratio(row.get("over_raw"), "{:.0%}"), _ratio(row.get("wall_over_transfer"), "{:.2f}x"),
            ))  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(head, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    notes = [
        f"step {step['step']} receiver {row['rank']}: {row['error']['message']}"
        for step in report["steps"]
        for row in step["receivers"]
        if row.get("error")
    ]
    lines += notes
    totals = report["totals"]
    lines.append(
        f"total: {totals['wire_bytes'] / 2**20:.1f} MiB read in {totals['transfer_s']:.3f} s of transfer "
        f"(summed over receivers): {totals['bytes_per_s'] / 2**20:.1f} MiB/s per receiver "
        f"({totals['bytes_per_s'] * 8 / 1e9:.2f} Gbit/s)"
    )
    anchors = [
        r["raw_bytes_per_s"] for s in report["steps"] for r in s["receivers"] if r.get("raw_bytes_per_s")
    ]
    if anchors:
        reps = report["config"].get("raw_reps")
        lines.append(
            f"of raw: each row's MiB/s over a plain NIXL READ of the same bytes by the same processes right "
            f"after it (best of {reps}; {min(anchors) / 2**20:.0f}-{max(anchors) / 2**20:.0f} MiB/s)"
        )
    digests = [
        (r["digest_bytes_per_s"], r["raw_nixl"].get("digest_threads"))
        for s in report["steps"] for r in s["receivers"] if r.get("digest_bytes_per_s")
    ]  # fmt: skip
    if digests:
        floors = [
            r["over_floor"]
            for s in report["steps"]
            for r in s["receivers"]
            if r.get("over_floor") and r.get("plan_reused")
        ]
        lines.append(
            f"digest: {min(d for d, _ in digests) / 2**20:.0f}-{max(d for d, _ in digests) / 2**20:.0f} MiB/s on "
            f"{digests[0][1]} threads (every shard of the plan again, same processes, right after the steps); "
            f"warm steps over max(raw READ, bytes / digest): "
            + (", ".join(f"{f:.2f}x" for f in floors) if floors else "-")
        )
        shared = [
            r
            for s in report["steps"]
            for r in s["receivers"]
            if r.get("over_cpu_floor") and r.get("plan_reused")
        ]
        if shared:
            read_ms, digest_ms = ([r["raw_nixl"][k] * 1e3 for r in shared] for k in ("cpu_s", "digest_cpu_s"))
            lines.append(
                f"cpu: the raw READ took {min(read_ms):.1f}-{max(read_ms):.1f} ms of its receiver's CPU and the "
                f"digests {min(digest_ms):.1f}-{max(digest_ms):.1f} ms, on {shared[0]['raw_nixl']['cores']} cores; "
                f"warm steps over the floor where they share the cores, max(that, (READ CPU + digest CPU) / cores): "
                + ", ".join(f"{r['over_cpu_floor']:.2f}x" for r in shared)
            )
    lines += _phases(report)
    if "aborted" in report["config"]:
        lines.append(f"aborted: {report['config']['aborted']}")
    lines.append(
        "result: " + ("every step verified and installed" if report["ok"] else "NOT every step installed")
    )
    return "\n".join(lines)
