"""Extraction runs across processes: SIGKILL + resume, corrupt parts, torchrun (gloo), CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
torch.set_num_threads(1)  # 2 threads on a shared 2-core machine run many times slower

from judgerisk.cli import main as cli_main  # noqa: E402
from judgerisk.extract import extract_logprobs, read_parts  # noqa: E402
from judgerisk.panel import load_panel  # noqa: E402
from judgerisk.testing import short_template, tiny_items, tiny_judge  # noqa: E402

ATOL = 1e-5
TORCHRUN = Path(sys.executable).with_name("torchrun")

WORKER = """
import functools, sys, time, warnings
warnings.simplefilter("ignore")
import torch
torch.set_num_threads(1)
from transformers import AutoModelForCausalLM, AutoTokenizer
from judgerisk.extract import extract_logprobs
from judgerisk.testing import short_template, tiny_items

model_dir, out_dir, n_items, delay, result = sys.argv[1:6]
tok = AutoTokenizer.from_pretrained(model_dir)
model = AutoModelForCausalLM.from_pretrained(model_dir)
if float(delay) > 0:
    fwd = model.forward
    @functools.wraps(fwd)
    def slow(*args, **kwargs):
        time.sleep(float(delay))
        return fwd(*args, **kwargs)
    model.forward = slow
items = tiny_items(int(n_items))
kw = dict(batch_size=2, template=short_template())
panel = extract_logprobs(model, tok, items, out_dir=out_dir, **kw)
gathered = extract_logprobs(model, tok, items, conditions=("original", "swap"), **kw)
import os
if os.environ.get("RANK", "0") == "0":
    panel.to_parquet(result + ".parts.parquet")
    gathered.to_parquet(result + ".gather.parquet")
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    path = tiny_judge(root / "judge")
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path)
    worker = root / "worker.py"
    worker.write_text(WORKER)
    return root, path, model, tok, worker


def _quiet(fn, *args, **kw):
    if fn is extract_logprobs:
        kw.setdefault("template", short_template())
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="low verdict mass")
        return fn(*args, **kw)


def _env():
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    return env


def _parts(out: Path):
    return sorted((out / "parts").glob("part-*.parquet"))


def test_sigkill_then_resume(setup):
    root, path, model, tok, worker = setup
    out = root / "resume"
    n_items, n_prompts = 5, 30  # batch_size=2 -> 15 parts
    proc = subprocess.Popen(
        [sys.executable, str(worker), str(path), str(out), str(n_items), "0.4", str(root / "r")],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 150
    try:
        while len(_parts(out)) < 3 if out.exists() else True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "worker wrote no parts in time"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done_before = len(_parts(out))
    assert 3 <= done_before < n_prompts // 2, "the kill did not land mid-run"
    assert len(read_parts(out)) == 2 * done_before

    resumed = _quiet(extract_logprobs, model, tok, tiny_items(n_items), batch_size=2, out_dir=out)
    fresh = _quiet(extract_logprobs, model, tok, tiny_items(n_items), batch_size=2)
    # nothing lost, nothing duplicated, no finished batch redone
    assert len(resumed) == n_prompts and not resumed.duplicated(["item", "condition"]).any()
    assert len(_parts(out)) == n_prompts // 2
    cols = ["item", "judge", "condition", "verdict", "gold", "prompt_tokens", "template_hash"]
    pd.testing.assert_frame_equal(resumed[cols], fresh[cols])
    np.testing.assert_allclose(resumed["logit"], fresh["logit"], atol=1e-6)

    # a truncated part is detected, set aside and redone
    victim = _parts(out)[4]
    victim.write_bytes(victim.read_bytes()[:50])
    with pytest.warns(UserWarning, match="corrupt result part"):
        again = _quiet(extract_logprobs, model, tok, tiny_items(n_items), batch_size=2, out_dir=out)
    assert victim.with_name(victim.name + ".corrupt").exists()
    np.testing.assert_allclose(again["logit"], fresh["logit"], atol=1e-6)
    assert len(_parts(out)) == n_prompts // 2

    # a different judge cannot write into the same folder
    with pytest.raises(ValueError, match="different run"):
        _quiet(extract_logprobs, model, tok, tiny_items(n_items), judge="other", out_dir=out)


@pytest.mark.skipif(not TORCHRUN.exists(), reason=f"{TORCHRUN} not found")
def test_torchrun_two_processes_equals_one(setup):
    root, path, model, tok, worker = setup
    out, res = root / "dist", root / "dist_result"
    cmd = [
        str(TORCHRUN),
        "--nproc_per_node",
        "2",
        "--master_port",
        str(29500 + os.getpid() % 500),
        str(worker),
        str(path),
        str(out),
        "4",
        "0",
        str(res),
    ]
    done = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = {p.name[:9] for p in _parts(out)}
    assert ranks == {"part-r000", "part-r001"}, ranks
    single = _quiet(extract_logprobs, model, tok, tiny_items(4), batch_size=2)
    for suffix, conds in ((".parts.parquet", None), (".gather.parquet", ("original", "swap"))):
        dist_panel = pd.read_parquet(str(res) + suffix)
        ref = single if conds is None else single[single["condition"].isin(conds)]
        ref = ref.reset_index(drop=True)
        assert len(dist_panel) == len(ref)
        pd.testing.assert_frame_equal(
            dist_panel[["item", "condition"]], ref[["item", "condition"]], check_dtype=False
        )
        np.testing.assert_allclose(dist_panel["logit"], ref["logit"], atol=ATOL)
        np.testing.assert_allclose(dist_panel["logprob_a"], ref["logprob_a"], atol=ATOL)


def test_cli(setup):
    root, path, model, tok, _ = setup
    items = root / "items.jsonl"
    tiny_items(2).to_json(items, orient="records", lines=True)
    out = root / "cli"
    tmpl = root / "short.json"
    tmpl.write_text(json.dumps(short_template()))
    args = [
        "extract",
        "--model",
        str(path),
        "--items",
        str(items),
        "--out",
        str(out),
        "--conditions",
        "original",
        "swap",
        "--batch-size",
        "3",
        "--judge",
        "tiny",
        "--no-progress",
        "--template",
        str(tmpl),
    ]
    assert _quiet(cli_main, args) == 0
    panel = load_panel(out / "panel.parquet")
    assert len(panel) == 4 and set(panel["judge"]) == {"tiny"}
    from judgerisk._provenance import read_record

    record = read_record(out / "panel.parquet")  # the extracted panel says how it was made
    assert record["parameters"]["judge"] == "tiny" and record["inputs"]["items"]["sha256"]
    assert read_record(out / "manifest.json")["judgerisk"]["version"]
    ref = _quiet(extract_logprobs, model, tok, tiny_items(2), conditions=("original", "swap"))
    np.testing.assert_allclose(panel["logit"], ref["logit"], atol=ATOL)
