"""Run the guard benchmarks (and the repair-accuracy run, which starts its own FalkorDB) and
write benchmarks/RESULTS.md; sections below `<!-- other benchmarks -->` (proxy overhead,
written by benchmarks/proxy_overhead.py) are kept.

Usage: benchmarks/.venv/bin/python benchmarks/run_all.py   (the benchmark venv has
langchain-neo4j for the side-by-side; the project's .venv works too, without that row)."""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import direction_compare  # noqa: E402
import gremlin_latency  # noqa: E402
import guard_latency  # noqa: E402
import llm_drafts  # noqa: E402
from accuracy import run as accuracy  # noqa: E402


def main() -> None:
    sections = [guard_latency.main(), gremlin_latency.main()]
    sections += [direction_compare.main(), llm_drafts.main(), accuracy.main()]
    header = (
        "# Benchmark results\n\n"
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, "
        f"{_cpus()} cores, Python {platform.python_version()} "
        "(`benchmarks/.venv/bin/python benchmarks/run_all.py`).\n"
    )
    text = header + "\n" + "\n\n".join(sections) + "\n"
    out = HERE / "RESULTS.md"
    extra = _kept_sections(out)
    out.write_text(text + extra)
    print(text)


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


def _kept_sections(path: Path) -> str:
    """Sections written by other benchmark scripts (proxy overhead, …) are kept."""
    if not path.exists():
        return ""
    text = path.read_text()
    marker = "\n<!-- other benchmarks -->\n"
    return text[text.index(marker) :] if marker in text else ""


if __name__ == "__main__":
    main()
