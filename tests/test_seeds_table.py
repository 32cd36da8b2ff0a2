"""docs/seeds.md stays honest: every test it names exists, no requirement is missing, every deviation
is explained, and the summary counts are the table's."""

from __future__ import annotations

import ast
import re
from collections import Counter
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "seeds.md"
STATUSES = {"working", "partial", "deviation", "missing"}
TEST_REF = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
ROW_ID = re.compile(r"^[0-4]\.\d+$")


def _rows() -> list[list[str]]:
    """The requirement rows: `| # | requirement | status | where | test |` with an `N.M` number."""
    rows = []
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and ROW_ID.match(cells[0]):
            assert len(cells) == 5, f"row {cells[0]} has {len(cells)} cells, not 5"
            rows.append(cells)
    return rows


@cache
def _test_names(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text())
    return frozenset(n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def test_every_row_has_a_known_status_and_none_is_missing() -> None:
    rows = _rows()
    assert len(rows) >= 120
    assert len({r[0] for r in rows}) == len(rows), "a requirement number is used twice"
    assert all(r[2] in STATUSES for r in rows), [r[0] for r in rows if r[2] not in STATUSES]
    assert not [r[0] for r in rows if r[2] == "missing"]


def test_every_named_test_exists() -> None:
    unknown = []
    for number, _, status, _, tests in _rows():
        refs = TEST_REF.findall(tests)
        assert refs, f"requirement {number} ({status}) names no test"
        for path, name in refs:
            if not (ROOT / path).is_file() or name not in _test_names(path):
                unknown.append(f"{number}: {path}::{name}")
    assert not unknown, "docs/seeds.md names tests that do not exist: " + ", ".join(unknown)


def test_every_deviation_is_explained() -> None:
    text = PAGE.read_text()
    explained = set(
        re.findall(r"\d\.\d+", text.split("## Deliberate deviations", 1)[1].split("## Summary")[0])
    )
    unexplained = [r[0] for r in _rows() if r[2] == "deviation" and r[0] not in explained]
    assert not unexplained, f"deviations without a reason under 'Deliberate deviations': {unexplained}"


def test_the_summary_counts_the_rows() -> None:
    counts = Counter(r[2] for r in _rows())
    line = next(x for x in PAGE.read_text().splitlines() if x.startswith("Summary:"))
    expected = (
        f"Summary: {sum(counts.values())} requirements: {counts['working']} working, "
        f"{counts['partial']} partial, {counts['deviation']} deviation, {counts['missing']} missing."
    )
    assert line == expected


def test_the_readme_links_the_page() -> None:
    assert "docs/seeds.md" in (ROOT / "README.md").read_text()


def test_the_per_seed_summary_table_counts_the_rows() -> None:
    """Each line of the summary table (`| 000 load context | 33 | 29 | 0 | 4 | 0 |`) is its seed's rows,
    counted."""
    text = PAGE.read_text().split("## Summary", 1)[1]
    table = re.findall(r"^\| (00\d) [^|]+ \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", text, re.M)
    assert [seed for seed, *_ in table] == ["000", "001", "002", "003", "004"]
    for seed, *numbers in table:
        counts = Counter(r[2] for r in _rows() if r[0].startswith(f"{int(seed)}."))
        expected = [sum(counts.values()), counts["working"], counts["partial"], counts["deviation"]]
        assert [int(n) for n in numbers] == [*expected, counts["missing"]], seed
