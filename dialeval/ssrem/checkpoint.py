"""SSREM's learned ``f(c, r) = v(c)^T M v(r)``: the bilinear module and its checkpoint folder
(``model.safetensors`` holding ``M``, ``config.json``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "dialeval/ssrem-chitchat-mpnet"  # all-mpnet-base-v2; "dialeval/ssrem-chitchat": the GloVe model
ABLATION = "ablation-rsrem"  # RSREM, bundled inside the SSREM folder
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def bilinear_module(dim: int):
    """``f`` as a torch module: ``forward(c (b, d), r (b, n, d)) = c^T M r`` of shape ``(b, n)``;
    ``M`` starts at zero (every candidate equally likely)."""
    import torch

    class Bilinear(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.M = torch.nn.Parameter(torch.zeros(dim, dim))

        def forward(self, c: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            return torch.einsum("bd,de,bne->bn", c, self.M, r)

    return Bilinear()


def resolve_folder(model: str | os.PathLike) -> Path:
    """A checkpoint folder: a directory, or ``dialeval/<name>`` bundled under ``hub/``."""
    from dialeval.models.hub import bundled_dir

    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ValueError(f"model must be a folder or 'dialeval/<name>', got {model!r}")
    path = Path(model).expanduser()
    if (path / CONFIG_FILE).is_file():
        return path
    bundled = bundled_dir(str(model))
    if bundled is not None and (bundled / CONFIG_FILE).is_file():
        return bundled
    raise FileNotFoundError(
        f"SSREM model {str(model)!r}: no {CONFIG_FILE} there and no bundled hub/ folder of that name; "
        "build one with `python training/ssrem.py` (see training/README.md)"
    )


def default_ablation(model: str | os.PathLike = DEFAULT_MODEL) -> Path | None:
    """The RSREM folder trained beside ``model`` (``<folder>/ablation-rsrem``), ``None`` if there is none."""
    try:
        folder = resolve_folder(model)
    except FileNotFoundError:
        return None
    return folder / ABLATION if (folder / ABLATION / CONFIG_FILE).is_file() else None


def save_model(folder: str | os.PathLike, module, config: dict[str, Any]) -> None:
    """``M`` as ``model.safetensors`` and ``config`` as ``config.json``."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({"M": module.M.detach().cpu().contiguous()}, str(folder / WEIGHTS_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=1) + "\n")


def load_module(folder: str | os.PathLike):
    """The bilinear ``f`` module saved in ``folder`` (eval mode)."""
    from safetensors.torch import load_file

    weights = load_file(str(Path(folder) / WEIGHTS_FILE))
    module = bilinear_module(weights["M"].shape[0])
    module.load_state_dict({"M": weights["M"]})
    return module.eval()
