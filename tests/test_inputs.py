"""Wrong input types (issue 23, item 3) and unknown options are refused by name before evaluate sees them."""

import datasets
import pytest

from dialeval import registry
from dialeval.modules.inputs import check_module_inputs
from dialeval.modules.metric_base import INPUT_NAMES
from module_examples import example_calls

TEXT = datasets.Value("string")
TEXTS = datasets.Sequence(datasets.Value("string"))
FED = datasets.Features({"conversations": TEXTS})
MULTIREF = [datasets.Features({"predictions": TEXT, "references": TEXTS}),
            datasets.Features({"predictions": TEXT, "references": TEXT})]


@pytest.mark.parametrize("features, given, message", [
    (FED, {"conversations": None}, "conversations is None: pass a list with one entry per item, each a list of strings"),
    (FED, {"conversations": "Hi"}, "conversations must be a list with one entry per item, not str"),
    (FED, {"conversations": [["Hi", 7]]}, r"conversations\[0\]\[1\] must be a string, not int"),
    (FED, {"conversations": [["Hi"], "Hello"]}, r"conversations\[1\] must be a list of strings, not str"),
    (MULTIREF, {"predictions": ["ok"]}, "compute\\(\\) needs references"),
    (MULTIREF, {"predictions": None, "references": ["a"]}, "predictions is None"),
    (MULTIREF, {"predictions": ["ok", {"q": 1}], "references": ["a", "b"]}, r"predictions\[1\] must be a string, not dict"),
    (MULTIREF, {"predictions": ["ok"], "references": [3]}, r"references\[0\] must be a list of strings or a string, not int"),
])
def test_bad_inputs_are_named(features, given, message):
    with pytest.raises(ValueError, match=message):
        check_module_inputs(features, given)


def test_good_inputs_pass():
    check_module_inputs(MULTIREF, {"predictions": ["ok", ""], "references": [["a", "b"], "c"]})
    check_module_inputs(FED, {"conversations": [["Hi", ""]], "level": "turn"})


@pytest.mark.parametrize("name, config, given, message", [
    ("multiref", None, {"predictions": None, "references": ["a"]}, "predictions is None"),
    ("fed", None, {"conversations": None}, "conversations is None"),
    ("fed", None, {"conversations": [["Hi", 7]]}, r"conversations\[0\]\[1\] must be a string, not int"),
    ("holistic", "coherence", {"queries": [{"q": 1}], "responses": ["ok"]}, r"queries\[0\] must be a string or a list of strings, not dict"),
    ("ssrem", None, {"contexts": [["hi"]], "responses": None, "references": ["x"]}, "responses is None"),
])
def test_modules_refuse_wrong_types_by_name_before_evaluate(name, config, given, message):
    """The check runs before any model loads, so this is cheap for every module."""
    import dialeval

    with pytest.raises(ValueError, match=message):
        dialeval.load(name, config).compute(**given)


def test_a_bare_string_among_reference_lists_is_one_reference():
    """``references=[["fine"], "good"]`` scored item 2 as 0: evaluate read "good" as its characters."""
    import dialeval
    from dialeval.modules.inputs import normalise_module_inputs

    given = {"predictions": ["fine", "good"], "references": [["fine"], "good"]}
    assert normalise_module_inputs(MULTIREF, given)["references"] == [["fine"], ["good"]]
    assert normalise_module_inputs(MULTIREF, {"references": ["a", "b"]}) == {"references": ["a", "b"]}  # one kind: kept
    for references in ([["fine"], "good"], ["fine", ["good"]]):
        out = dialeval.load("multiref").compute(predictions=["fine", "good"], references=references, metrics=["bleu1"])
        assert out["bleu1_scores"] == [1.0, 1.0]


def test_every_text_is_bounded_with_a_warning():
    """One 50 MB reply took 3 GB and 101 s in multiref: texts are cut to MAX_CHARS, with one warning."""
    from dialeval.core.text import MAX_CHARS, check_texts

    long = "word " * (MAX_CHARS // 2)
    with pytest.warns(UserWarning, match=rf"responses: 1 text\(s\) longer than 100,000 characters .*responses\[1\] had {len(long):,}"):
        texts = check_texts(["short", long], "responses")
    assert texts == ["short", long[:MAX_CHARS]]


@pytest.mark.parametrize("name", registry.METRICS)
def test_every_module_names_an_unknown_option_and_the_accepted_ones(name):
    """The accepted options are read from the module's ``_compute`` (holistic: its aspect's scoring
    method); an unknown one is refused before any model loads, with every accepted one named."""
    import dialeval

    config, example = example_calls(name)[0]
    module = dialeval.load(name, config)
    accepted = module.compute_options()
    assert not set(accepted) & set(module.input_names())  # a module may accept no option at all
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['no_such_option'\]; accepted: ") as refused:
        module.compute(**example, no_such_option=1)
    assert all(repr(option) in str(refused.value) for option in accepted)


def test_a_module_whose_compute_takes_any_keyword_is_refused():
    """evaluate's common test forbids ``**kwargs`` in ``_compute``: the options could not be read."""
    import dialeval.modules.metric_base

    with pytest.raises(TypeError, match=r"Loose._compute takes \*\*options"):
        class Loose(dialeval.modules.metric_base.CheckedMetric):
            def _compute(self, predictions, references, **options):
                return {}


def with_surrogate(entry, at=3):
    """``entry`` (a string, or a list of strings: its last turn) with a lone surrogate at character
    ``at``, and the index of the changed turn (``None`` for a string)."""
    if isinstance(entry, str):
        return entry[:at] + "\ud800" + entry[at:], None
    j = len(entry) - 1
    return [*entry[:j], entry[j][:at] + "\ud800" + entry[j][at:]], j


def surrogate_cases():
    """(module, configuration, keyword arguments, input) for every input of every module's example
    calls, and the inputs some modules take beside their features (combined's references, FULL's
    conversations)."""
    cases = []
    for name in registry.METRICS:
        for config, example in dict(reversed(example_calls(name))).items():  # each configuration's first call
            cases += [(name, config, example, given) for given in example if given in INPUT_NAMES]
    cases.append(("combined", None, {**example_calls("combined")[0][1], "references": [["Yes, I do."]]}, "references"))
    cases.append(("full", None, {"conversations": [["Do you like reading books?", "Yes, mostly novels."]],
                                 "model": "dialeval/smollm2-dialogue"}, "conversations"))
    return [pytest.param(*case, id="-".join(filter(None, (case[0], case[1], case[3])))) for case in cases]


@pytest.mark.parametrize("name, config, example, given", surrogate_cases())
def test_a_lone_surrogate_is_refused_by_input_index_and_position(name, config, example, given):
    """A lone surrogate ("\\ud800") crashed every module inside pyarrow with an unnamed
    UnicodeEncodeError; it is refused, before any model loads, naming the input, the item, the turn
    and the character position."""
    import dialeval

    texts = list(example[given])
    texts[-1], turn = with_surrogate(texts[-1])
    where = rf"{given}\[{len(texts) - 1}\]" + ("" if turn is None else rf"\[{turn}\]")
    with pytest.raises(ValueError, match=rf"^{where} holds a lone surrogate U\+D800 at character 3: not valid Unicode"):
        dialeval.load(name, config).compute(**{**example, given: texts})


def test_the_surrogate_check_reads_every_text_and_passes_valid_unicode():
    from dialeval.modules.inputs import check_unicode

    check_unicode("responses", ["ok", "\U0001F600 an emoji is one code point", "é"])
    with pytest.raises(ValueError, match=r"^contexts\[1\]\[2\] holds a lone surrogate U\+DFFF at character 0"):
        check_unicode("contexts", [["a", "b"], ["c", "d", "\udfffe"]])
    with pytest.raises(ValueError, match=r"^responses\[0\] holds a lone surrogate U\+D83D at character 1"):
        check_unicode("responses", ["a\ud83d\ude00"])  # a pair written as two escapes is two lone surrogates
