"""Would compiling the Cypher guard with mypyc (mypy's compiler) pay? A measurement, not a build
step: nothing here changes how query-guard is installed.

Two copies of this checkout's code (proxy/, plugins/, grammars/, conf/) in a temporary folder:
one pure Python, one with chosen modules compiled by mypyc. mypy needs the import names, so
the modules are compiled from a staged `query_guard/` tree; a module with mypy errors gets a
bare `# type: ignore` on each error line in the staged copy only (the source is untouched), and
the extension modules are copied next to the other copy's .py files (an extension module wins
over a .py of the same name). Then two worker processes, one per copy (the same interpreter and
dependencies), judge every query of CypherBench gold and text2cypher (every 4th) with the
verdict cache off, and parse them alone, in interleaved rounds in a shuffled order; the ratio
of thread-CPU means (pure / compiled) per round and of the per-query minimums over rounds.
`--snapshot` also writes `guard_snapshot.py`'s verdicts from both copies and counts the lines
that differ.

Module sets (`--modules`): `driver` (the LALR loop, its lexer tables and child filters: clean
under mypy), `cypher` (every Cypher parse, build, scope and emit module mypyc accepts, and the
pipeline; the AST classes and modules with slotted dataclasses are left out: mypyc classes
cannot have __slots__, and it fails on the AST dataclasses; the rules are left out: pluggy's
hookimpl markers cannot be set on a compiled function).

Usage: .venv/bin/pip install mypy
       .venv/bin/python benchmarks/accel_compare.py [--modules driver|cypher] [--rounds N]
       [--snapshot]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _worker_proc import Worker

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"proxy": "", "plugins": "rules/", "grammars": "grammars/", "conf": "conf/"}
DRIVER = ["cypher/lalr_driver.py", "cypher/lalr_filters.py", "cypher/lalr_lexer.py"]
# not compiled in `cypher`: modules with slotted classes (mypyc: no __slots__) and the AST
# dataclasses (mypyc fails on them)
LEFT_OUT = ("ast", "build_children", "build_parts", "lexical", "patterns", "scope_table",
            "transform_expr", "transform_show")  # fmt: skip
# of guard/: not registry.py and hookspecs.py (pluggy markers), tree.py (the AST's base),
# unsafe_chars.py (mypyc refuses its surrogate literals), plan.py (not on the per-query path)
GUARD = ["guard/pipeline.py", "guard/hookcalls.py", "guard/caches.py", "guard/language.py"]
CORPORA = ["cypherbench", "text2cypher", "parse:cypherbench", "parse:text2cypher"]


def modules(name: str) -> list[str]:
    if name == "driver":
        return DRIVER
    cypher = sorted(
        f"cypher/{p.name}"
        for p in (ROOT / "proxy" / "cypher").glob("*.py")
        if p.name != "__init__.py" and not p.stem.startswith(LEFT_OUT)
    )
    return cypher + GUARD


def _copy(dest: Path) -> None:
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("*.so"))


def compile_copy(tmp: Path, chosen: list[str]) -> Path:
    """A copy of the code with `chosen` (paths under query_guard/) compiled by mypyc."""
    stage = tmp / "stage"
    for folder, inner in FOLDERS.items():
        shutil.copytree(ROOT / folder, stage / "query_guard" / inner, dirs_exist_ok=True)
    paths = [f"query_guard/{m}" for m in chosen]
    mypyc = [str(Path(sys.executable).parent / "mypyc"), *paths]
    for _ in range(3):  # a bare ignore on each line mypy reports, until it reports none
        done = subprocess.run(mypyc, cwd=stage, capture_output=True, text=True)
        errors = re.findall(r"^(query_guard/\S+\.py):(\d+): error:", done.stdout, re.M)
        if done.returncode == 0 or not errors:
            break
        for path, line in errors:
            lines = (stage / path).read_text().split("\n")
            bare = re.sub(r"  # type: ignore(\[[^\]]*\])?", "", lines[int(line) - 1])
            lines[int(line) - 1] = bare + "  # type: ignore"
            (stage / path).write_text("\n".join(lines))
    if done.returncode != 0:
        raise SystemExit(f"mypyc failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    out = tmp / "compiled"
    _copy(out)
    for so in stage.rglob("*.so"):
        if "build" in so.relative_to(stage).parts:
            continue
        rel = so.relative_to(stage)
        if rel.parts[0] != "query_guard":  # mypyc's shared library: a top-level module
            shutil.copy(so, out / so.name)
            continue
        inner = "/".join(rel.parts[1:])
        folder = next((f for f, i in FOLDERS.items() if i and inner.startswith(i)), "proxy")
        shutil.copy(so, out / folder / inner.removeprefix(FOLDERS[folder]))
    return out


class Side(Worker):
    def __init__(self, label: str, root: Path) -> None:
        self.label = label
        env = {"PYTHONPATH": str(root), "QG_BASELINE_ROOT": str(root)}
        super().__init__([sys.executable, __file__, "--worker"], root, env)

    def measure(self, corpus: str) -> dict[str, Any]:
        return self.ask(corpus)


def worker() -> None:
    """One side: _guard_worker.py's corpora and guards, imported from QG_BASELINE_ROOT."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _guard_worker as w

    parse = __import__(f"{w.PKG}.cypher.parser", fromlist=["parse"]).parse
    corpus = w.cypher_pairs(ROOT.parent / "shared" / "corpora")
    for pairs in corpus.values():
        for text, language, guard in pairs[:300]:
            guard.check(text, language)
    files = {n: str(getattr(m, "__file__", "")) for n, m in sys.modules.items()}
    compiled = sorted(n for n, f in files.items() if n.startswith(w.PKG) and f.endswith(".so"))
    print(json.dumps({"compiled": compiled}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if not name.startswith("parse:"):
            print(json.dumps(w.measure(corpus[name])), flush=True)
            continue
        gc.collect()
        cpu = []
        for text, _, _ in corpus[name.removeprefix("parse:")]:
            c0 = time.thread_time_ns()
            with contextlib.suppress(Exception):  # a syntax error costs its time too
                parse(text)
            cpu.append(time.thread_time_ns() - c0)
        print(json.dumps({"cpu": cpu}), flush=True)


def compare(pure: Path, compiled: Path, rounds: int) -> tuple[list[str], str]:
    sides = [Side("pure", pure), Side("compiled", compiled)]
    print(f"compiled modules: {sides[1].ready['compiled']}", file=sys.stderr)
    rng = random.Random(7)
    best: dict[tuple[str, str], list[int]] = {}
    per_round: dict[str, list[float]] = {c: [] for c in CORPORA}
    loads = [os.getloadavg()[0]]
    try:
        for _ in range(rounds):
            for corpus in CORPORA:
                means = {}
                for side in rng.sample(sides, 2):
                    cpu = side.measure(corpus)["cpu"]
                    means[side.label] = statistics.fmean(cpu)
                    prev = best.get((side.label, corpus))
                    best[side.label, corpus] = cpu if prev is None else list(map(min, prev, cpu))
                per_round[corpus].append(means["pure"] / means["compiled"])
            loads.append(os.getloadavg()[0])
    finally:
        for side in sides:
            side.close()
    rows = []
    for corpus in CORPORA:
        old, new = best["pure", corpus], best["compiled", corpus]
        p50 = [sorted(v)[len(v) // 2] / 1000 for v in (old, new)]
        mean = [statistics.fmean(v) / 1000 for v in (old, new)]
        lo, hi = min(per_round[corpus]), max(per_round[corpus])
        ratios = f"{p50[0] / p50[1]:.2f}x | {mean[0] / mean[1]:.2f}x | {lo:.2f}-{hi:.2f}"
        rows.append(f"| {corpus} | {len(old)} | {p50[0]:.1f} | {p50[1]:.1f} | {ratios} |")
    return rows, f"{min(loads):.1f}-{max(loads):.1f}"


def snapshot_diff(pure: Path, compiled: Path, tmp: Path) -> int:
    """Lines of guard_snapshot.py's output that differ between the two copies."""
    runner = ("import runpy, sys; script, out, bench = sys.argv[1:]; sys.path.insert(0, bench); "
              "import _guard_worker; sys.argv = [script, out]; "
              "runpy.run_path(script, run_name='__main__')")  # fmt: skip
    outs = []
    for root in (pure, compiled):
        out = tmp / f"{root.name}.jsonl"
        env = {**os.environ, "PYTHONPATH": str(root), "QG_BASELINE_ROOT": str(root)}
        script = str(ROOT / "benchmarks" / "guard_snapshot.py")
        subprocess.run([sys.executable, "-c", runner, script, str(out), str(ROOT / "benchmarks")],
                       cwd=root, env=env, check=True)  # fmt: skip
        outs.append(out.read_text().splitlines())
    return sum(a != b for a, b in zip(*outs, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", choices=["driver", "cypher"], default="driver")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--snapshot", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    with tempfile.TemporaryDirectory(prefix="qg-accel-") as name:
        tmp = Path(name)
        chosen = modules(args.modules)
        t0 = time.perf_counter()
        compiled = compile_copy(tmp, chosen)
        build = time.perf_counter() - t0
        pure = tmp / "pure"
        _copy(pure)
        rows, load = compare(pure, compiled, args.rounds)
        differ = snapshot_diff(pure, compiled, tmp) if args.snapshot else None
    lines = [f"`--modules {args.modules}` ({len(chosen)} modules, mypyc build {build:.0f} s), "
             f"{args.rounds} rounds, load {load}: thread CPU per query, pure / compiled "
             "(above 1: compiled is faster)", "",
             "| corpus | n | pure p50 µs | compiled p50 µs | p50 ratio | mean ratio | "
             "per-round mean ratios |", "|---|---|---|---|---|---|---|", *rows]  # fmt: skip
    if differ is not None:
        lines += ["", f"guard_snapshot.py lines that differ: {differ}"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
