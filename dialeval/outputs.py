"""What the CLI writes, checked before any scoring: output paths and strict JSON lines.

* :func:`check_output_path` refuses, with a one-line ``ValueError`` naming the path as the user gave
  it, an output that is a directory, lies in a folder that does not exist or cannot be written, or
  is a file that cannot be written -- before an hour of scoring, not after it.
* :func:`json_line` writes a record as strict JSON: a NaN or infinite score (holistic diversity of
  an item alone in its group) is ``null``, never the ``NaN`` token other JSON readers reject.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any


def check_output_path(given: str | os.PathLike) -> Path:
    """``given`` as a :class:`Path` when a file can be written there; ``ValueError`` otherwise."""
    path = Path(given)
    if path.is_dir():
        raise ValueError(f"{given}: is a directory; give a file path (e.g. {Path(given) / 'scores.jsonl'})")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{given}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{given}: the folder {folder} cannot be written (permissions or a read-only file system)")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{given}: the file exists and cannot be written")
    return path


def strict(value: Any) -> Any:
    """``value`` with every NaN or infinite float (at any depth) replaced by ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def json_line(record: Any) -> str:
    """``record`` as one line of strict JSON (NaN and infinities as ``null``)."""
    return json.dumps(strict(record), allow_nan=False)
