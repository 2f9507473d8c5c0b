"""The score cache keys an entry by the item fields its metric reads (issue 55, item 6): the same
replies scored with and without references share the entries of a metric that reads no references
(FED, FULL, GRADE, holistic, SSREM's reference_free), and miss them for one that does; options,
weights and precision still key apart. Every metric declares the fields it reads
(``MetricSpec.reads_fields``), and its runner scores the same when the fields it does not declare change."""

import hashlib
import json
import math

import pytest

from dialeval import registry
from dialeval.core.results import make_signature
from dialeval.core.spec import ITEM_FIELDS
from dialeval.scoring import cache as score_cache
from dialeval.scoring import runners

CONTEXTS = [["Do you like reading books?", "Not much. Do you?"], ["What time does the train leave?"],
            ["I failed my driving test again.", "Oh no, what happened?"], ["Can I help you?", "Yes, please."]]
RESPONSES = ["Yes, mostly novels. I read one every week.", "It leaves at half past seven, so we should hurry.",
             "I forgot to look in the mirror before turning.", "I am looking for a blue jacket in my size."]
REFERENCES = [["I love novels, I read every evening."], ["At seven thirty, I think."],
              ["I drove too fast on the motorway."], ["I need a jacket for the winter.", "Just looking, thanks."]]
GROUPS = ["a", "a", "b", "b"]
ITEMS = [{"context": c, "response": r, "references": refs, "group": g}
         for c, r, refs, g in zip(CONTEXTS, RESPONSES, REFERENCES, GROUPS)]


def without_references(items):
    return [{k: v for k, v in it.items() if k != "references"} for it in items]


def counting(metric, monkeypatch, calls):
    """Register a stub runner for ``metric`` that records the items it scores (their responses): the
    count tells a cache hit from a miss."""

    def runner(items, **options):
        calls.extend(it["response"] for it in items)
        return {"x": [float(len(it["response"])) for it in items]}, make_signature(metric)

    monkeypatch.setitem(runners.RUNNERS, metric, runner)


@pytest.fixture()
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    return lambda metric, options, items: score_cache.scores_for(metric, options, items, progress=False)


@pytest.mark.parametrize("metric", ["fed", "full", "grade", "holistic"])
def test_the_same_replies_without_references_hit_a_metric_that_reads_none(metric, cache, monkeypatch):
    calls = []
    counting(metric, monkeypatch, calls)
    first = cache(metric, {}, ITEMS)
    assert len(calls) == 4 and not first["from_cache"]
    for items in (without_references(ITEMS), [{**it, "references": []} for it in ITEMS],
                  [{**it, "references": None} for it in ITEMS], [{**it, "references": [["other"]]} for it in ITEMS]):
        again = cache(metric, {}, items)
        assert again["from_cache"] and again["per_item"] == first["per_item"]
    assert len(calls) == 4
    cache(metric, {}, [{**it, "context": ["Hello?"]} for it in ITEMS])  # another context: scored
    cache(metric, {}, [{**it, "response": it["response"] + "!"} for it in ITEMS])  # another reply: scored
    assert len(calls) == 12


@pytest.mark.parametrize("metric, options", [("multiref", {}), ("ssrem", {}), ("ssrem", {"reference_free": False})])
def test_a_metric_that_reads_references_scores_again_without_them(metric, options, cache, monkeypatch):
    calls = []
    counting(metric, monkeypatch, calls)
    cache(metric, options, ITEMS)
    cache(metric, options, without_references(ITEMS))
    cache(metric, options, [{**it, "references": ["other"]} for it in ITEMS])
    assert len(calls) == 12


def test_ssrem_reference_free_shares_its_entry_and_not_the_full_scores(cache, monkeypatch):
    calls = []
    counting("ssrem", monkeypatch, calls)
    free = {"reference_free": True}
    cache("ssrem", free, ITEMS)
    assert cache("ssrem", free, without_references(ITEMS))["from_cache"] and len(calls) == 4
    assert not cache("ssrem", {}, ITEMS)["from_cache"] and len(calls) == 8


def test_multiref_shares_its_entry_across_contexts(cache, monkeypatch):
    calls = []
    counting("multiref", monkeypatch, calls)
    cache("multiref", {}, ITEMS)
    assert cache("multiref", {}, [{**it, "context": ["Hello?"]} for it in ITEMS])["from_cache"] and len(calls) == 4


def test_holistic_groups_key_diversity_only(cache, monkeypatch):
    """``group`` decides diversity's groups: other groups miss the entry of the default aspects (diversity
    among them) and hit that of coherence and fluency; fluency alone reads no context."""
    calls = []
    counting("holistic", monkeypatch, calls)
    regrouped = [{**it, "group": g} for it, g in zip(ITEMS, "abab")]
    likelihood = {"aspects": ["coherence", "fluency"]}
    for options in ({}, likelihood, {"aspects": "fluency"}):
        cache("holistic", options, ITEMS)
    assert len(calls) == 12
    assert not cache("holistic", {}, regrouped)["from_cache"]
    assert not cache("holistic", {}, [{**it, "group": None} for it in ITEMS])["from_cache"]
    assert cache("holistic", likelihood, regrouped)["from_cache"]
    assert cache("holistic", {"aspects": "fluency"}, [{**it, "context": ["Hello?"]} for it in ITEMS])["from_cache"]
    assert not cache("holistic", likelihood, [{**it, "context": ["Hello?"]} for it in ITEMS])["from_cache"]
    assert len(calls) == 24


def test_options_weights_and_precision_still_key_apart(cache, monkeypatch):
    calls = []
    counting("grade", monkeypatch, calls)
    for options in ({}, {"graph": False}, {"precision": "bfloat16"}, {"precision": "int8"}):
        assert not cache("grade", options, ITEMS)["from_cache"]
    monkeypatch.setattr(score_cache, "weights_fingerprint", lambda metric: "retrained")
    assert not cache("grade", {}, without_references(ITEMS))["from_cache"]
    assert len(calls) == 20


def test_keys_of_items_without_references_are_those_of_before():
    """An item without references (``[]``, as a human-judgment set's) keeps the key it had when every
    field keyed every metric, ``sha256([[context, response, references]])``, for a metric that reads
    its context and response (so the entries stored then are read); referenced items of such a metric
    now key that same entry, and a metric that reads references keys them as before."""
    def old(items):
        rows = [[it.get("context"), it.get("response"), it.get("references")] for it in items]
        return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()

    unreferenced = [{**it, "references": [], "group": None} for it in ITEMS]
    for metric in ("fed", "full", "grade", "holistic", "combined"):
        assert score_cache.items_hash(unreferenced, registry.fields_read(metric, {})) == old(unreferenced)
        assert score_cache.items_hash(ITEMS, registry.fields_read(metric, {"aspects": ["fluency", "coherence"]})) \
            == old(unreferenced)
    referenced = [{k: v for k, v in it.items() if k != "group"} for it in ITEMS]
    assert score_cache.items_hash(referenced, registry.fields_read("ssrem", {})) == old(referenced)
    assert score_cache.items_hash(referenced) == old(referenced)  # every field: the behaviour reference's hash
    contextless = [{**it, "context": None} for it in referenced]  # multiref reads no context
    assert score_cache.items_hash(referenced, registry.fields_read("multiref", {})) == old(contextless)


def test_the_combined_metric_without_references_reads_every_component_from_the_cache(cache, monkeypatch):
    """The USR-PersonaChat case: ``combined`` on items with references, then on the same items without
    them. Its default design (issue 57) reads no references: the second call is the first's entry."""
    scored = {}

    def component(metric):
        def runner(items, **options):
            if metric in ("multiref", "ssrem") and not options.get("reference_free"):
                if not all(it.get("references") for it in items):
                    raise ValueError(f"item 0: {metric} needs references")
            name = "ssrem-f" if options.get("reference_free") else metric
            scored[name] = scored.get(name, 0) + len(items)
            subs = {"fed": ["turn_overall"], "holistic": options.get("aspects", []), "grade": ["grade"],
                    "ssrem": ["ssrem_f"] if options.get("reference_free") else ["ssrem"], "full": ["full"],
                    "multiref": ["bleu2", "meteor", "rougeL", "embedding_average"]}[metric]
            return {s: [0.1 * (i % 5) for i in range(len(items))] for s in subs}, make_signature(metric, model="stub")
        return runner

    for metric in registry.spec("combined").reads:
        monkeypatch.setitem(runners.RUNNERS, metric, component(metric))
    items = [{"context": [f"How was day {i}?"], "response": f"Day {i} was fine, thanks.", "references": [f"Good, {i}."]}
             for i in range(40)]
    with_references = cache("combined", {}, items)
    assert scored == {"holistic": 40, "grade": 40, "ssrem-f": 40}
    scored.clear()
    alone = cache("combined", {}, without_references(items))
    assert scored == {} and alone["from_cache"] and alone["signature"] == with_references["signature"]


def test_every_metric_declares_the_fields_it_reads():
    for spec in registry.specs():
        assert spec.reads_fields is not None, f"{spec.name} declares no reads_fields"
        for options in [dict(j.options) for j in spec.grid_jobs] + [dict(o) for o in spec.example_jobs] + [{}]:
            fields = spec.fields_read(options)
            assert "response" in fields and set(fields) <= set(ITEM_FIELDS)


def test_the_combined_metric_reads_what_its_components_read():
    from dialeval.combined.designs import JOBS

    jobs = [j for j in registry.grid_jobs() if j.name in JOBS]
    assert {j.metric for j in jobs} == set(registry.spec("combined").reads)
    read = {f for j in jobs for f in registry.fields_read(j.metric, dict(j.options))}
    assert read == set(registry.fields_read("combined", {}))


def test_an_unknown_field_is_refused():
    import dataclasses

    spec = dataclasses.replace(registry.spec("grade"), reads_fields=("context", "reply"))
    with pytest.raises(ValueError, match=r"grade: reads_fields names \['reply'\]"):
        spec.fields_read({})


# --- the runners score the same when the fields they do not declare change ---------------------------

def unread_changed(items, read):
    """``items`` with every field not in ``read`` changed: the references dropped, the contexts
    rotated (each item gets another's), the groups dropped (diversity then groups by context)."""
    changed = [dict(it) for it in items]
    for i, it in enumerate(changed):
        if "references" not in read:
            it.pop("references", None)
        if "context" not in read:
            it["context"] = items[(i + 1) % len(items)]["context"]
        if "group" not in read:
            it.pop("group", None)
    return changed


def same(a, b):
    (per_a, sig_a), (per_b, sig_b) = a, b
    assert sig_a == sig_b and per_a.keys() == per_b.keys()
    for name in per_a:
        assert [None if math.isnan(v) else v for v in per_a[name]] == [None if math.isnan(v) else v for v in per_b[name]]
    assert getattr(a, "flags", None) == getattr(b, "flags", None)


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    from tiny_lm import tiny_gpt2

    path = tmp_path_factory.mktemp("tiny_gpt2_fields")
    tiny_gpt2(path)
    return str(path)


TINY = "<tiny>"
CHEAP = [("multiref", {"metrics": ["bleu2", "rougeL"]}), ("holistic", {"aspects": ["diversity"]}),
         ("holistic", {"aspects": ["fluency"], "model": TINY, "cutoff": "set"}),
         ("holistic", {"aspects": ["coherence", "fluency"], "model": TINY, "cutoff": "set", "pmi_weight": 0.4}),
         ("fed", {"model": TINY}), ("full", {"model": TINY})]
# every registered metric with its defaults, and every grid job's options (SSREM's reference_free, ...)
DEFAULT_MODELS = list({json.dumps(case, sort_keys=True): case for case in
                       [(m, {}) for m in registry.METRICS] + [(j.metric, dict(j.options)) for j in registry.grid_jobs()]}
                      .values())


def check_unread_fields(metric, options, tiny_path):
    options = {k: tiny_path if v == TINY else v for k, v in options.items()}
    read = registry.fields_read(metric, options)
    runner = runners.get_runner(metric)
    same(runner(ITEMS, **options), runner(unread_changed(ITEMS, read), **options))


@pytest.mark.parametrize("metric, options", CHEAP)
def test_a_runner_scores_the_same_when_unread_fields_change(metric, options, tiny_path):
    check_unread_fields(metric, options, tiny_path)


@pytest.mark.slow
@pytest.mark.parametrize("metric, options", DEFAULT_MODELS)
def test_a_runner_with_its_default_models_scores_the_same_when_unread_fields_change(metric, options, tiny_path,
                                                                                    monkeypatch, tmp_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))  # the combined metric's components: a fresh cache
    check_unread_fields(metric, options, tiny_path)
