"""What the CLI writes, checked before any scoring: output paths and strict JSON lines.

* :func:`check_output_path` refuses, with a one-line ``ValueError`` naming the path as the user gave
  it, an output that is not a regular file or a new path in a writable folder: a directory, a
  device, a pipe or a process's file descriptor (``/dev/full``, ``/dev/stdout``: read back to resume
  they never end or are not the file written), a path in a folder that does not exist or cannot be
  written, a file that cannot be written, one of the command's input files (also with
  ``--overwrite``: the input would be lost), and ``-`` where a command cannot stream to standard
  output -- before an hour of scoring, not after it.
* :func:`check_output_dir` does the same for a folder that a command fills (``benchmark --all
  --output-dir``): an existing file is refused, a missing folder must be creatable, and the files it
  will write there are checked.
* :func:`json_line` writes a record as strict JSON: a NaN or infinite score (holistic diversity of
  an item alone in its group) is ``null``, never the ``NaN`` token other JSON readers reject.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

STDOUT = "-"
_SPECIAL_ROOTS = ("/dev", "/proc")  # devices and /proc/self/fd links: never an output file


def _under_special_root(path: Path) -> bool:
    return any(str(path) == root or str(path).startswith(root + "/") for root in _SPECIAL_ROOTS)


def check_output_path(given: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """``given`` as a :class:`Path` when a regular file can be written there and it is none of
    ``inputs``; ``ValueError`` naming ``given`` otherwise (see the module docstring)."""
    if str(given) == STDOUT:
        raise ValueError(f"{given}: standard output is not an output here; give a file path")
    path = Path(given)
    resolved = path.resolve()
    if path.is_dir():
        raise ValueError(f"{given}: is a directory; give a file path (e.g. {path / 'scores.jsonl'})")
    if _under_special_root(Path(os.path.abspath(path))) or _under_special_root(resolved) or \
            (resolved.exists() and not resolved.is_file()):
        raise ValueError(f"{given}: not a regular file (a device, a pipe or a file descriptor); give a file path")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{given}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{given}: the folder {folder} cannot be written (permissions or a read-only file system)")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{given}: the file exists and cannot be written")
    for source in inputs:
        if _same_file(path, Path(source)):
            raise ValueError(f"{given}: is the input file {source}; writing it would destroy the input "
                             "(also with --overwrite); give another output path")
    return path


def _same_file(output: Path, source: Path) -> bool:
    """Whether ``output`` names the existing file ``source`` (through links and hard links too)."""
    try:
        return source.is_file() and (output.resolve() == source.resolve()
                                     or (output.exists() and os.path.samefile(output, source)))
    except OSError:
        return False


def check_output_dir(given: str | os.PathLike, files: Iterable[str] = (), inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """``given`` as a :class:`Path` when it is a folder (or can be created as one) in which the
    ``files`` can be written; ``ValueError`` naming ``given`` otherwise (an existing file, a file where
    a parent folder should be, a folder that cannot be written)."""
    if str(given) == STDOUT:
        raise ValueError(f"{given}: standard output is not a folder; give a folder path")
    folder = Path(given)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{given}: is a file, not a folder; give a folder path (it is created when missing)")
    existing = next(p for p in [folder, *folder.absolute().parents] if p.exists())
    if not existing.is_dir():
        raise ValueError(f"{given}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{given}: the folder {existing} cannot be written (permissions or a read-only file system)")
    if folder.is_dir():
        for name in files:
            check_output_path(folder / name, inputs)
    return folder


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
