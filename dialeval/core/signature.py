"""A result's reproducibility signature, built and read back in one place (sacrebleu's
``Signature`` is the model: the settings that make a number reproducible, written as ``key:value``
fields joined by ``|``, the library version last).

``metric:<name>|<key>:<value>|...|version:<dialeval version>``: the metric first, then its fields in
the order the metric gives them, then the version. :meth:`Signature.format` writes it (a ``None``
value is left out, a boolean is written ``yes``/``no``, anything else as ``str``);
:meth:`Signature.parse` reads a written one back, so that ``Signature.parse(s.format()) == s`` and
``Signature.parse(text).format() == text``. A key holds neither ``:`` nor ``|`` and a value no ``|``
(a value may hold ``:``: a field is split at its first one); ``metric`` and ``version`` are no field
names. A result that several scoring passes made (holistic's aspects) carries their signatures
joined by `` ; `` (:func:`joined`; :meth:`Signature.parse_all` reads them back).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from dialeval.version import __version__

SEPARATOR = "|"
ASSIGN = ":"
HEAD = "metric"
TAIL = "version"
JOIN = " ; "


def _value_text(key: str, value: Any) -> str | None:
    """``value`` as a signature writes it (``None``: left out); ``ValueError`` for a ``|`` in it."""
    if value is None:
        return None
    text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
    for mark, separates in ((SEPARATOR, "fields"), (JOIN, "signatures")):
        if mark in text:
            raise ValueError(f"signature field {key!r}: its value {text!r} holds {mark!r}, which separates {separates}")
    return text


def joined(signatures: Iterable[Signature | str]) -> str:
    """The signatures of one result that several scoring passes made, joined by :data:`JOIN`."""
    return JOIN.join(str(signature) for signature in signatures)


def _checked_key(key: str) -> str:
    if not isinstance(key, str) or not key or ASSIGN in key or SEPARATOR in key:
        raise ValueError(f"signature field name {key!r}: must be a non-empty string without {ASSIGN!r} or {SEPARATOR!r}")
    if key in (HEAD, TAIL):
        raise ValueError(f"signature field name {key!r}: {HEAD!r} and {TAIL!r} are the signature's own")
    return key


class Signature:
    """``Signature(metric, fields).format()``: ``metric:<metric>|<key>:<value>|...|version:<version>``
    (``version`` defaults to dialeval's). ``fields`` keep their order; ``sig["model"]``,
    ``sig.get("nrefs")`` read one (``metric`` and ``version`` too). Two signatures are equal when they
    are written the same."""

    __slots__ = ("metric", "fields", "version")

    def __init__(self, metric: str, fields: Mapping[str, Any] | None = None, version: str | None = None) -> None:
        metric_text = _value_text(HEAD, metric)
        if not metric_text:
            raise ValueError(f"signature metric must be a non-empty name, got {metric!r}")
        self.metric = metric_text
        self.fields: dict[str, str] = {}
        for key, value in (fields or {}).items():
            text = _value_text(_checked_key(key), value)
            if text is not None:
                self.fields[key] = text
        self.version = _value_text(TAIL, __version__ if version is None else version)

    def format(self) -> str:
        """The written signature."""
        parts = [(HEAD, self.metric), *self.fields.items(), (TAIL, self.version)]
        return SEPARATOR.join(f"{key}{ASSIGN}{value}" for key, value in parts)

    __str__ = format

    @classmethod
    def parse(cls, text: str) -> "Signature":
        """The signature ``text`` writes; ``ValueError`` naming ``text`` and the field at fault when it
        does not start with ``metric:``, end with ``version:``, or has a field without ``:`` or twice."""
        if not isinstance(text, str) or not text:
            raise ValueError(f"not a signature: {text!r}")
        pairs = []
        for index, part in enumerate(text.split(SEPARATOR)):
            key, assign, value = part.partition(ASSIGN)
            if not assign or not key:
                raise ValueError(f"signature {text!r}: field {index} ({part!r}) is not key{ASSIGN}value")
            pairs.append((key, value))
        if pairs[0][0] != HEAD or len(pairs) < 2 or pairs[-1][0] != TAIL:
            raise ValueError(f"signature {text!r}: must start with {HEAD}{ASSIGN} and end with {TAIL}{ASSIGN}")
        middle = pairs[1:-1]
        if len({key for key, _ in middle}) != len(middle):
            raise ValueError(f"signature {text!r}: a field name appears twice")
        return cls(pairs[0][1], dict(middle), version=pairs[-1][1])

    @classmethod
    def parse_all(cls, text: str) -> list["Signature"]:
        """Every signature of ``text``: one, or several :func:`joined`."""
        parts = text.split(JOIN) if isinstance(text, str) else [text]  # parse names a non-string
        return [cls.parse(part) for part in parts]

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of field ``key`` (``metric`` and ``version`` included), else ``default``."""
        if key == HEAD:
            return self.metric
        if key == TAIL:
            return self.version
        return self.fields.get(key, default)

    def __getitem__(self, key: str) -> str:
        found = self.get(key)
        if found is None:
            raise KeyError(f"signature {self.format()!r} has no field {key!r}")
        return found

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and self.format() == other.format()

    def __hash__(self) -> int:
        return hash(self.format())

    def __repr__(self) -> str:
        return f"Signature.parse({self.format()!r})"
