"""Every shell example of README.md and docs/*.md runs as written and prints what its page shows
(tests/doc_examples.py says what an example is and how a page marks one that cannot run here).

After README's two commands: the test command is `.ci/run`'s own line, and the first one's
`.venv/bin/query-guard serve` is started here, in a scratch directory where `.venv` is the venv
running the tests, with `[server] http = "127.0.0.1:7474"` in a `--config` file (as README says
for its Query API example). The examples that talk to the proxy run while it listens; then it
is stopped and the other examples run, page by page in order, each page in a directory of its
own that shares serve's data (`schema` and `export` read it while serve is stopped, as the pages
say). All of it runs in a private network namespace (`unshare -n`, when this machine allows
it), so the pages' fixed ports 7687 and 7474 are free whatever else runs here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import ROOT, Block, all_blocks, output_matches

VENV = Path(sys.executable).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
SERVE_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/query-guard serve"
SERVE_CONFIG = '[server]\nhttp = "127.0.0.1:7474"\n'
BLOCKS = all_blocks()
# every block that cannot run here, by its reason: adding one is a decision made in this file
NOT_RUN_EXPECTED = 3
Results = dict[tuple[str, int], tuple[int, str, str]]  # (block, command) -> rc, stdout, stderr


def _setup(block: Block) -> bool:
    return block.lines[0].startswith("python3 -m venv")


RUN = [b for b in BLOCKS if not b.not_run and not _setup(b)]


def _one_line(text: str) -> str:
    return " ".join(text.replace("\\\n", " ").split())


def test_pages_have_examples_and_readme_names_the_real_commands() -> None:
    assert len(RUN) >= 12 and sum(b.needs_proxy for b in RUN) >= 5
    assert (
        SERVE_COMMAND in README
        and 'with `[server] http = "127.0.0.1:7474"` in a `--config`' in README
    )
    for block in RUN:  # `query-guard` alone is not on PATH after README's commands
        for command in block.commands():
            assert not re.match(r"(\S+=\S+ )*query-guard ", command.text), block.name


def test_setup_commands_are_what_ci_runs() -> None:
    """README's test command is exactly .ci/run's; every other venv a page builds is built by
    .ci/run with the page's commands; README's serve command installs a subset of the test
    venv and its `serve` runs in test_each_example_runs_as_written."""
    ci = _one_line(CI_RUN)
    setups = [b for b in BLOCKS if _setup(b) and not b.not_run]
    assert len(setups) >= 3
    for block in setups:
        if block.lines == (SERVE_COMMAND,):
            assert "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]'" in ci
            continue
        for command in block.commands():
            assert _one_line(command.text) in ci, f"{block.name}: {command.text!r} not in .ci/run"


def test_blocks_that_cannot_run_here_are_few_and_say_why() -> None:
    marked = [f"{b.name}: {b.not_run}" for b in BLOCKS if b.not_run]
    print("\n".join(["examples not run in CI:", *marked]))
    assert len(marked) == NOT_RUN_EXPECTED, marked


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.not_run], ids=lambda b: b.name)
def test_marked_block_is_listed(block: Block) -> None:
    pytest.skip(f"{block.name}: not run in CI: {block.not_run}")


def _script(root: Path) -> tuple[str, list[tuple[Block, int, Path]]]:
    """One bash script for every example, and where each command's result lands."""
    steps: list[tuple[Block, int, Path]] = []
    lines = ["set -u", f"cd {shlex.quote(str(root))}"]

    def run(block: Block, cwd: Path) -> None:
        for n, command in enumerate(block.commands()):
            out = root / "results" / f"{len(steps)}"
            (out.with_suffix(".sh")).write_text(command.text + "\n", encoding="utf-8")
            lines.append(
                f"(cd {shlex.quote(str(cwd))} && timeout 300 bash {out}.sh >{out}.out 2>{out}.err"
                f" </dev/null); echo $? >{out}.rc"
            )
            steps.append((block, n, out))

    serve = SERVE_COMMAND.split(" && ")[-1]
    lines += [
        "ip link set lo up 2>/dev/null",
        f"{serve} --config query-guard.toml >serve.log 2>&1 & pid=$!",
        "for i in $(seq 600); do",
        "  (exec 3<>/dev/tcp/127.0.0.1/7474 && exec 4<>/dev/tcp/127.0.0.1/7687) 2>/dev/null"
        " && break",
        "  kill -0 $pid 2>/dev/null || break; sleep 0.5",
        "done",
    ]
    for block in RUN:
        if block.needs_proxy:
            run(block, root)
    lines += ["kill $pid; wait $pid; echo $? >serve.rc"]
    for block in RUN:
        if not block.needs_proxy:
            page = root / re.sub(r"\W+", "-", block.page)
            if not page.exists():
                page.mkdir()
                (page / ".venv").symlink_to(VENV)
                (page / ".query-guard").symlink_to(root / ".query-guard")
            run(block, page)
    return "\n".join(lines) + "\n", steps


@pytest.fixture(scope="module")
def results(
    tmp_path_factory: pytest.TempPathFactory,
) -> Results:
    root = tmp_path_factory.mktemp("doc-examples")
    (root / "results").mkdir()
    (root / ".venv").symlink_to(VENV)
    (root / ".query-guard").mkdir()
    (root / "query-guard.toml").write_text(SERVE_CONFIG, encoding="utf-8")
    script, steps = _script(root)
    (root / "run.sh").write_text(script, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    probe = ["unshare", "-n", "ip", "link", "set", "lo", "up"]  # a namespace with a loopback
    private = bool(shutil.which("unshare") and shutil.which("ip")) and (
        subprocess.run(probe, capture_output=True).returncode == 0
    )
    argv = ["unshare", "-n", "bash", "run.sh"] if private else ["bash", "run.sh"]
    subprocess.run(argv, cwd=root, env=env, timeout=1800, check=True)
    log = (root / "serve.log").read_text(encoding="utf-8", errors="replace")
    assert (root / "serve.rc").read_text().strip() == "0", log[-3000:]
    print(log[-2000:])  # shown with a failing example
    return {
        (block.name, n): (
            int(out.with_suffix(".rc").read_text() or -1),
            out.with_suffix(".out").read_text(encoding="utf-8", errors="replace"),
            out.with_suffix(".err").read_text(encoding="utf-8", errors="replace"),
        )
        for block, n, out in steps
    }


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.name)
def test_each_example_runs_as_written(block: Block, results: Results) -> None:
    for n, command in enumerate(block.commands()):
        rc, out, err = results[(block.name, n)]
        if command.expected is None:
            assert rc == 0, f"{block.name}: {command.text}\n{err}"
            if "curl" in command.text:  # the proxy answered, and not with an error
                answer = json.loads(out)
                if '"…"' in command.text:  # a placeholder the reader fills in: named as unknown
                    assert "'…'" in str(answer), (command.text, out)
                else:
                    assert "error" not in answer and "errors" not in answer, (command.text, out)
        else:
            assert rc in (0, 1), f"{block.name}: {command.text}\n{err}"  # 1 = BLOCK, as pages say
            # as a terminal shows it: standard output, else both streams (export reports on stderr)
            shown = output_matches(command.expected, out) or output_matches(
                command.expected, out + err
            )
            assert shown, (command.text, out, err)
