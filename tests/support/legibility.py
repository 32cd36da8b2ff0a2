"""Measuring legibility in a real browser: text size as drawn (an SVG's scale included), the boxes
of labels against each other, and row heights, read from the rendered page with Playwright."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

VIEWS = {"desktop": (1280, 800), "phone": (390, 844)}
MIN_PX = 12.0

GRAPH_TEXT = """() => [...document.querySelectorAll('.focus-graph text')]
  .filter(t => t.getClientRects().length)
  .map(t => {
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const r = t.getBoundingClientRect(), s = svg.getBoundingClientRect();
    return {cls: t.getAttribute('class'), text: t.textContent.trim(),
            px: parseFloat(getComputedStyle(t).fontSize) * scale,
            box: [r.left, r.top, r.right, r.bottom], inside: r.right <= s.right + 1 && r.left >= s.left - 1};
  })"""

SMALL_TEXT = """(root) => {
  const small = [];
  const walk = document.createTreeWalker(document.querySelector(root), NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, el = node.parentElement;
    if (!node.textContent.trim() || !el.getClientRects().length || el.closest('.sr-only, svg')) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    const text = node.textContent.trim().slice(0, 30);
    if (px < 12) small.push(`${el.tagName.toLowerCase()}.${el.className}: ${px}px "${text}"`);
  }
  return [...new Set(small)];
}"""


def overlaps(a: list[float], b: list[float]) -> bool:
    """Whether two boxes [left, top, right, bottom] share more than a hairline."""
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


WHY_HEIGHTS = """() => [...document.querySelectorAll('#inspector .why-text')]
  .filter(e => e.getClientRects().length)
  .map(e => [e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight), e.scrollWidth])"""

BOX = "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }"


def graph_is_legible(page: Page, view: str) -> None:
    """Every focus graph label at least MIN_PX as drawn, inside its SVG, no relation over a name."""
    texts: list[dict[str, Any]] = page.evaluate(GRAPH_TEXT)
    assert len(texts) >= 5, texts
    small = [(t["text"], round(t["px"], 1)) for t in texts if t["px"] < MIN_PX]
    assert small == [], f"{view}: graph labels under {MIN_PX}px as drawn"
    clipped = [t["text"] for t in texts if not t["inside"]]
    assert clipped == [], f"{view}: graph labels cut off at the edge"
    names = [t for t in texts if "node-label" in (t["cls"] or "")]
    relations = [t for t in texts if t["cls"] == "rel"]
    hits = [(r["text"], n["text"]) for r in relations for n in names if overlaps(r["box"], n["box"])]
    assert hits == [], f"{view}: relation labels over node names"
