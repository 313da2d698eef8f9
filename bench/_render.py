"""The text table of a bench run: each figure beside its anchor, ratios and goals."""

from __future__ import annotations

from typing import Any

__all__ = ["render_results"]


def _ms(t: Any) -> str:
    if not isinstance(t, dict):
        return "n/a"
    return f"{t['best_s'] * 1e3:.2f} ms (±{t['spread'] * 100:.0f}%)"


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _gb(t: Any) -> str:
    return "n/a" if not isinstance(t, dict) or t.get("gb_per_s") is None else f"{t['gb_per_s']:.2f} GB/s"


def _per_entry(table: dict[str, dict[str, float]]) -> str:
    return "; ".join(
        f"{name} " + ", ".join(f"{n}: {us:.2f}" for n, us in sizes.items()) for name, sizes in table.items()
    )


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _row(r: dict[str, Any], timings: tuple[str, ...], ratios: tuple[tuple[str, int], ...]) -> str:
    """One size's line of a codec table: its timings, 20 wide, then its ratios at their widths."""
    cells = [f"{_ms(r[key]):20}" for key in timings] + [f"{_x(r['ratios'][key]):{w}}" for key, w in ratios]
    return f"  {'':17}{r['entries']:7d} {r['blob_bytes'] / 1e6:5.2f} MB  " + " ".join(cells)


def render_results(result: dict[str, Any]) -> str:
    s = result["sections"]
    m = result["machine"]
    out = [
        f"refitwire bench {result['date']}{' (quick)' if result['quick'] else ''}: "
        f"{m['cpu']}, {m['cores']} cores, "
        f"Python {m['python']}; best of {result['repetitions']}, ± is median over best",
        f"upstream modelexpress: {result['upstream'].get('version') or result['upstream'].get('status')}",
        "",
        "decode (validated)  entries  blob      refitwire eager      refitwire lazy       upstream 0.7.0"
        "       orjson.loads         floor: orjson+schema typed decode        up/eager eager/orjson lazy/orjson",
    ]
    for r in s["decode"]["sizes"]:
        out.append(_row(
            r, ("refitwire_unwrap", "refitwire_unwrap_lazy", "upstream_unwrap", "orjson_loads",
                "floor_orjson_and_schema", "floor_typed_decode"),
            (("upstream_over_refitwire", 8), ("refitwire_over_orjson", 12), ("refitwire_lazy_over_orjson", 0)),
        ))  # fmt: skip
    out.append("  medians, upstream over refitwire: " + ", ".join(
        f"{r['entries']}: eager {_x(r['ratios']['median_upstream_over_refitwire'])}"
        f" lazy {_x(r['ratios']['median_upstream_over_refitwire_lazy'])}"
        for r in s["decode"]["sizes"]
    ))  # fmt: skip
    out.append("  by CPU time: " + ", ".join(
        f"{r['entries']}: up/eager {_x(r['cpu_ratios']['upstream_over_refitwire'])}"
        f" eager/orjson {_x(r['cpu_ratios']['refitwire_over_orjson'])}"
        f" lazy/orjson {_x(r['cpu_ratios']['refitwire_lazy_over_orjson'])}"
        for r in s["decode"]["sizes"]
    ))  # fmt: skip
    out.append("  collector paused on both sides (the reader's policy): " + ", ".join(
        f"{r['entries']}: orjson.loads {_ms(r.get('orjson_loads_gc_paused'))}, to_decoded {_ms(r.get('refitwire_to_decoded'))},"
        f" eager/orjson {_x(r['ratios'].get('refitwire_over_orjson_gc_paused'))},"
        f" to_decoded/orjson {_x(r['ratios'].get('to_decoded_over_orjson_gc_paused'))}"
        for r in s["decode"]["sizes"]
    ))  # fmt: skip
    labelled = [
        f"{r['entries']} = {r['table']}"
        for r in s["decode"]["sizes"]
        if r.get("table", "bench table") != "bench table"
    ]
    if labelled:
        out.append("  " + "; ".join(labelled))
    out.append("  us per entry (linear cost is flat): " + _per_entry(s["decode"]["us_per_entry"]))
    q = s["quorum"]
    out += [
        "",
        f"quorum read ({q['path']}): refitwire {_ms(q['refitwire_count_only'])}, "
        f"upstream {_ms(q['upstream_count_only'])}, up/rw {_x(q['ratios']['upstream_over_refitwire'])}",
        "",
        "encode (checked)    entries  blob      refitwire            upstream 0.7.0       "
        "json.dumps prebuilt  up/rw    up/rw median  byte-identical",
    ]
    for r in s["encode"]["sizes"]:
        row = _row(
            r, ("refitwire_wrap", "upstream_wrap", "json_dumps_prebuilt"),
            (("upstream_over_refitwire", 8), ("median_upstream_over_refitwire", 13)),
        )  # fmt: skip
        out.append(f"{row} {r['byte_identical_to_upstream']}")
    out.append("  by CPU time, up/rw: " + ", ".join(
        f"{r['entries']}: {_x(r['cpu_ratios']['upstream_over_refitwire'])}" for r in s["encode"]["sizes"]
    ))  # fmt: skip
    out.append("  us per entry (linear cost is flat): " + _per_entry(s["encode"]["us_per_entry"]))
    v = s["schema_validation"]
    out.append(
        f"schema validation: jsonschema {_ms(v['jsonschema'])}, jsonschema-rs {_ms(v['jsonschema_rs'])}, "
        f"ratio {_x(v['ratios']['jsonschema_over_jsonschema_rs'])}"
    )
    d = s["digest"]
    out.append(
        f"digest of {_size(d['bytes'])}: refitwire {_gb(d['refitwire_digest'])}, "
        f"upstream {_gb(d['upstream_digest'])}, memcpy {_gb(d['memcpy'])}; "
        f"vs upstream {_x(d['ratios']['refitwire_over_upstream_throughput'])}, "
        f"vs memcpy {_x(d['ratios']['refitwire_over_memcpy_throughput'])}; "
        f"equal digests: {d['digests_equal']}"
    )
    n = s["nixl"]
    out.append("")
    if n.get("status") != "measured":
        out.append(f"NIXL READ: {n.get('status')}: {n.get('reason')}")
    else:
        out.append(
            f"NIXL READ across processes ({n['transport']}, progress threads {n['progress_threads']}):"
        )
        for r in [*n["sizes"], n["descriptors"]]:
            label = (
                _size(r["bytes"])
                if r["descriptors"] == 1
                else f"{r['descriptors']} x {_size(r['each_bytes'])}"
            )
            out.append(
                f"  {label:>16}: {_gb(r['nixl_read']):>12} (±{r['nixl_read']['spread'] * 100:.0f}%)  "
                f"memcpy {_gb(r['memcpy']):>12}  ratio {_x(r['ratio_to_memcpy'])}"
            )
    m = s["matrix"]
    out.append(
        f"matrix: {m['cases']} cases over {m['pairs']} writer x reader pairs in {m['seconds']} s: "
        f"{m['cases_per_second']} cases/s ({m['us_per_case']} us per case, start-up included)"
        if m["status"] == "measured"
        else f"matrix: {m['status']}: {m.get('reason', '')}"
    )
    out += ["", "goals:"]
    for name in ("decode", "quorum", "encode", "digest", "nixl"):
        goals = s[name].get("goals") or ([s[name]["goal"]] if "goal" in s[name] else [])
        for g in goals:
            verdict = {True: "met", False: "NOT met", None: "not measured"}[g["met"]]
            out.append(f"  {verdict:>12}  {g['what']} (got {_x(g['value'])})")
    return "\n".join(out) + "\n"
