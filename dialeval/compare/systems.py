"""Reading and joining the systems of ``dialeval compare`` (:func:`read_systems`): response files
or ``dialeval score`` outputs, joined on ``id`` or line order (:mod:`dialeval.compare` describes the rules)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from dialeval.data import JudgmentItem, read_numbered_jsonl
from dialeval.scoring.resume import meta_path

JOINS = ("auto", "id", "line")
HUMAN = "human responses"


@dataclass
class Systems:
    """Two or more systems joined item by item.

    ``items[s][i]`` is system ``s``'s item ``i`` (``context``, ``response``, ``references``, ``id``;
    ``None`` for scored inputs); ``scored[s]`` is ``{"metric", "options", "signature", "per_item",
    "flags"}`` for a ``dialeval score`` output (``None`` for responses). ``where[s][i]`` names the file line."""

    names: list[str]
    paths: list[str]
    joined_on: str
    items: dict[str, Optional[list[dict]]]
    scored: dict[str, Optional[dict[str, Any]]]
    where: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        first = self.names[0]
        if self.items[first] is not None:
            return len(self.items[first])
        return len(next(iter(self.scored[first]["per_item"].values())))

    @property
    def kind(self) -> str:
        return "scored" if self.scored[self.names[0]] is not None else "responses"

    def human_items(self) -> Optional[list[dict]]:
        """The pseudo-system of human responses (module docstring), or ``None`` without references
        on every item (or for scored inputs)."""
        if self.kind != "responses":
            return None
        refs = [_joined_references(self, i) for i in range(self.n_items)]
        if not all(refs):
            return None
        first = self.items[self.names[0]]
        return [{"context": first[i]["context"], "response": r[0], "references": list(r[1:]),
                 "id": first[i].get("id"), "group": first[i].get("group")} for i, r in enumerate(refs)]


def _joined_references(systems: Systems, i: int) -> list[str]:
    for name in systems.names:
        refs = systems.items[name][i].get("references") or []
        if refs:
            return refs
    return []


def _read_file(path: str) -> tuple[str, list[tuple[int, dict]], Optional[dict]]:
    """``(kind, [(line, record)], meta)``: a ``dialeval score`` output or a responses file."""
    rows = read_numbered_jsonl(path)
    if not rows:
        raise ValueError(f"{path}: no records (expected one JSON object per line)")
    for line, row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{line}: expected a JSON object, got {type(row).__name__}")
    scored = ["scores" in row and "response" not in row for _, row in rows]
    if all(scored):
        meta = meta_path(Path(path))
        if not meta.is_file():
            raise ValueError(f"{path}: looks like a dialeval score output but has no {meta.name} saying which "
                             "metric scored it")
        stored = json.loads(meta.read_text(encoding="utf-8"))
        if "shard" in stored:
            raise ValueError(f"{path}: one shard of a sharded run; join the shards first (dialeval merge)")
        if stored.get("items") is not None and len(rows) != stored["items"]:
            raise ValueError(f"{path}: {len(rows)} of {stored['items']} items scored; finish the run first "
                             "(dialeval score resumes where it stopped)")
        return "scored", rows, stored
    if any(scored):
        line = rows[scored.index(not scored[0])][0]
        raise ValueError(f"{path}:{line}: mixes scored records ('scores') and responses ('response')")
    out = []
    for line, row in rows:
        item = vars(JudgmentItem.from_dict({"score": 0.0, **row}, f"{path}:{line}"))
        item.pop("score")
        out.append((line, item))
    return "responses", out, None


def _join_order(paths: Sequence[str], rows: Sequence[list[tuple[int, dict]]], join: str) -> tuple[str, list[list[int]]]:
    """``(joined_on, per file: the index of its record for joined item i)``."""
    if join not in JOINS:
        raise ValueError(f"join must be one of {JOINS}, got {join!r}")
    has_ids = all(r.get("id") is not None for file_rows in rows for _, r in file_rows)
    if join == "id" or (join == "auto" and has_ids):
        positions = []
        for path, file_rows in zip(paths, rows):
            where: dict[str, int] = {}
            for k, (line, r) in enumerate(file_rows):
                if r.get("id") is None:
                    raise ValueError(f"{path}:{line}: no 'id' to join on (use join='line' to pair by line order)")
                key = str(r["id"])
                if key in where:
                    raise ValueError(f"{path}:{line}: id {key!r} also on line {file_rows[where[key]][0]}; ids must be "
                                     "unique to join on them (use join='line' to pair by line order)")
                where[key] = k
            positions.append(where)
        order = [str(r["id"]) for _, r in rows[0]]
        for path, where in zip(paths[1:], positions[1:]):
            missing = [i for i in order if i not in where]
            extra = [i for i in where if i not in positions[0]]
            if missing or extra:
                raise ValueError(f"{path} and {paths[0]} do not hold the same ids: only in {paths[0]}: "
                                 f"{_few(missing)}; only in {path}: {_few(extra)}")
        return "id", [[where[i] for i in order] for where in positions]
    counts = {path: len(file_rows) for path, file_rows in zip(paths, rows)}
    if len(set(counts.values())) > 1:
        raise ValueError(f"joining on line order needs as many records in every file, got {counts}")
    return "line", [list(range(len(rows[0])))] * len(paths)


def _few(values: Sequence[Any], limit: int = 5) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return (shown + f", ... ({len(values)} in all)" if len(values) > limit else shown) or "none"


def default_names(paths: Sequence[str]) -> list[str]:
    """File stems (``A.jsonl`` -> ``A``); the whole path where two stems coincide."""
    stems = [Path(p).name.split(".")[0] or Path(p).name for p in paths]
    return stems if len(set(stems)) == len(stems) else [str(p) for p in paths]


def read_systems(paths: Sequence[str | Path], names: Optional[Sequence[str]] = None, join: str = "auto") -> Systems:
    """Read and join two or more system files (module docstring); ``ValueError`` naming the file and
    line of any mismatch."""
    paths = [str(p) for p in paths]
    if len(paths) < 2:
        raise ValueError(f"compare needs at least 2 system files, got {len(paths)}")
    names = list(names) if names else default_names(paths)
    if len(names) != len(paths):
        raise ValueError(f"{len(names)} names for {len(paths)} files")
    if len(set(names)) != len(names):
        raise ValueError(f"system names must be distinct, got {names}")
    if HUMAN in names:
        raise ValueError(f"{HUMAN!r} is the name of the human-response line; name the system otherwise")
    read = [_read_file(p) for p in paths]
    kinds = {kind for kind, _, _ in read}
    if len(kinds) > 1:
        raise ValueError("give only response files or only dialeval score outputs, not both: "
                         + ", ".join(f"{p} ({k})" for p, (k, _, _) in zip(paths, read)))
    joined_on, order = _join_order(paths, [rows for _, rows, _ in read], join)
    where = {name: [f"{path}:{rows[k][0]}" for k in idx]
             for name, path, (_, rows, _), idx in zip(names, paths, read, order)}
    if kinds == {"scored"}:
        scored = {}
        for name, path, (_, rows, meta), idx in zip(names, paths, read, order):
            subs = list(rows[0][1]["scores"])
            per_item = {sub: [_number(rows[k][1]["scores"].get(sub), f"{path}:{rows[k][0]}") for k in idx]
                        for sub in subs}
            signatures = {rows[k][1].get("signature") for k in idx}
            scored[name] = {"metric": meta.get("metric"), "options": meta.get("options", {}),
                            "signature": meta.get("signature") or next(iter(signatures)), "per_item": per_item,
                            "flags": [rows[k][1].get("flags") or [] for k in idx]}
        first = scored[names[0]]
        for name, path in zip(names[1:], paths[1:]):
            for key in ("metric", "signature"):
                if scored[name][key] != first[key]:
                    raise ValueError(f"{path} was scored with {key} {scored[name][key]!r}, {paths[0]} with "
                                     f"{first[key]!r}: scores are only comparable under one metric and setting")
        return Systems(names, paths, joined_on, {n: None for n in names}, scored, where)
    items = {name: [rows[k][1] for k in idx] for name, (_, rows, _), idx in zip(names, read, order)}
    for i in range(len(order[0])):
        base = items[names[0]][i]
        for name in names[1:]:
            other = items[name][i]
            if other["context"] != base["context"]:
                raise ValueError(f"{where[name][i]} and {where[names[0]][i]} are joined (on {joined_on}) but have "
                                 "different contexts; the systems must answer the same contexts")
        given = [(name, items[name][i]["references"]) for name in names if items[name][i]["references"]]
        for name, refs in given[1:]:
            if refs != given[0][1]:
                raise ValueError(f"{where[name][i]} and {where[given[0][0]][i]} give different references for "
                                 "the same context")
        if given:  # references given in one file serve every system
            for name in names:
                items[name][i] = {**items[name][i], "references": list(given[0][1])}
    return Systems(names, paths, joined_on, items, {n: None for n in names}, where)


def _number(value: Any, where: str) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: score {value!r} is not a number")
    return float(value)
