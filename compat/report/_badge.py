"""A badge per participant: its Required and Recommended standing as a small SVG, for a README.

Plain SVG with the text laid out from a fixed per-character width (no font metrics are
needed and nothing is fetched); the title element carries the full sentence.
"""

from __future__ import annotations

import html
from typing import Any

CHAR = 6.6  # px per character of 11px Verdana-like text, a generous estimate
PAD = 6
COLOURS = {"passed": "#2e7d32", "recommended": "#b58900", "failed": "#c62828", "incomplete": "#757575"}


def verdict(standing: dict[str, Any]) -> tuple[str, str]:
    """(colour key, right-hand text) of a participant's standing."""
    if not standing["complete"]:
        return "incomplete", "incomplete run"
    if standing["required_failed"]:
        return "failed", f"required: {standing['required_failed']} failing"
    if standing["recommended_failed"]:
        return "recommended", f"required ✓ · recommended: {standing['recommended_failed']} failing"
    expected = f" ({standing['expected']} expected)" if standing["expected"] else ""
    return "passed", f"required ✓ · recommended ✓{expected}"


def svg(standing: dict[str, Any], name: str = "refitwire") -> str:
    key, right = verdict(standing)
    left = f"{name} {standing['label']}"
    lw, rw = _width(left), _width(right)
    title = html.escape(f"{left}: {right}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + rw}" height="20" role="img" '
        f'aria-label="{title}"><title>{title}</title>'
        f'<rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{rw}" height="20" fill="{COLOURS[key]}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{PAD}" y="14">{html.escape(left)}</text>'
        f'<text x="{lw + PAD}" y="14">{html.escape(right)}</text></g></svg>'
    )


def _width(text: str) -> int:
    return int(len(text) * CHAR) + 2 * PAD
