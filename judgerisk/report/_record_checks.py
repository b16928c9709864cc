"""Checks of a provenance record that ``judgerisk verify`` runs before any recomputation.

* :func:`check_command`: the command line a record shows readers agrees with its parameters
  (a ``judgerisk ...`` argv is parsed with the command line's own parser; an API call's
  literal arguments are read without running anything).
* :func:`check_input_rows`: the record's row counts agree with its inputs; the command that wrote
  the output checks its own sizes and bounds the work a recomputation would do with
  :func:`record_int` (:data:`MAX_SEEDS`, :data:`MAX_SPLITS`, :data:`MAX_SAMPLED_ITEMS`), so a
  crafted record cannot make ``verify`` run for long.
* :func:`environment_differences`: what differs between the recorded run and this one (git
  commit, uncommitted changes, runtime-registered methods), named first when a recomputation
  fails or differs.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import shlex
import warnings
from typing import Any

__all__ = [
    "MAX_SEEDS",
    "MAX_SPLITS",
    "MAX_SAMPLED_ITEMS",
    "check_command",
    "check_input_rows",
    "environment_differences",
    "record_int",
]

#: Most seeds (splits) a record may ask ``verify`` to recompute.
MAX_SEEDS = 1000
#: Most calibration/test splits a report's record may ask ``verify`` to recompute.
MAX_SPLITS = 10_000
#: Most items of a simulated panel whose labels sample (``--n-labelled``) ``verify`` recomputes.
MAX_SAMPLED_ITEMS = 100_000
#: The record parameter that names the command (every other one is an option of it).
_COMMAND = "command"


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _missing_plugins(extensions: Any) -> list[str]:
    """The record's plug-in methods (``extensions``: registry -> name -> origin) that no
    registry in use here holds."""
    from judgerisk._util.registry import Registry

    if not isinstance(extensions, dict):
        return []
    have = {r.what: {name for name, _ in r.items()} for r in Registry.instances()}
    out = []
    for what, entries in extensions.items():
        for name, origin in entries.items() if isinstance(entries, dict) else ():
            if name not in have.get(what, ()):
                out.append(f"{what} {name!r} from {origin}")
    return out


def _argv_problems(
    cmd: list, params: dict, parser: argparse.ArgumentParser | None, extensions: Any = None
) -> list[str]:
    shown = shlex.join(str(a) for a in cmd)
    if not cmd or cmd[0] != "judgerisk" or not all(isinstance(a, str) for a in cmd):
        return [f"the record's command line {shown!r} is not a judgerisk command"]
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            args = parser.parse_args(cmd[1:]) if parser is not None else None
    except SystemExit:
        missing = _missing_plugins(extensions)
        if missing:
            why = said.getvalue().strip().splitlines()[-1:] or [""]
            return [
                f"the record's command line {shown!r} needs the plug-in(s) that made the "
                f"output, not installed here: {'; '.join(missing)} ({why[0]}); install the "
                "package that provides it and verify again"
            ]
        return [f"the record's command line {shown!r} is not a valid judgerisk command"]
    if args is None:
        warnings.warn(
            "the record's command line was not parsed (verify was called without the "
            "command-line parser; judgerisk verify passes it)",
            stacklevel=3,
        )
        return []
    parsed = _plain({k: v for k, v in vars(args).items() if k != "func"})
    problems = []
    if parsed.get("command") != params.get("command"):
        problems.append(
            f"the record's command line runs {parsed.get('command')!r}, its parameters say "
            f"{params.get('command')!r}"
        )
    for key, value in params.items():
        if key == _COMMAND:
            continue
        if key not in parsed:
            problems.append(f"parameter {key}={value!r} is not an option of the command line")
        elif parsed[key] != value:
            problems.append(
                f"parameter {key}: {value!r} in the record, {parsed[key]!r} on its command line"
            )
    return problems


def _call_problems(text: str, params: dict) -> list[str]:
    try:
        node = ast.parse(text, mode="eval").body
        if not isinstance(node, ast.Call) or not ast.unparse(node.func).startswith("judgerisk."):
            raise ValueError("not a call of a judgerisk function")
        keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        for arg in node.args:
            ast.literal_eval(arg)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        return [f"the record's command {text[:200]!r} is not a judgerisk API call ({exc})"]
    shown = keywords.get("parameters", {})
    if not isinstance(shown, dict):
        return [f"the record's command {text[:200]!r} passes parameters that are not a dict"]
    return [
        f"parameter {k}: {params.get(k)!r} in the record, {v!r} in its command"
        for k, v in _plain(shown).items()
        if params.get(k) != v
    ]


def check_command(record: dict, parser: argparse.ArgumentParser | None = None) -> list[str]:
    """Where the record's command (shown to readers) disagrees with its parameters.

    A command line is parsed with ``parser`` (the ``judgerisk`` command-line parser, which
    ``judgerisk verify`` passes; this module does not import the command line, which sits in
    the layer above). Without it a command-line record is checked for its form only.
    """
    params = record.get("parameters")
    cmd = record.get("command")
    if not isinstance(params, dict):
        return ["the record's parameters are not a JSON object"]
    if isinstance(cmd, list):
        return _argv_problems(cmd, params, parser, record.get("extensions"))
    if isinstance(cmd, str):
        return _call_problems(cmd, params)
    return [f"the record's command is neither a command line nor an API call: {cmd!r:.80}"]


def record_int(params: dict, key: str, low: int, high: int, default: Any = ...) -> int | None:
    """The record's integer parameter ``key``, checked to lie in ``[low, high]``.

    ``default`` (when given) stands for a parameter the record may leave out (``None``: not
    given). Raises :class:`ValueError` naming the parameter otherwise.
    """
    value = params.get(key, default)
    if value is ... or (value is None and default is None):
        if value is ...:
            raise ValueError(f"the record has no parameter {key!r}")
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(
            f"the record's parameter {key}={value!r:.40} is not an integer in [{low}, {high}]"
        )
    return value


def check_input_rows(record: dict, loaded: dict) -> list[str]:
    """Where the record's row counts disagree with its input tables (``loaded``, by role)."""
    problems = []
    for role, table in loaded.items():
        recorded = record["inputs"][role].get("rows")
        if recorded is not None and recorded != len(table):
            problems.append(f"input {role}: {recorded!r} rows recorded, {len(table)} now")
    return problems


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def environment_differences(record: dict) -> list[str]:
    """What differs between the recorded run and this process: code and registered methods.

    Lines such as "the recorded run had uncommitted changes ..." or "the recorded run used
    the risk score 'logit_spread' (mymodule.spread), not registered now"; empty when nothing
    that could change the numbers differs (library versions are warned about separately).
    """
    from judgerisk._provenance import git_changes, git_commit, runtime_extensions

    then = _dict(record.get("judgerisk"))
    lines = []
    commit, now_commit = then.get("git_commit"), git_commit()
    if commit != now_commit:
        lines.append(f"the recorded run used git commit {commit}, this checkout is {now_commit}")
    changes, now_changes = then.get("git_changes"), git_changes()
    sha = changes.get("sha256") if isinstance(changes, dict) else None
    now_sha = now_changes.get("sha256") if isinstance(now_changes, dict) else None
    if sha != now_sha:
        files = changes.get("files", []) if isinstance(changes, dict) else []
        files = [str(f) for f in files] if isinstance(files, list) else [str(files)]
        lines.append(
            (
                f"the recorded run had uncommitted changes (sha256 {sha}; {', '.join(files[:5])})"
                if sha
                else "the recorded run had no uncommitted changes"
            )
            + (f", this checkout has (sha256 {now_sha})" if now_sha else ", this checkout none")
        )
    ext = _dict(record.get("extensions"))
    now_ext = runtime_extensions()
    for what in sorted(set(ext) | set(now_ext)):
        a = _dict(ext.get(what))
        b = now_ext.get(what, {})
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                lines.append(
                    f"the recorded run used the {what} {name!r} ({a.get(name) or 'not registered'})"
                    f", this process {b.get(name) or 'has none registered'}"
                )
    return lines
