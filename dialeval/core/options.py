"""Validation of metric options, shared by every evaluate module, runner and scorer.

Every check raises ``ValueError`` naming the option, the value given and what is accepted, so a
typo (``rouge_beta="x"``, ``metrics="bleu2"``, ``mdoel=...``) fails at once with a message instead
of a ``TypeError`` from deep inside a library or, worse, a silently ignored option.
"""

from __future__ import annotations

import math
from typing import Any, Collection, Iterable, Mapping, Sequence


def check_known(where: str, given: Mapping[str, Any] | Iterable[str], accepted: Collection[str]) -> None:
    """Raise when ``given`` has an option name not in ``accepted``."""
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise ValueError(f"{where}: unknown option(s) {unknown}; accepted: {sorted(accepted)}")


def check_choice(name: str, value: Any, choices: Collection[Any]) -> Any:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(map(str, choices))}, got {value!r}")
    return value


def check_number(name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
                 strict_minimum: bool = False, integer: bool = False) -> float | int:
    """``value`` as a finite number in range (bool is not a number); ``integer`` asks for an int."""
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite {'integer' if integer else 'number'}, got {value!r}")
    if minimum is not None and (value <= minimum if strict_minimum else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict_minimum else '>='} {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return value


def check_names(name: str, value: Any, valid: Sequence[str]) -> tuple[str, ...]:
    """A non-empty list of names from ``valid``; a single string is one name (``"bleu2"``), not letters."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{name} must be a name or a non-empty list of names from {list(valid)}, got {value!r}")
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ValueError(f"unknown {name} {unknown}; valid: {list(valid)}")
    return tuple(names)


def check_device(device: Any) -> str | None:
    """``None`` (the caller's default) or a device torch has here: ``"cuda"`` on a CPU-only build
    is refused with a message, not torch's ``AssertionError``."""
    if device is None:
        return None
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"device {device!r} is not a torch device ({e})") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: this torch build or machine has no CUDA; use device='cpu'")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {device!r}: MPS is not available here; use device='cpu'")
    return str(parsed)


def default_device() -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"`` (what ``device=None`` means everywhere)."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
