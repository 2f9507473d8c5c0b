"""Query augmentation for the Holistic diversity aspect (Pang et al. 2020, ACL).

"Towards Holistic and Automatic Evaluation of Open-Domain Dialogue Generation" measures diversity
as the n-gram entropy of a model's answers to a query *and K augmented versions of it*
(:func:`dialeval.holistic.scorer.diversity`). The paper's diversity section augments queries in two ways:

* **WS, WordNet substitution**: words of one part of speech are replaced with WordNet synonyms, in
  four variants: verbs, nouns, adjectives & adverbs, all of them (:data:`WS_POS`).
* **CTG, conditional text generation**: a conditional generator gives the top-K beams of the query's
  last utterance given the utterances before it.

What the authors' released data shows (``diversity_WS.csv``, ``diversity_CTG.csv``) and is done here:
only the *last* turn of a query changes. WS replaces every word of the chosen class with the first
lemma name of a randomly drawn WordNet synset of that word for that POS (so sometimes just its
base form, ``is`` -> ``be``, ``lost`` -> ``lose``, or the word itself), the same word getting the
same substitute throughout one paraphrase; multi-word lemmas keep WordNet's underscores
(``body_of_water``). A released WS group is the original query plus one paraphrase per variant,
all four from one draw (the ``all`` one is the union of the other three): :func:`ws_paper_group`.
:func:`ws_paraphrases` instead gives ``k`` distinct paraphrases of one variant; ``rate`` < 1
leaves each word type unchanged with probability ``1 - rate`` (the paper: 1).

POS tags: :func:`dialeval.core.pos.pos_tag` (Penn Treebank tags; the tagger differs from the
authors', so the substituted words can too).
Tags: verb ``VB*`` -> WordNet ``v``; noun ``NN``, ``NNS`` (proper nouns are left alone) -> ``n``;
adjective ``JJ*`` -> ``a`` (with satellites), adverb ``RB*`` -> ``r``. WordNet is
:func:`dialeval.core.resources.load_wordnet` (Debian's WordNet 3.0).

CTG: the history is written as FED reads conversations, :func:`dialeval.core.lm.conversation_text`, then
``" " + eos`` opens the next turn; beam search (``num_beams = num_return_sequences = k``, at least
one new token) and the new tokens only are decoded. Any causal LM, or a seq2seq model (the same text
as its input). The default model of :func:`augment_file` is FED's dialogue model
(:func:`dialeval.fed.runner.default_dialogue_model`), trained on that very format.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
from pathlib import Path
from typing import Any, Sequence

from dialeval.data import completed_lines
from dialeval.core.pos import Span, pos_tag, token_spans
from dialeval.core.text import check_texts

WS_POS = ("verb", "noun", "adj_adv", "all")
WS_GROUP = "paper"  # augment_file's pos for the released data's groups (original + the 4 variants)

_WORDNET_POS = {
    **dict.fromkeys(("VB", "VBD", "VBG", "VBN", "VBP", "VBZ"), "v"),
    **dict.fromkeys(("NN", "NNS"), "n"),
    **dict.fromkeys(("JJ", "JJR", "JJS"), "a"),
    **dict.fromkeys(("RB", "RBR", "RBS"), "r"),
}
_VARIANT_POS = {"verb": {"v"}, "noun": {"n"}, "adj_adv": {"a", "r"}, "all": {"v", "n", "a", "r"}}
_TRIES_PER_PARAPHRASE = 20

Substitutions = dict[tuple[str, str], str]  # (lower-cased word, WordNet POS) -> lemma name


@functools.lru_cache(maxsize=65536)
def synset_heads(word: str, wordnet_pos: str) -> tuple[str, ...]:
    """First lemma name of each WordNet synset of ``word`` for ``wordnet_pos`` (repeats kept)."""
    from dialeval.core.resources import load_wordnet

    return tuple(s.lemmas()[0].name() for s in load_wordnet().synsets(word, wordnet_pos))


def _candidates(text: str) -> list[tuple[Span, str, str]]:
    """``(span, lower-cased word, WordNet POS)`` of every word that some variant may replace."""
    out = []
    for span, (token, tag) in zip(token_spans(text), pos_tag(text)):
        wordnet_pos = _WORDNET_POS.get(tag)
        if wordnet_pos and token[0].isalpha() and synset_heads(token.lower(), wordnet_pos):
            out.append((span, token.lower(), wordnet_pos))
    return out


def _draw(candidates: list[tuple[Span, str, str]], rng: random.Random, rate: float) -> Substitutions:
    """One substitute per word type, drawn for every type whatever the variant (so that variants
    made from one draw agree); a type is left out with probability ``1 - rate``."""
    subs: Substitutions = {}
    for _, word, wordnet_pos in candidates:
        if (word, wordnet_pos) not in subs:
            keep = rng.random() < rate
            subs[(word, wordnet_pos)] = rng.choice(synset_heads(word, wordnet_pos)) if keep else ""
    return {key: lemma for key, lemma in subs.items() if lemma}


def _apply(text: str, candidates: list[tuple[Span, str, str]], subs: Substitutions, pos: str) -> str:
    pieces, last = [], 0
    for (start, end), word, wordnet_pos in candidates:
        lemma = subs.get((word, wordnet_pos))
        if lemma is None or wordnet_pos not in _VARIANT_POS[pos]:
            continue
        if text[start].isupper():
            lemma = lemma[0].upper() + lemma[1:]
        pieces += [text[last:start], lemma]
        last = end
    return "".join(pieces) + text[last:]


def _check_ws(text: str, rate: float) -> None:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"rate must be in (0, 1], got {rate}")


def ws_paraphrases(text: str, pos: str = "all", k: int = 5, seed: int = 0, rate: float = 1.0) -> list[str]:
    """Up to ``k`` distinct WordNet-substitution paraphrases of ``text``, none equal to it.

    Only words tagged ``pos`` (one of :data:`WS_POS`) change, each to the first lemma name of one
    of its WordNet synsets for that POS. Fewer than ``k`` (possibly none) come back when the text
    has too few substitutable words (after ``20 * k`` draws). Deterministic given ``seed``; draw
    ``i`` of one seed is the same for every variant, so the first ``all`` paraphrase is the union of
    the first ``verb``, ``noun`` and ``adj_adv`` ones whenever none was skipped as a repeat.
    """
    if pos not in WS_POS:
        raise ValueError(f"pos must be one of {WS_POS}, got {pos!r}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    _check_ws(text, rate)
    candidates = _candidates(text)
    if not candidates:
        return []
    rng = random.Random(seed)
    found: list[str] = []
    for _ in range(_TRIES_PER_PARAPHRASE * k):
        if len(found) == k:
            break
        paraphrase = _apply(text, candidates, _draw(candidates, rng, rate), pos)
        if paraphrase != text and paraphrase not in found:
            found.append(paraphrase)
    return found


def ws_paper_group(text: str, seed: int = 0, rate: float = 1.0) -> list[str]:
    """The released data's 5-query group: ``[text]`` + its ``verb``, ``noun``, ``adj_adv`` and
    ``all`` paraphrases from one draw (a variant with nothing to change repeats ``text``)."""
    _check_ws(text, rate)
    candidates = _candidates(text)
    subs = _draw(candidates, random.Random(seed), rate)
    return [text] + [_apply(text, candidates, subs, pos) for pos in WS_POS]


@functools.lru_cache(maxsize=2)
def _load_generator(name_or_path: str, device: str | None) -> tuple[Any, Any]:
    from dialeval.core.lm import load_causal_lm

    return load_causal_lm(name_or_path, device=device or "cpu")


def ctg_paraphrases(
    history: Sequence[str],
    model: Any,
    tokenizer: Any = None,
    k: int = 5,
    max_new_tokens: int = 30,
    device: str | None = None,
) -> list[str]:
    """The top-``k`` beams of the next utterance after ``history`` (the turns before the one to
    replace), as ``k`` stripped strings in beam order (repeats possible).

    ``model`` is a transformers causal LM or seq2seq model with its ``tokenizer``, or a name/path
    loaded (once) with :func:`dialeval.core.lm.load_causal_lm` on ``device`` (default CPU). A history
    longer than the model's window is cut from the left.
    """
    import torch

    from dialeval.core.lm import conversation_text, model_window

    turns = check_texts(history, "history")
    if k < 1 or max_new_tokens < 1:
        raise ValueError(f"k and max_new_tokens must be >= 1, got {k} and {max_new_tokens}")
    if isinstance(model, (str, os.PathLike)):
        model, tokenizer = _load_generator(str(model), device)
    elif tokenizer is None:
        raise ValueError("pass the tokenizer along with a model object")
    eos = tokenizer.eos_token
    encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
    ids = tokenizer(conversation_text(turns, eos) + " " + eos, add_special_tokens=False)["input_ids"]
    budget = model_window(model) - (0 if encoder_decoder else max_new_tokens)
    if budget < 1:
        raise ValueError(f"max_new_tokens={max_new_tokens} leaves no room for the history in the model's window")
    input_ids = torch.tensor([ids[-budget:]], device=next(model.parameters()).device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.no_grad():
        out = model.generate(
            input_ids, attention_mask=torch.ones_like(input_ids), num_beams=k, num_return_sequences=k,
            do_sample=False, max_new_tokens=max_new_tokens, min_new_tokens=1, pad_token_id=pad,
        )
    new_tokens = out if encoder_decoder else out[:, input_ids.shape[1] :]
    return [tokenizer.decode(row, skip_special_tokens=True).strip() for row in new_tokens]


def _turns(row: Any, where: str) -> tuple[list[str], bool]:
    """A row's query as turns, and whether it came as a ``context`` list (else a ``query`` string)."""
    if isinstance(row, dict) and "context" in row:
        return check_texts(row["context"], f"{where}: context"), True
    if isinstance(row, dict) and isinstance(row.get("query"), str) and row["query"].strip():
        return [row["query"]], False
    raise ValueError(f"{where}: needs a 'context' (list of turns) or a non-empty 'query' string")


def augment_file(
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    method: str = "ws",
    k: int = 5,
    pos: str = "all",
    model: str | None = None,
    seed: int = 0,
    rate: float = 1.0,
    max_new_tokens: int = 30,
    device: str | None = None,
    progress: bool = True,
) -> int:
    """Copy each JSON line of ``input_path`` to ``output_path`` with a ``paraphrases`` list added.

    A line has a ``context`` (list of turns) or a ``query`` (string). Only the last turn is
    augmented: a ``context`` line gets lists of turns (``context[:-1] + [new last turn]``), a
    ``query`` line strings. ``method="ws"``: :func:`ws_paraphrases` (``pos`` in :data:`WS_POS`,
    ``seed`` for every line), or with ``pos="paper"`` :func:`ws_paper_group` (5 queries, the
    original first; ``k`` unused). ``method="ctg"``: :func:`ctg_paraphrases` of the turns before the
    last with ``model`` (default :func:`dialeval.fed.runner.default_dialogue_model`); it needs a
    ``context`` of at least 2 turns. Every line is checked before any is written. Resumable: lines
    already in ``output_path`` are kept and skipped. Returns the number of lines written.
    """
    from tqdm.auto import tqdm

    from dialeval.data import read_jsonl

    if method not in ("ws", "ctg"):
        raise ValueError(f"method must be 'ws' or 'ctg', got {method!r}")
    if method == "ws" and pos not in WS_POS + (WS_GROUP,):
        raise ValueError(f"pos must be one of {WS_POS + (WS_GROUP,)}, got {pos!r}")
    rows = read_jsonl(input_path)
    queries = [_turns(row, f"{input_path}:{i + 1}") for i, row in enumerate(rows)]
    if method == "ctg":
        short = next((i for i, (turns, _) in enumerate(queries) if len(turns) < 2), None)
        if short is not None:
            raise ValueError(
                f"{input_path}:{short + 1}: CTG generates the last turn from the turns before it, "
                "so it needs a 'context' of at least 2 turns"
            )
        if model is None:
            from dialeval.fed.runner import default_dialogue_model

            model = default_dialogue_model()
    output = Path(output_path)
    done = completed_lines(output)
    if done > len(rows):
        raise ValueError(f"{output} has {done} lines but {input_path} only {len(rows)}: wrong pair of files?")
    with open(output, "a", encoding="utf-8") as out, tqdm(
        total=len(rows), initial=done, desc=f"augment {method}", disable=not progress
    ) as bar:
        for row, (turns, is_context) in zip(rows[done:], queries[done:]):
            if method == "ctg":
                lasts = ctg_paraphrases(turns[:-1], model, k=k, max_new_tokens=max_new_tokens, device=device)
            elif pos == WS_GROUP:
                lasts = ws_paper_group(turns[-1], seed=seed, rate=rate)
            else:
                lasts = ws_paraphrases(turns[-1], pos=pos, k=k, seed=seed, rate=rate)
            paraphrases = [turns[:-1] + [last] for last in lasts] if is_context else lasts
            out.write(json.dumps({**row, "paraphrases": paraphrases}) + "\n")
            out.flush()
            bar.update(1)
    return len(rows) - done


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dialeval augment``."""
    parser.add_argument("--method", required=True, choices=("ws", "ctg"),
                        help="ws: WordNet substitution; ctg: beams of a conditional generator")
    parser.add_argument("--input", required=True, help="JSONL with a 'context' list or a 'query' string per line")
    parser.add_argument("--output", required=True, help="JSONL written with a 'paraphrases' list (resumable)")
    parser.add_argument("--k", type=int, default=5, help="paraphrases per query")
    parser.add_argument("--pos", default="all", choices=WS_POS + (WS_GROUP,),
                        help="ws: the POS substituted; 'paper': original + one paraphrase per POS variant")
    parser.add_argument("--model", help="ctg: generator name or path (default: FED's dialogue model)")
    parser.add_argument("--seed", type=int, default=0, help="ws: random seed")
    parser.add_argument("--rate", type=float, default=1.0, help="ws: probability that a word type is replaced")
    parser.add_argument("--max-new-tokens", type=int, default=30, help="ctg: length limit of a generated turn")
    parser.add_argument("--device", help="ctg: torch device (default cpu)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace) -> int:
    """``dialeval augment``: :func:`augment_file` with the options of :func:`add_arguments`."""
    written = augment_file(
        args.input, args.output, method=args.method, k=args.k, pos=args.pos, model=args.model,
        seed=args.seed, rate=args.rate, max_new_tokens=args.max_new_tokens, device=args.device,
    )
    skipped = completed_lines(Path(args.output)) - written
    if args.json:
        print(json.dumps({"output": str(args.output), "augmented": written, "skipped": skipped}))
    else:
        print(f"wrote {written} new lines to {args.output} ({skipped} already there, skipped)")
    return 0
