"""Everything a GRADE run trains from, built once and cached under ``--work``: the corpus, the IDF
table and the knowledge graph written to the output folder, the config, the frozen encoder's
embeddings, the examples with their negatives and the keyword graphs of every split (:class:`Split`).

The cache's file names and formats are kept as they are (``<tag>-texts.json`` and chunks,
``<split>-<n>-s<seed>-examples.json``, ``<split>-<n>-s<seed>-graphs-<graph tag>.pkl``): a run
resumes from a cache an earlier version wrote.
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dialeval.data.corpora import dailydialog
from dialeval.data import data_file
from dialeval.grade.encoder import PairEncoder
from dialeval.grade.features import GraphFeaturizer
from dialeval.grade.graph import GRAPH_FILE, KnowledgeGraph
from dialeval.grade.keywords import IDFTable, KeywordExtractor
from dialeval.grade.model import GradeConfig
from dialeval.grade.negatives import LexicalSampler
from dialeval.grade.scorer import make_vectors
from dialeval.grade.training.examples import (
    ALL_KINDS, DEGENERATE_KINDS, KINDS, TextTable, build_examples, cached, cached_embeddings, degenerate_examples,
    dialogue_pairs,
)
from dialeval.grade.training.graphs import CompactGraphs, build_graphs
from dialeval.grade.training.split import Split
from dialeval.grade.training.variants import ABLATIONS, parse_spec


def check_arguments(args: argparse.Namespace) -> str | None:
    """What is wrong with a combination of ``training/grade.py``'s options, ``None`` if nothing."""
    if args.pair_encoding == "cross" and args.lora_r == 0:
        return ("--pair-encoding cross needs --lora-r > 0: frozen encodings are cached per text, which only "
                "the dual encoding allows (a cached cross encoding of every pair and negative does not fit the run)")
    if args.node_vectors == "sentence" and args.lora_r > 0:
        return "--node-vectors sentence embeds concepts with the frozen encoder; it cannot be combined with --lora-r"
    if args.negatives in ("degenerate", "salad") and args.lora_r > 0:
        return f"--negatives {args.negatives} needs the frozen encoder (--lora-r 0): its salads are embedded once and cached"
    if len(args.neighbours) > args.max_hops:
        return f"--neighbours gives K={len(args.neighbours)} hops; at most {args.max_hops}"
    return None


@dataclass
class Setup:
    """The run's model configuration and inputs (step 1 of :func:`prepare`)."""

    config: GradeConfig
    encoder: PairEncoder
    featurizer: GraphFeaturizer
    train_pairs: list[tuple[list[str], str]]
    val_pairs: list[tuple[list[str], str]]
    responses: list[str]  # every distinct training response, sorted
    graph_tag: str  # what the cached keyword graphs depend on (graph file, hops, neighbours, node vectors)
    facts: dict[str, Any]  # the report's first entries: encoder, node vectors, graph and IDF sizes


def prepare(args: argparse.Namespace, encoder_name: str, output: Path) -> Setup:
    """1. corpus, IDF table (``idf.json``), knowledge graph (``conceptnet.txt``), encoder and config
    (``config.json``), all written to ``output``."""
    train_dialogues = dailydialog("train")
    val_dialogues = dailydialog("validation")
    if args.tiny:
        train_dialogues, val_dialogues = train_dialogues[:40], val_dialogues[:10]
    idf = IDFTable.build(t for d in train_dialogues for t in d)
    idf.save(output)
    kg_source = Path(args.knowledge_graph) if args.knowledge_graph else data_file("corpora", "conceptnet100k", "train.txt")
    if kg_source.resolve() != (output / GRAPH_FILE).resolve():
        shutil.copyfile(kg_source, output / GRAPH_FILE)
    config = GradeConfig(encoder=encoder_name, node_vectors=args.node_vectors, neighbours=list(args.neighbours),
                         graph_file=GRAPH_FILE, pair_encoding=args.pair_encoding, encoder_lora=args.lora_r > 0,
                         similarity_skip=args.similarity_skip and args.pair_encoding == "dual",
                         hop_attention=args.hop_attention, max_hops=args.max_hops,
                         utterance_dropout=args.utterance_dropout)
    graph = KnowledgeGraph.from_file(output / GRAPH_FILE, config.max_hops)
    encoder = PairEncoder(encoder_name, config.max_length, args.device, batch_size=32)
    vectors = make_vectors(config, encoder)
    config.encoder_dim = encoder.dim * (4 if args.pair_encoding == "dual" else 1)
    config.adapter_dim, config.node_dim = encoder.dim, vectors.dim
    config.save(output)
    featurizer = GraphFeaturizer(KeywordExtractor(idf, graph.multiword()), graph, vectors, config.neighbours,
                                 config.context_keywords, config.response_keywords)
    train_pairs = dialogue_pairs(train_dialogues, args.context_turns)
    graph_tag = (f"{kg_source.name}-{kg_source.stat().st_size}-h{config.max_hops}-n{'-'.join(map(str, config.neighbours))}"
                 + ("" if config.node_vectors == "glove" else f"-{vectors.name.replace('/', '_')}"))  # the node table holds vectors
    facts = {"encoder": encoder_name, "node_vectors": vectors.name, "knowledge_graph": str(kg_source),
             "graph_concepts": len(graph), "graph_edges": graph.n_edges, "idf_docs": idf.n_docs, "heads": {}}
    return Setup(config, encoder, featurizer, train_pairs, dialogue_pairs(val_dialogues, args.context_turns),
                 sorted({r for _, r in train_pairs}), graph_tag, facts)


def build_splits(args: argparse.Namespace, setup: Setup, work: Path, state: dict[str, Any]) -> dict[str, Split]:
    """2. embeddings of every distinct training response, training context and validation text (cached,
    resumable), 3. examples with negatives (cached), 4. keyword graphs and node inputs (cached): the
    ``train`` and ``validation`` splits (none with ``--prepare-graphs``, which only fills the cache).
    Stage timings go to ``state["seconds"]``."""
    config, encoder, responses = setup.config, setup.encoder, setup.responses
    val_pairs = setup.val_pairs
    timings = state.setdefault("seconds", {})
    val_texts = sorted({" ".join(c) for c, _ in val_pairs} | {r for _, r in val_pairs})
    frozen_tables: dict[str, TextTable] = {}

    def embedded(tag: str) -> TextTable:
        """The frozen encoder's table of the training responses or the validation texts, embedded when
        first needed: a LoRA run whose examples are cached needs neither."""
        if tag not in frozen_tables:
            t = time.time()
            texts = responses if tag == "responses" else val_texts
            frozen_tables[tag] = TextTable(texts, cached_embeddings(work, tag, encoder, texts))
            timings.setdefault(f"embeddings_{tag}", round(time.time() - t, 1))
        return frozen_tables[tag]

    lexical: list[LexicalSampler] = []
    splits: dict[str, Split] = {}
    for name, pairs, n in (("train", setup.train_pairs, args.contexts), ("validation", val_pairs, args.validation)):
        t = time.time()

        def make_examples() -> dict[str, Any]:
            if not lexical:
                lexical.append(LexicalSampler(responses, args.bm25_depth))
            chosen_rng = random.Random(f"{args.data_seed}-{name}-pairs")
            chosen = pairs if n <= 0 or n >= len(pairs) else [pairs[i] for i in sorted(chosen_rng.sample(range(len(pairs)), n))]
            positive_table = embedded("responses" if name == "train" else "val-texts")
            return build_examples(chosen, 0, responses, embedded("responses").emb,
                                  positive_table.emb[positive_table.rows([r for _, r in chosen])], lexical[0],
                                  f"{args.data_seed}-{name}")

        examples = cached(work / f"{name}-{n}-s{args.data_seed}-examples.json", make_examples)
        timings.setdefault(f"{name}_examples", round(time.time() - t, 1))
        needed = {args.negatives} | ({ABLATIONS[v][0] for v in args.ablation_variants} if args.ablations else set())
        if args.sweep:
            needed |= {parse_spec(spec).get("negatives", args.negatives) for spec in args.sweep}
        kinds = ALL_KINDS if name == "validation" else ("positive", *[k for k in ALL_KINDS[1:] if any(k in KINDS[m] for m in needed)])
        extended = any(k in KINDS[m] for m in needed for k in DEGENERATE_KINDS)
        if extended:  # echoes and salads (dialeval's extension), their embeddings and graphs cached apart
            salads = args.salads if name == "train" else len(examples["contexts"])
            # validation keeps the suite's salad, so its held-out salad accuracy measures what the suite does
            form = args.salad_form if name == "train" else "words"
            examples = {**examples, **degenerate_examples(examples, salads, f"{args.data_seed}-{name}", form)}
            kinds = (*kinds, *DEGENERATE_KINDS)
            extension_tag = f"{name}-{n}-s{args.data_seed}-degenerate-{salads}" + ("" if form == "words" else f"-{form}")
        if config.encoder_lora or args.prepare_graphs:  # the encoder trains: pairs are encoded at every step
            ctx_emb = resp_emb = rows = None
        else:
            resp_table, val_table = embedded("responses"), embedded("val-texts")
            tables = [resp_table]
            if name == "train":
                ctx_texts = sorted({" ".join(c) for c in examples["contexts"]})
                tag = "contexts" if n <= 0 or n >= len(pairs) else f"contexts-{n}-s{args.data_seed}"
                ctx_source = TextTable(ctx_texts, cached_embeddings(work, tag, encoder, ctx_texts))
                timings.setdefault("context_embeddings", round(time.time() - t, 1))
            else:
                ctx_source = val_table
            ctx_emb = ctx_source.emb[ctx_source.rows([" ".join(c) for c in examples["contexts"]])]
            if name == "validation" or extended:  # validation: its true responses; echoes: the context turns
                tables.append(ctx_source)
            table = TextTable.stacked(*tables)  # the training responses' rows first, as before the extension
            if extended:  # the salads, and any echo that is no response or context already embedded
                new_texts = sorted({x for k in DEGENERATE_KINDS for x in examples[k] if x is not None and x not in table.index})
                table = TextTable.stacked(table, TextTable(new_texts, cached_embeddings(
                    work, f"texts-{extension_tag}", encoder, new_texts)))
            resp_emb = table.emb
            rows = {k: table.rows(examples[k]) for k in kinds if k not in DEGENERATE_KINDS}
            rows.update({k: table.rows_or_missing(examples[k]) for k in kinds if k in DEGENERATE_KINDS})
            if name == "validation":  # true responses from the validation table, as embedded there
                rows["positive"] = len(responses) + val_table.rows(examples["positive"])
        t = time.time()
        graphs, node_table, coverage = cached(work / f"{name}-{n}-s{args.data_seed}-graphs-{setup.graph_tag}.pkl",
                                              lambda: build_graphs(setup.featurizer, examples, ALL_KINDS))
        if extended:
            more, more_table, _ = cached(work / f"{extension_tag}-graphs-{setup.graph_tag}.pkl", lambda: build_graphs(
                setup.featurizer, {"contexts": examples["contexts"],
                                   **{k: [x or "" for x in examples[k]] for k in DEGENERATE_KINDS}}, DEGENERATE_KINDS))
            graphs = {**graphs, **{k: (np.where(ids >= 0, ids + len(node_table), ids), w, c) for k, (ids, w, c) in more.items()}}
            node_table = np.concatenate([node_table, more_table])
        graphs = {k: CompactGraphs(*v) for k, v in graphs.items()}
        timings.setdefault(f"{name}_graphs", round(time.time() - t, 1))
        if args.prepare_graphs:
            continue
        if name == "train" and args.train_limit:  # the cache stays whole; the run sees its first N contexts
            n_lim = args.train_limit
            examples = {k: v[:n_lim] for k, v in examples.items()}
            ctx_emb = ctx_emb[:n_lim] if ctx_emb is not None else None
            rows = {k: v[:n_lim] for k, v in rows.items()} if rows is not None else None
            graphs = {k: CompactGraphs(g.ids[:n_lim], g.weights[:n_lim], g.n_context) for k, g in graphs.items()}
        splits[name] = Split(examples, kinds, ctx_emb, resp_emb, rows, graphs, node_table, len(config.neighbours))
        if name == "train":
            state["keyword_coverage_train"] = coverage
        print(f"{name}: {len(examples['contexts'])} contexts ready ({timings})", flush=True)
    return splits
