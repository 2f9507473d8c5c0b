"""U's own top encoder layers: the frozen encoder's top layers with a LoRA adapter, for U alone.

The paper fine-tunes BERT for U. Here the encoder stays frozen for S (and for U's lower layers);
U may read its own copy of the top ``u_top`` layers, tuned with a LoRA adapter (Hu et al. 2021) on
their attention and feed-forward maps, over the hidden states the frozen lower layers give. One
forward of the frozen encoder serves both: S pools its last states, U pools the tuned top's states
of the same lower-layer output (:meth:`dialeval.usl.features.FrozenEncoder.single`), so a tuned U costs
``u_top`` layers more, not a second encoder. A folder that tunes U holds the adapter in
``u_encoder/`` (peft's layout, with the base record of :mod:`dialeval.models.hub`: the tuned layers'
tensor hash, checked when it loads) and names ``u_top`` in its ``config.json``.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import torch

ADAPTER_DIR = "u_encoder"
# the linear maps of a layer that learn: attention's query, key, value and output (MPNet's attn.q, k,
# v, o; BERT's and MiniLM's self.query, key, value and output.dense), then the feed-forward's two; the
# LayerNorms stay as they are
LORA_TARGETS = (r".*layer\.\d+\.(attention\.(attn\.(q|k|v|o)|self\.(query|key|value)|output\.dense)"
                r"|intermediate\.dense|output\.dense)")


class PassThrough(torch.nn.Module):
    """Stands for an encoder's embeddings when it is fed hidden states as ``inputs_embeds``."""

    def forward(self, input_ids: Any = None, position_ids: Any = None, inputs_embeds: Any = None, **_: Any) -> Any:
        return inputs_embeds


def top_model(model: Any, top: int) -> Any:
    """A copy of the encoder ``model`` that runs only its top ``top`` layers on the hidden states given
    as ``inputs_embeds`` (with the attention mask): ``top_model(m, k)(inputs_embeds=h, attention_mask=a)``
    equals ``m``'s last hidden state when ``h`` is ``m``'s hidden state ``-1 - k``."""
    if not 0 < top <= len(model.encoder.layer):
        raise ValueError(f"top must be between 1 and the encoder's {len(model.encoder.layer)} layers, got {top}")
    upper = copy.deepcopy(model)
    upper.embeddings = PassThrough()
    upper.encoder.layer = upper.encoder.layer[-top:]
    return upper


def lora_config(rank: int) -> Any:
    """The LoRA adapter U's top layers learn: rank ``rank``, alpha ``2 * rank``, dropout 0.1."""
    from peft import LoraConfig

    return LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.1, target_modules=LORA_TARGETS)


def base_record(encoder: Any, top: int) -> Any:
    """The :class:`dialeval.models.hub.BaseRecord` of an adapter on the top ``top`` layers of ``encoder``
    (a :class:`dialeval.usl.features.FrozenEncoder`): its Hub id, the PyPI parts it is built from and the
    tensor hash of those layers (:func:`top_model`), which :func:`load_tuned_top` checks."""
    from dialeval.core.nli import LOCAL_ENCODER, MPNET_ENCODER, PYPI_ENCODERS
    from dialeval.models import hub
    from dialeval.usl.features import MINILM, MPNET

    local = {MINILM: LOCAL_ENCODER, MPNET: MPNET_ENCODER}[encoder.name]
    hub_id, distributions = PYPI_ENCODERS[local]
    return hub.BaseRecord(hub_id, local, hub.package_versions(*distributions),
                          hub.base_hash(top_model(encoder.float32_model(), top), None))


def save_tuned_top(folder: str | os.PathLike, learner: Any, encoder: Any, top: int) -> Path:
    """``folder/u_encoder``: the peft adapter of ``learner`` (U's top layers with LoRA) in float32, over the
    encoder's Hub id, and its base record (:func:`base_record`)."""
    from dialeval.core.training import save_adapter
    from dialeval.models import hub

    adapter = Path(folder) / ADAPTER_DIR
    adapter.mkdir(parents=True, exist_ok=True)
    record = base_record(encoder, top)
    save_adapter(adapter, learner, record.base_model, dtype=torch.float32)
    hub.write_base(adapter, record)
    return adapter


def load_tuned_top(model: Any, folder: str | os.PathLike, top: int) -> Any:
    """The top ``top`` layers of the frozen encoder ``model`` with the adapter saved in
    ``folder/u_encoder`` merged in, in eval mode, after checking that those layers are the ones it was
    trained over (:func:`dialeval.models.hub.apply_adapter`; ``FileNotFoundError`` naming the folder)."""
    from dialeval.models.hub import apply_adapter

    adapter = Path(folder) / ADAPTER_DIR
    if not (adapter / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{folder}: config.json names u_top={top} but there is no {ADAPTER_DIR}/ adapter")
    return apply_adapter(top_model(model, top), adapter).eval()
