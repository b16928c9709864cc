"""The README's shell blocks run as written, so the README cannot drift from the tool.

Every ```` ```bash ```` block of ``README.md`` is either run here, in a fresh temporary folder
with ``bash -euo pipefail`` and this virtual environment's ``bin`` first on ``PATH`` (the README's
bare ``judgerisk`` lines assume it active, its ``.venv/bin/judgerisk`` lines find it through a
``.venv`` link), or carries a marker on the line above it that says why not, in words a reader
of the raw file understands::

    <!-- not run by tests/test_readme.py: it needs a GPU and a model of your own -->

The ``judgerisk`` lines of a block that is not run are still parsed by the command's own
parser, and its ``make`` targets must exist, so their options cannot drift either. Where a
block names a file of the user's (their FastChat judgments, their panel, a report they made),
the folder gets one before the block runs, from the excerpts shipped in ``tests/data/importers``:
FastChat's ``model_judgment/*_pair.jsonl`` in its own schema, and for "your panel" the bluebirds
crowd table (Welinder et al. 2010: 108 items, 39 workers, gold for every item) imported with
``judgerisk import crowdkit``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from judgerisk import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
IMPORTERS = ROOT / "tests" / "data" / "importers"
MARK = re.compile(r"^\s*<!-- not run by tests/test_readme\.py: (?P<why>.+?) -->\s*$")
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Block:
    heading: str
    line: int  # of the opening fence, 1-based
    text: str
    skip: str | None  # the marker's reason, when the block is not run

    @property
    def id(self) -> str:
        words = re.sub(r"[^a-z0-9]+", "-", self.heading.lower()).strip("-") or "top"
        return f"{words}-line{self.line}"

    def commands(self) -> list[str]:
        lines = (ln.split(" #")[0].strip() for ln in self.text.splitlines())
        return [ln for ln in lines if ln and not ln.startswith("#")]


def readme_blocks(text: str) -> list[Block]:
    """The README's ``bash`` blocks with their section heading and marker."""
    blocks, heading, previous = [], "", ""
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("#"):
            heading = line.lstrip("# ").strip()
        if line.strip() == "```bash":
            end = next(j for j in range(k + 1, len(lines)) if lines[j].strip() == "```")
            indent = len(line) - len(line.lstrip())
            body = "\n".join(ln[indent:] for ln in lines[k + 1 : end])
            mark = MARK.match(previous)
            blocks.append(Block(heading, k + 1, body, mark.group("why") if mark else None))
            k = end
        if line.strip():
            previous = line
        k += 1
    return blocks


BLOCKS = readme_blocks(README.read_text())
RUN = [b for b in BLOCKS if b.skip is None]
SKIPPED = [b for b in BLOCKS if b.skip is not None]


def test_reader():
    text = (
        "# T\n\n```bash\nls  # list\n```\n\n## Two\n"
        "<!-- not run by tests/test_readme.py: needs a GPU -->\n```bash\nnvidia-smi\n```\n"
    )
    one, two = readme_blocks(text)
    assert (one.heading, one.line, one.commands(), one.skip) == ("T", 3, ["ls"], None)
    assert (two.heading, two.skip, two.commands()) == ("Two", "needs a GPU", ["nvidia-smi"])


def test_every_marker_stands_above_a_block():
    lines = README.read_text().splitlines()
    for k, line in enumerate(lines):
        if MARK.match(line):
            nxt = next(ln for ln in lines[k + 1 :] if ln.strip())
            assert nxt.strip() == "```bash", f"README line {k + 1}: a marker above no bash block"


def test_the_blocks_a_user_starts_with_are_run():
    headings = {b.heading for b in RUN}
    assert {"Bring your own data", "Rerun a chapter on your own data"} <= headings, headings
    assert any("judgerisk simulate" in b.text for b in RUN)  # the command-line tour
    # make book / make test, the torch install, make lock && make test, the GPU extraction,
    # a Dask cluster, a streamed run of a large panel, estimates on a partly labelled panel
    # (each run in its own test instead)
    assert len(SKIPPED) <= 7, [b.id for b in SKIPPED]


@pytest.mark.parametrize("block", SKIPPED, ids=[b.id for b in SKIPPED])
def test_blocks_not_run_still_name_real_options_and_targets(block):
    parser = cli.build_parser()
    makefile = (ROOT / "Makefile").read_text()
    simple = (
        part.strip()
        for command in block.commands()
        for part in re.split(r"&&|\|\||;", command)  # the simple commands of a list
        if part.strip()
    )
    for command in simple:
        words = shlex.split(command)
        tool = Path(words[0]).name
        if tool == "judgerisk":
            parser.parse_args(words[1:])  # SystemExit on an unknown option or value
        elif tool == "make":
            for target in (w for w in words[1:] if "=" not in w and not w.startswith("-")):
                assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target


# ----------------------------------------------------------------------- the user's files
def _judgerisk(*args: str, cwd: Path) -> None:
    proc = subprocess.run(
        [str(BIN / "judgerisk"), *args], cwd=cwd, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.fixture(scope="module")
def user_files(tmp_path_factory):
    """Files the README's blocks name as the user's own, made once (see the module docstring)."""
    home = tmp_path_factory.mktemp("user")
    judgments = home / "data" / "mt_bench" / "model_judgment"
    judgments.mkdir(parents=True)
    for path in sorted((IMPORTERS / "fastchat" / "model_judgment").glob("*_pair.jsonl")):
        shutil.copy(path, judgments / path.name)
    bluebirds = IMPORTERS / "crowdkit_real" / "bluebirds" / "bluebirds.csv"
    _judgerisk(
        "import", "crowdkit", str(bluebirds), "--label-a", "1", "-o", "my_panel.csv", cwd=home
    )
    _judgerisk("simulate", "--n-items", "200", "--seed", "3", "-o", "panel.csv", cwd=home)
    _judgerisk("report", "panel.csv", "-o", "report.html", cwd=home)
    return home


#: A name a block reads -> the files that stand for it (relative to ``user_files``).
PROVIDES = {
    "data/mt_bench/model_judgment/": ["data"],
    "my_panel.csv": ["my_panel.csv", "my_panel.csv.provenance.json"],
    "report.html": ["report.html", "panel.csv", "panel.csv.provenance.json"],
}
OUTPUT_FLAGS = ("-o", "--output", "--labels", "--out")


def outputs_of(block: Block) -> list[str]:
    """The files a block's commands name as their outputs."""
    named = []
    for command in block.commands():
        words = shlex.split(command)
        named += [words[k + 1] for k, w in enumerate(words[:-1]) if w in OUTPUT_FLAGS]
    return named


def _provide(block: Block, home: Path, where: Path) -> None:
    written = set(outputs_of(block))
    for name, files in PROVIDES.items():
        if name in block.text and name.rstrip("/") not in written:
            for f in files:
                src = home / f
                (shutil.copytree if src.is_dir() else shutil.copy)(src, where / f)


@pytest.mark.slow
@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_readme_block_runs_as_written(block, user_files, tmp_path):
    _provide(block, user_files, tmp_path)
    before = [p for p in tmp_path.rglob("*") if p.is_file()]
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.text],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    where = f"README line {block.line} ({block.heading})"
    assert proc.returncode == 0, f"{where}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, f"{where}:\n{proc.stderr[-3000:]}"
    for name in outputs_of(block):
        assert (tmp_path / name).exists(), f"{where}: {name} was not written"
    # "No command writes a file you did not name" (besides a table's provenance sidecar and
    # an executed notebook's readable page)
    written = {
        str(p.relative_to(tmp_path))
        for p in tmp_path.rglob("*")
        if p.is_file() and p.relative_to(tmp_path).parts[0] != ".venv"
    }
    written -= {str(p.relative_to(tmp_path)) for p in before}
    expected = {x for name in outputs_of(block) for x in (name, *_companions(name))}
    assert written <= expected, f"{where}: files nobody named: {sorted(written - expected)}"


def _companions(name: str) -> tuple[str, ...]:
    if name.endswith((".csv", ".jsonl")):
        return (f"{name}.provenance.json",)
    if name.endswith(".ipynb"):
        return (f"{name[: -len('.ipynb')]}.html",)
    return ()
