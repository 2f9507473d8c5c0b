#!/usr/bin/env bash
# Every human-correlation benchmark, raw and fine-tuned local models, one table file each.
# Usage: bash benchmarks/correlations.sh [OUT_DIR]   (2-core CPU: about 1.5 h; FED dominates,
# 3-7 min per FED-dialog run and 12-25 min per FED-turn run)
set -euo pipefail
out="${1:-benchmarks/results}"
mkdir -p "$out"
run() {  # name, then dialeval benchmark arguments
  local name="$1"; shift
  echo "== $name"
  dialeval benchmark "$@" --save "$out/$name.json" | tee "$out/$name.txt"
}
run multiref-mturk --metric multiref --dataset multiref-mturk
for model in smollm2-dailydialog smollm2-135m-instruct; do
  for aspect in coherence fluency; do
    run "holistic-$aspect-$model" --metric holistic --aspect "$aspect" --option "model=$model"
  done
done
run holistic-consistency-minilm-nli --metric holistic --aspect consistency --option nli=minilm-nli
for model in smollm2-dialogue smollm2-135m-instruct; do
  for set in fed-turn fed-dialog; do
    run "$set-$model" --metric fed --dataset "$set" --option "model=$model"
    run "$set-$model-conditional" --metric fed --dataset "$set" --option "model=$model" --option mode=conditional
  done
done
