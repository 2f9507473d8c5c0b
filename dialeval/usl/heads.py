"""U's and S's classifiers over the frozen features (:mod:`dialeval.usl.features`), and the bundled folder.

Each head is ``Linear(d, hidden) -> ReLU -> Dropout(0.2) -> Linear(hidden, 2)`` (``hidden=0``: the
paper's single linear layer after its dropout); the score is the softmax probability of class 1
(valid / the true next utterance), as the authors' ``predict``. The folder holds ``heads.safetensors``
(``u.*`` and ``s.*``, stored in float16 to halve the folder, read back into float32; the training report
gives the stored heads' validation accuracy) and ``config.json`` (encoder, feature size, S's input (``s_input``, :data:`dialeval.usl.features.S_INPUTS`;
a folder without it reads the pair, as the first bundled one), each head's hidden size, L's LM and quartiles).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "heads.safetensors"
DROPOUT = 0.2  # the authors' default
PARTS = ("u", "s")
DEFAULT_MODEL = "dialeval/usl-dailydialog"
BUILD = "python training/usl.py --threads 2 --minutes 55"  # the bundled default folder (run again until saved)


def head(dim: int, hidden: int):
    """A fresh classifier head (see the module docstring)."""
    import torch

    if hidden <= 0:
        return torch.nn.Sequential(torch.nn.Dropout(DROPOUT), torch.nn.Linear(dim, 2))
    return torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.ReLU(), torch.nn.Dropout(DROPOUT),
                               torch.nn.Linear(hidden, 2))


def valid_probability(module, features) -> list[float]:
    """``softmax(head(features))[:, 1]`` in eval mode (a numpy array of features in, floats out)."""
    import torch

    module.eval()
    with torch.no_grad():
        logits = module(torch.as_tensor(features, dtype=torch.float32))
        return torch.softmax(logits, -1)[:, 1].tolist()


def resolve_folder(model: str | os.PathLike) -> Path:
    """A USL folder: a directory holding ``config.json``, or ``dialeval/<name>`` bundled under ``hub/``;
    ``FileNotFoundError`` naming the command that builds the default."""
    from dialeval.models.hub import bundled_dir

    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ValueError(f"model must be a folder or 'dialeval/<name>', got {model!r}")
    path = Path(model).expanduser()
    if (path / CONFIG_FILE).is_file():
        return path
    bundled = bundled_dir(str(model))
    if bundled is not None and (bundled / CONFIG_FILE).is_file():
        return bundled
    raise FileNotFoundError(f"USL model {str(model)!r}: no {CONFIG_FILE} there and no bundled hub/ folder of that "
                            f"name; build the default with `{BUILD}` (see training/README.md)")


def stored(module):
    """``module`` with its weights rounded to float16 and back, as :func:`save_folder` stores them."""
    import torch

    with torch.no_grad():
        for p in module.parameters():
            p.copy_(p.to(torch.float16).to(p.dtype))
    return module


def save_folder(folder: str | os.PathLike, heads: dict[str, Any], config: dict[str, Any]) -> None:
    """The heads (``{"u": module, "s": module}``, in float16) and ``config`` into ``folder``."""
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    weights = {f"{part}.{k}": v.detach().cpu().to(torch.float16).contiguous()
               for part in PARTS for k, v in heads[part].state_dict().items()}
    save_file(weights, str(folder / WEIGHTS_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=1) + "\n")


def s_input(config: dict[str, Any]) -> str:
    """S's input of a folder's config (``"pair"`` when it names none)."""
    return config.get("s_input", "pair")


def load_folder(folder: str | os.PathLike) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(heads, config)`` saved in ``folder`` (heads in eval mode)."""
    from safetensors.torch import load_file

    folder = Path(folder)
    config = json.loads((folder / CONFIG_FILE).read_text())
    weights = load_file(str(folder / WEIGHTS_FILE))
    heads = {}
    from dialeval.usl.features import s_dim

    dims = {"u": int(config["dim"]), "s": s_dim(int(config["dim"]), s_input(config))}
    for part in PARTS:
        module = head(dims[part], int(config[f"hidden_{part}"]))
        module.load_state_dict({k[len(part) + 1:]: v.float() for k, v in weights.items() if k.startswith(part + ".")})
        heads[part] = module.eval()
    return heads, config
