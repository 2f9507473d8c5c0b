"""The inputs of dialeval's ``evaluate`` modules: what each accepts, checked before ``evaluate`` sees them.

A module declares its inputs as ``datasets`` features (``module.features``, one ``Features`` or a
list of alternatives): each input is a list with one entry per item, and an entry is a string
(``Value("string")``) or a list of strings (``Sequence``/``List`` of ``Value("string")``).
:func:`check_module_inputs` refuses a missing input, ``None``, a non-list and any entry of the
wrong type with a ``ValueError`` naming the input and the index (``conversations[0][1] must be a
string, not int``) -- evaluate's own checks would say "call add or add_batch" or fail deep in
``datasets`` -- and a text holding a lone surrogate (``"\\ud800"``, which UTF-8 cannot encode:
pyarrow failed on it with an unnamed ``UnicodeEncodeError``) with one naming the input, the index,
the turn index for a list and the character position (:func:`check_unicode`).
:func:`normalise_module_inputs` makes an input that mixes bare strings and lists of strings
(``references=[["fine"], "good"]``) all lists: evaluate picks one feature alternative for the whole
batch and would read ``"good"`` as the characters ``g, o, o, d``. The modules call it first
(:class:`dialeval.modules.CheckedMetric`); the Gradio widget reads the same kinds to build its boxes.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

import datasets

STRING = "a string"
STRINGS = "a list of strings"
# A code point of the UTF-16 surrogate range: in a Python str always a lone surrogate (a character
# beyond U+FFFF is one code point), from an escape ("\ud800") or a decoding with "surrogateescape";
# UTF-8 cannot encode it.
SURROGATE = re.compile("[\ud800-\udfff]")


def feature_kind(feature: Any) -> str:
    """:data:`STRING` or :data:`STRINGS` for a feature of ``datasets``; ``TypeError`` for any other."""
    if isinstance(feature, datasets.Value) and feature.dtype == "string":
        return STRING
    if isinstance(feature, datasets.Sequence) and feature_kind(feature.feature) == STRING:
        return STRINGS
    raise TypeError(f"dialeval modules take string and list-of-string features, not {feature}")


def input_kinds(features: datasets.Features | list[datasets.Features]) -> dict[str, list[str]]:
    """Input name -> the kinds its entries may have, over every alternative of ``features``."""
    kinds: dict[str, list[str]] = {}
    for alternative in features if isinstance(features, list) else [features]:
        for name, feature in alternative.items():
            allowed = kinds.setdefault(name, [])
            if feature_kind(feature) not in allowed:
                allowed.append(feature_kind(feature))
    return kinds


def has_kind(value: Any, kind: str) -> bool:
    """Whether ``value`` is of ``kind`` (:data:`STRING` or :data:`STRINGS`)."""
    if kind == STRING:
        return isinstance(value, str)
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _entry_error(name: str, i: int, entry: Any, allowed: list[str]) -> str:
    """Why ``entry`` (item ``i`` of input ``name``) is of none of the ``allowed`` kinds."""
    if STRINGS in allowed and isinstance(entry, (list, tuple)):
        j, bad = next((j, v) for j, v in enumerate(entry) if not isinstance(v, str))
        return f"{name}[{i}][{j}] must be a string, not {type(bad).__name__}"
    return f"{name}[{i}] must be {' or '.join(allowed)}, not {type(entry).__name__}"


def _texts(name: str, value: Any) -> Iterator[tuple[str, str]]:
    """``(label, text)`` of every string of input ``name`` (entries of other types are left to the
    type checks): ``name[i]`` for a string entry, ``name[i][j]`` for turn ``j`` of a list entry."""
    for i, entry in enumerate(value):
        if isinstance(entry, str):
            yield f"{name}[{i}]", entry
        elif isinstance(entry, (list, tuple)):
            yield from ((f"{name}[{i}][{j}]", text) for j, text in enumerate(entry) if isinstance(text, str))


def check_unicode(name: str, value: Any) -> None:
    """``ValueError`` naming the text and the position of the first lone surrogate (:data:`SURROGATE`)
    in input ``name``, a list of strings or lists of strings: ``responses[2] holds a lone surrogate
    U+D800 at character 5``."""
    for label, text in _texts(name, value):
        found = SURROGATE.search(text)
        if found:
            raise ValueError(f"{label} holds a lone surrogate U+{ord(found.group()):04X} at character {found.start()}: "
                             "not valid Unicode text (UTF-8 cannot encode it); remove or replace it")


def check_module_inputs(features: datasets.Features | list[datasets.Features], given: Mapping[str, Any]) -> None:
    """``ValueError`` naming the input (and index) when ``given`` lacks an input of ``features``,
    holds ``None`` or a non-list for one, an entry of a kind the features do not allow, or a text
    with a lone surrogate (:func:`check_unicode`)."""
    kinds = input_kinds(features)
    missing = [name for name in kinds if name not in given]
    if missing:
        raise ValueError(f"compute() needs {', '.join(missing)}: a list with one entry per item")
    for name, allowed in kinds.items():
        value = given[name]
        if value is None:
            raise ValueError(f"{name} is None: pass a list with one entry per item, each {' or '.join(allowed)}")
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ValueError(f"{name} must be a list with one entry per item, not {type(value).__name__}")
        for i, entry in enumerate(value):
            if not any(has_kind(entry, kind) for kind in allowed):
                raise ValueError(_entry_error(name, i, entry, allowed))
        check_unicode(name, value)


def normalise_module_inputs(features: datasets.Features | list[datasets.Features],
                            given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` with every input whose entries mix strings and lists of strings (where the features
    allow both) made all lists: a bare string ``s`` becomes ``[s]``. Inputs of one kind are kept."""
    out = dict(given)
    for name, allowed in input_kinds(features).items():
        value = given.get(name)
        if STRINGS not in allowed or STRING not in allowed or not isinstance(value, (list, tuple)):
            continue
        if any(isinstance(v, str) for v in value) and any(isinstance(v, (list, tuple)) for v in value):
            out[name] = [[v] if isinstance(v, str) else v for v in value]
    return out
