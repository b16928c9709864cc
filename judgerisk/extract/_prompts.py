"""Judge prompts as data: versioned templates, items, the conditions and chat rendering.

A template is a JSON record (``judgerisk/extract/templates/<name>.json``) with a system message, a
user message with the fields ``{rubric} {prompt} {answer_a} {answer_b}``, three rubrics and a table
that maps each of the paper's six conditions to ``(swap, rubric)``. Every extracted row records
the template name and a hash of the whole record, so results from different prompts are never
mixed silently.

A condition the table does not define is rendered by its perturbation family
(:mod:`judgerisk.families`): ``label1`` relabels the answers, ``format2`` re-lays them out,
``verbosity1`` pads answer A, ``swap_`` shows them in the other order. The families that draw
choices (format, verbosity) draw them from ``seed``, so the same items, template, conditions and
seed give the same prompts everywhere (:func:`perturb_items` writes them out).

References
----------
Methods reference §1; the instance-level panel reliability paper (appendix: system and task prompts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgerisk._util.files import check_regular
from judgerisk._util.hashing import sha256_text
from judgerisk.families import (
    FAMILIES,
    ORIGINAL,
    Draw,
    PromptParts,
    get_family,
    is_declared,
    parse_condition,
)
from judgerisk.options import DEFAULT_TEMPLATE, check_count
from judgerisk.panel import CONDITIONS
from judgerisk.panel._files import jsonl_chunks

__all__ = [
    "Template",
    "PLAIN_CHAT_TEMPLATE",
    "list_templates",
    "load_template",
    "read_items",
    "item_chunks",
    "build_prompts",
    "perturbation_settings",
    "rendered_prompts",
    "render_chat",
    "render_chats",
]

ITEM_COLUMNS = ("item", "prompt", "answer_a", "answer_b")
_FIELDS = {"rubric", "prompt", "answer_a", "answer_b"}

#: A documented fallback for tokenizers without a chat template (base models): role-tagged plain
#: text ending with ``"Assistant:"``. Pass it as ``chat_template=PLAIN_CHAT_TEMPLATE``.
PLAIN_CHAT_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}\n\n"
    "{% elif m['role'] == 'user' %}User: {{ m['content'] }}\n\n"
    "{% else %}Assistant: {{ m['content'] }}\n\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)


@dataclass(frozen=True)
class Template:
    """A versioned judge prompt.

    Attributes
    ----------
    name : str
        Template name, e.g. ``"pairwise_v1"``.
    version : int
        Version number; bump it whenever the wording changes.
    system, user : str
        System message and user message (``str.format`` fields: rubric, prompt, answer_a,
        answer_b).
    rubrics : dict
        Rubric name -> text; conditions refer to these names.
    conditions : dict
        Condition name -> ``{"swap": bool, "rubric": str}``.
    assistant_prefill : str
        Text placed at the start of the assistant turn, before the verdict slot.
    verdict_tokens : tuple of str
        The two verdict strings, for the judge's first and second displayed answer.
    kind : str
        ``"verdict"`` (one-token logprobs) or ``"verbalized"`` (generation baseline).
    hash : str
        First 16 hex digits of the SHA-256 of the canonical JSON of the record.
    """

    name: str
    version: int
    system: str
    user: str
    rubrics: dict
    conditions: dict
    assistant_prefill: str = ""
    verdict_tokens: tuple = ("A", "B")
    kind: str = "verdict"
    description: str = ""
    record: dict = field(default_factory=dict, repr=False, compare=False)
    hash: str = ""

    @classmethod
    def from_record(cls, record: dict) -> Template:
        """Build and check a template from its JSON record."""
        need = ("name", "version", "system", "user", "rubrics", "conditions")
        missing = [k for k in need if k not in record]
        if missing:
            raise ValueError(f"template record is missing key(s) {missing}")
        fields = set(re.findall(r"{(\w+)}", record["user"]))
        if fields - _FIELDS or not {"prompt", "answer_a", "answer_b"} <= fields:
            raise ValueError(
                f"template {record['name']!r}: user message fields {sorted(fields)} must be among "
                f"{sorted(_FIELDS)} and include prompt, answer_a, answer_b"
            )
        for cond, spec in record["conditions"].items():
            if spec.get("rubric") not in record["rubrics"] or not isinstance(
                spec.get("swap"), bool
            ):
                raise ValueError(
                    f"template {record['name']!r}: condition {cond!r} must map to a known rubric "
                    f"{sorted(record['rubrics'])} and a boolean 'swap', got {spec}"
                )
        tokens = tuple(record.get("verdict_tokens", ("A", "B")))
        if len(tokens) != 2 or tokens[0] == tokens[1]:
            raise ValueError(f"verdict_tokens must be two different strings, got {tokens}")
        canon = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = sha256_text(canon)[:16]
        return cls(
            name=str(record["name"]),
            version=int(record["version"]),
            system=record["system"],
            user=record["user"],
            rubrics=dict(record["rubrics"]),
            conditions=dict(record["conditions"]),
            assistant_prefill=record.get("assistant_prefill", ""),
            verdict_tokens=tokens,
            kind=record.get("kind", "verdict"),
            description=record.get("description", ""),
            record=record,
            hash=digest,
        )

    def messages(self, prompt: str, first: str, second: str, rubric: str) -> list[dict]:
        """Chat messages for one prompt with the answers in display order."""
        return chat_messages(self.parts(prompt, first, second, rubric), swapped=False)

    def parts(self, prompt: str, answer_a: str, answer_b: str, rubric: str) -> PromptParts:
        """The unperturbed pieces of one prompt (what a perturbation family changes)."""
        return PromptParts(
            system=self.system,
            user=self.user,
            assistant_prefill=self.assistant_prefill,
            verdict_tokens=(str(self.verdict_tokens[0]), str(self.verdict_tokens[1])),
            labels=(str(self.verdict_tokens[0]).strip(), str(self.verdict_tokens[1]).strip()),
            rubric=self.rubrics[rubric],
            rubrics=self.rubrics,
            prompt=prompt,
            answer_a=answer_a,
            answer_b=answer_b,
        )


def chat_messages(parts: PromptParts, swapped: bool) -> list[dict]:
    """The system and user messages of one prompt, answers in display order (B first when
    ``swapped``)."""
    first, second = (
        (parts.answer_b, parts.answer_a) if swapped else (parts.answer_a, parts.answer_b)
    )
    user = parts.user.format(
        rubric=parts.rubric, prompt=parts.prompt, answer_a=first, answer_b=second
    )
    return [{"role": "system", "content": parts.system}, {"role": "user", "content": user}]


def list_templates() -> list[str]:
    """Names of the templates shipped with judgerisk."""
    folder = resources.files("judgerisk.extract").joinpath("templates")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load_template(template: str | Path | dict | Template = DEFAULT_TEMPLATE) -> Template:
    """Load a template by shipped name, JSON path, record dict or pass a Template through.

    Parameters
    ----------
    template : str, Path, dict or Template
        A shipped name (see :func:`list_templates`), a path to a JSON file, or a record.

    Returns
    -------
    Template
    """
    if isinstance(template, Template):
        return template
    if isinstance(template, dict):
        return Template.from_record(template)
    path = check_regular(template, "template file")
    if path.suffix == ".json" and path.exists():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            return Template.from_record(record)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"template {path}: line {exc.lineno}: not valid JSON ({exc.msg})"
            ) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"template {path}: {exc}") from None
    names = list_templates()
    if str(template) not in names:
        raise ValueError(f"unknown template {str(template)!r}; shipped templates: {names}")
    res = resources.files("judgerisk.extract").joinpath("templates", f"{template}.json")
    return Template.from_record(json.loads(res.read_text(encoding="utf-8")))


def read_items(items: Any) -> pd.DataFrame:
    """Read and check an items table: ``item, prompt, answer_a, answer_b[, gold]``.

    Parameters
    ----------
    items : DataFrame or path
        A DataFrame, or a ``.jsonl`` / ``.json`` / ``.csv`` / ``.parquet`` file.

    Returns
    -------
    pandas.DataFrame
        A copy with text columns as Python ``str``; other columns are kept. Item ids that mix
        text and numbers (``1`` and ``"x2"``) are all written as text (``"1"``, ``"x2"``), so
        every table written from them (csv, jsonl, parquet) holds one id type; two ids that are
        then equal (``1`` and ``"1"``) are duplicates.

    Raises
    ------
    ValueError
        Naming missing columns, duplicate item ids, and rows with empty or missing text, or gold
        values other than "A"/"B".
    """
    if isinstance(items, pd.DataFrame):
        return _check_items(items)
    path = Path(items)
    frame = _read_items_file(path)
    try:
        return _check_items(frame)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def item_chunks(items: Any, size: int) -> Iterator[pd.DataFrame]:
    """:func:`read_items` ``size`` items at a time, in file order: memory set by ``size``.

    jsonl, csv and parquet files are read chunk by chunk (a ``.json`` array, or a DataFrame, is
    read whole and then cut). Each chunk is checked as :func:`read_items` checks a table, with
    rows numbered from the top of the file; an item id seen in an earlier chunk is refused too.
    """
    size = check_count("chunk size", size, minimum=1)
    path = None if isinstance(items, pd.DataFrame) else Path(items)
    seen: set = set()
    start = 0
    for frame in _raw_chunks(items, path, size):
        try:
            chunk = _check_items(frame, start=start)
            again = chunk["item"].isin(seen).to_numpy()
            if again.any():
                rows = [start + int(k) for k in np.flatnonzero(again)[:10]]
                raise ValueError(
                    f"duplicate item ids {pd.unique(chunk.loc[again, 'item']).tolist()[:10]} at "
                    f"rows {rows} (seen in earlier rows too)"
                )
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}" if path is not None else str(exc)) from None
        seen.update(chunk["item"].tolist())
        start += len(chunk)
        yield chunk
    if start == 0:
        raise ValueError(f"{path}: items table is empty" if path else "items table is empty")


def _raw_chunks(items: Any, path: Path | None, size: int) -> Iterator[pd.DataFrame]:
    """The items' rows as given, ``size`` at a time (files read as :func:`read_items` reads)."""
    if path is None or path.suffix.lower() == ".json":
        whole = items if path is None else _read_items_file(path)
        for k in range(0, len(whole), size):
            yield whole.iloc[k : k + size]
        return
    if not check_regular(path, "items file").exists():  # a FIFO: refused before any read
        raise FileNotFoundError(f"items file not found: {path}")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        yield from jsonl_chunks(path, size)
    elif suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=size):
            yield pa.Table.from_batches([batch]).to_pandas()
    elif suffix == ".csv":  # every cell as written: "007" and "NA" are text
        yield from pd.read_csv(path, dtype=str, keep_default_na=False, chunksize=size)
    else:
        raise ValueError(f"items file {path} must be .jsonl, .json, .csv or .parquet")


def _read_items_file(path: Path) -> pd.DataFrame:
    """An items file as given (ids as text stay text); errors name the file (and line)."""
    from judgerisk.panel import read_table

    if not check_regular(path, "items file").exists():
        raise FileNotFoundError(f"items file not found: {path}")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".parquet"):
        return read_table(path)
    if suffix not in (".json", ".csv"):
        raise ValueError(f"items file {path} must be .jsonl, .json, .csv or .parquet")
    try:
        if suffix == ".csv":  # every cell as written: "007" and "NA" are text
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        return pd.read_json(path, dtype=False)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: cannot read it as {suffix} ({first})") from None


def _id_text(value: Any) -> str:
    """An id as text: an integral number without its ``.0`` (``2.0`` -> ``"2"``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _check_items(items: pd.DataFrame, start: int = 0) -> pd.DataFrame:
    """The checks of :func:`read_items` (rows named from ``start``: a chunk's first row)."""
    missing = [c for c in ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise ValueError(
            f"items are missing column(s) {missing}; need {list(ITEM_COLUMNS)} (+ optional gold), "
            f"got {list(items.columns)}"
        )
    if items.columns.duplicated().any():
        dup = sorted(set(items.columns[items.columns.duplicated()]))
        raise ValueError(f"duplicate column(s) {dup}")
    out = items.reset_index(drop=True).copy()
    out.index = pd.RangeIndex(start, start + len(out))
    if len(out) == 0:
        raise ValueError("items table is empty")
    if out["item"].isna().any():
        rows = list(out.index[out["item"].isna()][:10])
        raise ValueError(f"column 'item' has missing ids at rows {rows}")
    odd = out["item"].map(lambda v: isinstance(v, dict | list | tuple | set))
    if odd.any():
        rows = list(out.index[odd][:10])
        raise ValueError(
            f"column 'item' holds non-scalar ids (objects or lists) at rows {rows}: "
            f"{out.loc[odd, 'item'].iloc[0]!r}"
        )
    text = out["item"].map(lambda v: isinstance(v, str))
    if text.any() and not text.all():  # 1 and "x2": every id as text, so a table holds one type
        out["item"] = out["item"].map(_id_text).astype(object)
    dup = out["item"].duplicated(keep=False)
    if dup.any():
        rows = list(out.index[dup][:10])
        raise ValueError(
            f"duplicate item ids {list(pd.unique(out.loc[dup, 'item']))[:10]} at rows {rows}"
        )
    for col in ITEM_COLUMNS[1:]:
        values = out[col]
        bad = values.isna() | (values.astype(str).str.strip() == "")
        if bad.any():
            ids = list(out.loc[bad, "item"][:10])
            raise ValueError(
                f"column {col!r} is empty or missing for {int(bad.sum())} item(s): {ids}"
            )
        out[col] = values.astype(str).astype(object)
    if "gold" in out.columns:
        bad = ~out["gold"].isin(["A", "B"]) & out["gold"].notna()
        if bad.any():
            raise ValueError(
                f"column 'gold' must be 'A' or 'B'; bad values {sorted(set(out.loc[bad, 'gold']))}"
                f" for items {list(out.loc[bad, 'item'][:10])}"
            )
    return out.reset_index(drop=True)


def rendered_prompts(
    items: Any,
    template: str | Path | dict | Template,
    conditions: Sequence[str],
    render: Callable[..., list[str]],
    *,
    kind: str | None = None,
    seed: int = 0,
) -> tuple[pd.DataFrame, Template, pd.DataFrame]:
    """Items -> one rendered prompt per (item, condition): the one way every extraction path
    prepares its prompts (chat template, then the assistant prefill).

    Parameters
    ----------
    items : any
        What :func:`read_items` reads.
    template : str, path, dict or Template
        What :func:`load_template` loads.
    conditions : sequence of str
        Condition names defined by the template or declared by a perturbation family.
    render : callable
        ``render(conversations, assistant_prefill=...) -> list of str``: a judge's
        ``render`` (:class:`judgerisk.extract.judge.Judge`), or :func:`render_chats` bound to a
        tokenizer.
    kind : str, optional
        The template kind required (e.g. ``"verdict"``), checked before the items are read.
    seed : int, default 0
        Perturbation seed of the families that draw (format, verbosity).

    Returns
    -------
    (items, template, prompts)
        ``prompts`` is :func:`build_prompts`'s table with the rendered ``text`` column (each
        row rendered with its own ``prefill``: a label variant may change it).
    """
    tmpl = load_template(template)
    if kind is not None and tmpl.kind != kind:
        raise ValueError(f"template {tmpl.name!r} is of kind {tmpl.kind!r}, need {kind!r}")
    items = read_items(items)
    prompts = build_prompts(items, tmpl, tuple(conditions), seed=seed)
    texts = pd.Series("", index=prompts.index, dtype=object)
    for prefill, rows in prompts.groupby("prefill", sort=False).groups.items():
        rendered = render(list(prompts.loc[rows, "messages"]), assistant_prefill=prefill)
        texts.loc[rows] = rendered
    prompts["text"] = texts.astype(object)
    return items, tmpl, prompts


def build_prompts(
    items: pd.DataFrame,
    template: Template,
    conditions: Sequence[str] = CONDITIONS,
    *,
    seed: int = 0,
) -> pd.DataFrame:
    """Expand items into one chat prompt per (item, condition).

    Parameters
    ----------
    items : DataFrame
        Output of :func:`read_items`.
    template : Template
    conditions : sequence of str
        Condition names: those of the template's table (the paper's six in the shipped
        templates), or any condition a perturbation family declares (``label1``,
        ``swap_format2``, ``verbosity1``, ...), rendered from the template's original condition
        by that family (:meth:`judgerisk.families.Family.perturb`).
    seed : int, default 0
        Perturbation seed: the families that draw (format's layouts, verbosity's sentences)
        draw from it, the family and the item id only (:class:`judgerisk.families.Draw`).

    Returns
    -------
    pandas.DataFrame
        Columns ``item, condition, swapped, rubric, messages`` (list of chat messages),
        ``prefill`` (the assistant prefill), ``verdict_a``, ``verdict_b`` (the verdict strings of
        the first and second shown answer), ``label_first``, ``label_second`` (their labels),
        ``answer_a``, ``answer_b`` (the canonical answers as shown, after any perturbation) and
        ``perturbation`` (what the family changed, in words; empty for a table condition), one
        row per item and condition, items in input order and conditions in the given order.

    Notes
    -----
    With ``swapped`` the judge sees the original answer B first (labelled "A"); its "A" token then
    means original B, so the canonical probability is ``P(token "B")`` (Methods reference §1).
    """
    conditions = tuple(conditions)
    unknown = [c for c in conditions if c not in template.conditions and not is_declared(c)]
    if unknown:
        raise ValueError(
            f"condition(s) {unknown} are not defined by template {template.name!r} (defines "
            f"{list(template.conditions)}) nor declared by a perturbation family: a condition "
            f"is <family><k> or swap_<family><k> with a family among {list(FAMILIES)}"
        )
    if len(set(conditions)) != len(conditions):
        raise ValueError(f"conditions must be unique, got {conditions}")
    base = template.conditions.get(ORIGINAL, {"swap": False, "rubric": "standard"})
    rows = []
    for cond in conditions:
        spec = template.conditions.get(cond)
        parsed = None if spec is not None else parse_condition(cond)
        swapped = bool(spec["swap"]) if spec is not None else bool(parsed and parsed.swapped)
        rubric = (spec or base)["rubric"]
        family = get_family(parsed.family) if parsed is not None and parsed.family else None
        variant = int(parsed.variant or 0) if parsed is not None else 0
        for item, prompt, a, b in zip(
            items["item"], items["prompt"], items["answer_a"], items["answer_b"], strict=True
        ):
            parts = template.parts(prompt, a, b, rubric)
            if family is not None:
                parts = family.perturb(parts, variant, Draw(seed, family.name, item))
            rows.append(_prompt_row(item, cond, swapped, _rubric_name(parts, rubric), parts))
    out = pd.DataFrame(rows)
    order = {c: k for k, c in enumerate(conditions)}
    pos = {item: k for k, item in enumerate(items["item"])}
    out["_o"] = out["item"].map(pos) * len(conditions) + out["condition"].map(order)
    return out.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)


def _rubric_name(parts: PromptParts, default: str) -> str:
    """The template's name of the rubric the parts carry (a rubric variant changes it;
    ``"(changed)"`` when a family wrote a rubric of its own)."""
    names = [n for n, text in parts.rubrics.items() if text == parts.rubric]
    return default if default in names else (names[0] if names else "(changed)")


def _prompt_row(item: Any, cond: str, swapped: bool, rubric: str, parts: PromptParts) -> dict:
    first, second = parts.labels
    return {
        "item": item,
        "condition": cond,
        "swapped": swapped,
        "rubric": rubric,
        "messages": chat_messages(parts, swapped),
        "prefill": parts.assistant_prefill,
        "verdict_a": parts.verdict_tokens[0],
        "verdict_b": parts.verdict_tokens[1],
        "label_first": first,
        "label_second": second,
        "answer_a": parts.answer_a,
        "answer_b": parts.answer_b,
        "perturbation": "; ".join(parts.notes),
    }


def perturbation_settings(
    template: Template, conditions: Sequence[str], seed: int = 0
) -> dict[str, Any] | None:
    """What identifies the family-rendered prompts of a run: the seed and each family's version.

    ``None`` when every condition is in the template's table (the paper's six), so the resume
    manifest and the provenance of such a run are as they always were.

    Returns
    -------
    dict or None
        ``{"seed": seed, "families": {name: {"version": ..., "seeded": ...}}}``.
    """
    used = {}
    for cond in conditions:
        if cond in template.conditions:
            continue
        parsed = parse_condition(cond)
        if parsed is not None and parsed.family is not None:
            used[parsed.family] = get_family(parsed.family).describe()
    if not used:
        return None
    return {"seed": int(seed), "families": dict(sorted(used.items()))}


_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)


def render_chat(
    tokenizer: Any,
    messages: list[dict],
    *,
    enable_thinking: bool = False,
    chat_template: str | None = None,
    assistant_prefill: str = "",
) -> str:
    """Render chat messages to the judge's prompt text, ending at the verdict slot.

    Parameters
    ----------
    tokenizer : transformers tokenizer
    messages : list of dict
    enable_thinking : bool
        Passed to the chat template. Must be False for one-token verdict extraction.
    chat_template : str or None
        A Jinja template overriding the tokenizer's (e.g. :data:`PLAIN_CHAT_TEMPLATE` for a base
        model without one).
    assistant_prefill : str
        Text appended after the generation prompt (the start of the assistant turn).

    Returns
    -------
    str
        The rendered text, with ``add_generation_prompt=True``.

    Raises
    ------
    ValueError
        If the tokenizer has no chat template and none is given, or when the rendered generation
        prompt opens a thinking block that it does not close (the first generated token would be
        reasoning, not the verdict).
    """
    return render_chats(
        tokenizer,
        [messages],
        enable_thinking=enable_thinking,
        chat_template=chat_template,
        assistant_prefill=assistant_prefill,
    )[0]


def render_chats(
    tokenizer: Any,
    conversations: list[list[dict]],
    *,
    enable_thinking: bool = False,
    chat_template: str | None = None,
    assistant_prefill: str = "",
) -> list[str]:
    """Batch version of :func:`render_chat` (one template call for all conversations)."""
    template = chat_template if chat_template is not None else tokenizer.chat_template
    if not template:
        raise ValueError(
            "the tokenizer has no chat template. Pass chat_template=... (a Jinja string), e.g. "
            "judgerisk.extract.PLAIN_CHAT_TEMPLATE for a base model"
        )
    conversations = list(conversations)
    if not conversations:
        return []
    texts = tokenizer.apply_chat_template(
        conversations,
        chat_template=template,
        tokenize=False,
        add_generation_prompt=True,
        enable_thinking=enable_thinking,
    )
    for text, messages in zip(texts, conversations, strict=True):
        _check_thinking(text, messages[-1]["content"], enable_thinking)
    return [text + assistant_prefill for text in texts]


def _check_thinking(text: str, last_content: str, enable_thinking: bool) -> None:
    last = text.rfind(last_content)
    tail = text[last + len(last_content) :] if last >= 0 else text
    for match in _THINK_OPEN.finditer(tail):
        tag = match.group(1).lower()
        if not re.search(rf"</{tag}>", tail, re.IGNORECASE):
            raise ValueError(
                f"the rendered prompt opens a <{tag}> block after the last user message without "
                f"closing it (enable_thinking={enable_thinking}): the first generated token would "
                f"be reasoning, not the verdict. Disable thinking in the chat template. Rendered "
                f"tail: {tail!r}"
            )
