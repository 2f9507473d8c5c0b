"""Huang et al. (2020) coherence ratings, ``$DIALEVAL_DATA/grade/<set>/<model>/``.
"""

from __future__ import annotations

from dialeval.data import JudgmentItem, data_file

# GRADE (Huang et al. 2020) human-judgment sets: data set name -> folder under $DIALEVAL_DATA/grade/.
GRADE_SETS = {"convai2": "convai2", "dailydialog": "dailydialog", "empatheticdialogues": "empatheticdialogues",
              "empathetic": "empatheticdialogues"}


def load_grade(dataset: str) -> list[JudgmentItem]:
    """Huang et al. (2020) coherence ratings of one set (``convai2``, ``dailydialog``,
    ``empatheticdialogues`` / ``empathetic``; a ``grade-`` prefix is accepted): for every dialogue
    model folder under ``$DIALEVAL_DATA/grade/<set>/`` (sorted) the aligned 150-line files
    ``human_ctx.txt`` (turns split by ``|||``), ``human_hyp.txt``, ``human_ref.txt`` and
    ``human_score.txt`` (mean rating 1-5) as :class:`JudgmentItem` s with ``system`` = the model
    folder and ``id`` = ``"<set>/<model>/<line>"``."""
    name = dataset[len("grade-"):] if dataset.startswith("grade-") else dataset
    if name not in GRADE_SETS:
        raise ValueError(f"unknown GRADE data set {dataset!r}; choose from {sorted(GRADE_SETS)}")
    folder = GRADE_SETS[name]
    root = data_file("grade", "human_judgement.json").parent / folder
    if not root.is_dir():
        raise FileNotFoundError(f"GRADE data folder not found: {root}")
    items = []
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        columns = {
            part: data_file("grade", folder, model_dir.name, f"human_{part}.txt").read_text(encoding="utf-8").splitlines()
            for part in ("ctx", "hyp", "ref", "score")
        }
        sizes = {part: len(lines) for part, lines in columns.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"{model_dir}: files are not aligned (line counts {sizes})")
        for i, (ctx, hyp, ref, score) in enumerate(zip(*(columns[p] for p in ("ctx", "hyp", "ref", "score")))):
            items.append(JudgmentItem(
                context=[" ".join(t.split()) for t in ctx.split("|||")], response=hyp.strip(),
                score=float(score), references=[ref.strip()], system=model_dir.name,
                id=f"{folder}/{model_dir.name}/{i}",
            ))
    return items
