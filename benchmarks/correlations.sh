#!/usr/bin/env bash
# Every per-metric human-correlation benchmark, bundled and un-tuned models, one table file each.
# Usage: bash benchmarks/correlations.sh [OUT_DIR]   (2-core CPU, uncontended: about 1.5-2 h; FED
# dominates, 15-30 min per model for both levels with all three variants in one pass)
set -euo pipefail
out="${1:-benchmarks/results}"
mkdir -p "$out"
run() {  # name, then dialeval benchmark arguments
  local name="$1"; shift
  echo "== $name"
  dialeval benchmark "$@" --save "$out/$name.json" | tee "$out/$name.txt"
}
run multiref-mturk --metric multiref --dataset multiref-mturk
run multiref-mturk-dialeval --metric multiref --dataset multiref-mturk --option tooling=dialeval
for model in dialeval/smollm2-dailydialog smollm2-135m-instruct; do
  for aspect in coherence fluency; do
    run "holistic-$aspect-${model#dialeval/}" --metric holistic --aspect "$aspect" --option "model=$model"
  done
done
run holistic-consistency-minilm-nli --metric holistic --aspect consistency --option nli=dialeval/minilm-nli
for model in dialeval/smollm2-dialogue smollm2-135m-instruct; do
  for set in fed-turn fed-dialog; do
    run "$set-${model#dialeval/}" --metric fed --dataset "$set" --option "model=$model" --option mode=all
  done
done
for set in convai2 dailydialog empathetic ablations; do
  run "grade-$set" --metric grade --dataset "grade-$set"
done
for set in multiref-mturk grade-convai2 grade-dailydialog grade-empatheticdialogues heldout; do
  run "ssrem-$set" --metric ssrem --dataset "ssrem-$set"
done
