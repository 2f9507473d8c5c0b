"""Validation and upload of the ``hub/<name>`` folders: what ``dialeval publish --dry-run`` checks
(:func:`validate`: the card's metadata parses and has the required fields, sizes are within
:data:`FOLDER_LIMIT_MB` and :data:`TOTAL_LIMIT_MB`, the weights load with ``from_pretrained`` (peft
over the checked base) and reproduce the stored reference scores), then
``huggingface_hub.upload_folder`` (:func:`publish`); offline it fails at once.
"""

from __future__ import annotations

import os
from pathlib import Path

from dialeval.models import hub
from dialeval.publish.reference import check_evaluate_reference, check_reference, evaluate_samples

FOLDER_LIMIT_MB = 25.0
TOTAL_LIMIT_MB = 100.0  # 80 until GRADE's cross-encoder joined the frozen model the combined metric still reads
REQUIRED_METADATA = ("base_model", "datasets", "library_name", "license", "tags", "model-index")


def folder_mb(folder: str | os.PathLike) -> float:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 2**20


def check_sizes(folder: str | os.PathLike) -> str:
    """``ValueError`` when ``folder`` exceeds :data:`FOLDER_LIMIT_MB` or ``hub/`` :data:`TOTAL_LIMIT_MB`."""
    size = folder_mb(folder)
    if size > FOLDER_LIMIT_MB:
        raise ValueError(f"{folder}: {size:.1f} MB, over the {FOLDER_LIMIT_MB:.0f} MB limit of a bundled folder")
    root = Path(folder).resolve().parent
    total = folder_mb(root) if root == hub.hub_root().resolve() else size
    if total > TOTAL_LIMIT_MB:
        raise ValueError(f"{root}: {total:.1f} MB in all, over the {TOTAL_LIMIT_MB:.0f} MB limit of hub/")
    return f"size {size:.1f} MB (limit {FOLDER_LIMIT_MB:.0f}); hub/ {total:.1f} MB (limit {TOTAL_LIMIT_MB:.0f})"


def check_card(folder: str | os.PathLike) -> dict:
    """The card's metadata as a dict; ``ValueError`` naming each required field that is missing
    (``base_model`` only for peft adapters, which the Hub links to their base: SSREM's bilinear map
    over GloVe, trained from scratch, has none)."""
    card = hub.read_card(folder)
    metadata = card.data.to_dict()
    required = [k for k in REQUIRED_METADATA if k != "base_model" or hub.is_adapter(folder)]
    missing = [k for k in required if not metadata.get(k)]
    if missing:
        raise ValueError(f"{folder}/{hub.CARD_FILE}: metadata lacks {', '.join(missing)}; "
                         f"rewrite it with `dialeval publish {folder} --card`")
    if not card.data.eval_results:
        raise ValueError(f"{folder}/{hub.CARD_FILE}: model-index has no results")
    return metadata


def validate(folder: str | os.PathLike) -> list[str]:
    """Everything ``--dry-run`` checks; returns one line per passed check, raises on the first failure."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (expected hub/<name>)")
    done = []
    metadata = check_card(folder)
    done.append(f"card metadata parses: base_model {metadata.get('base_model', '(none)')}, library {metadata['library_name']}, "
                f"{len(hub.read_card(folder).data.eval_results)} model-index results")
    done.append(check_sizes(folder))
    if hub.is_adapter(folder):
        from peft import PeftConfig

        config = PeftConfig.from_pretrained(str(folder))
        done.append(f"adapter config loads with from_pretrained: {config.peft_type} r={getattr(config, 'r', '?')}, "
                    f"base {config.base_model_name_or_path}")
        done.append(check_reference(folder))  # loads the weights over the checked base
    elif folder.name in evaluate_samples():  # a dialeval model of its own kind (GRADE, SSREM)
        done.append(check_evaluate_reference(folder))
    else:
        from transformers import AutoConfig

        AutoConfig.from_pretrained(str(folder))
        done.append("config loads with from_pretrained (no dialeval sample check for this kind of folder)")
    done.append(f"weights id {hub.weights_id(f'{hub.NAMESPACE}/{folder.name}', folder)}")
    return done


def publish(folder: str | os.PathLike, repo_id: str, dry_run: bool = False) -> list[str]:
    """Validate ``folder``, then (unless ``dry_run``) upload it as the Hub model ``repo_id``."""
    from dialeval.models import is_offline

    if not dry_run and is_offline():
        raise ConnectionError(
            f"cannot publish {folder} to {repo_id}: the Hugging Face Hub is unreachable (or HF_HUB_OFFLINE=1). "
            "Run with network access (and `huggingface-cli login`), or use --dry-run to validate only."
        )
    lines = validate(folder)
    if dry_run:
        return lines + [f"dry run: would upload {folder} to https://huggingface.co/{repo_id}"]
    from huggingface_hub import create_repo, upload_folder

    create_repo(repo_id, repo_type="model", exist_ok=True)
    info = upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                         commit_message=f"dialeval publish {hub.weights_id(repo_id, folder)}")
    return lines + [f"uploaded: {info}"]
