"""Signatures built and read back by one type, :class:`dialeval.core.signature.Signature`: today's
strings unchanged (the golden ones and hand-written ones), ``parse(format(x)) == x``, and clear errors."""

import json
import re
from pathlib import Path

import pytest

from dialeval import registry
from dialeval.combined.runner import model_of
from dialeval.core.results import make_signature
from dialeval.core.signature import JOIN, Signature, joined
from dialeval.version import __version__

GOLDEN = Path(__file__).resolve().parent / "golden" / "examples.json"


def golden_signatures() -> list[str]:
    """Every signature of ``dialeval examples --json`` as pinned (holistic joins its three with `` ; ``)."""
    found = re.findall(r'"(metric:[^"]*)"', GOLDEN.read_text(encoding="utf-8"))
    return sorted({part for text in found for part in text.split(JOIN)})


def test_the_golden_file_holds_every_metric_signature():
    metrics = {Signature.parse(text).metric for text in golden_signatures()}
    assert metrics == set(registry.METRICS)


@pytest.mark.parametrize("text", golden_signatures())
def test_a_golden_signature_reads_back_and_writes_the_same_string(text):
    parsed = Signature.parse(text)
    assert parsed.format() == text
    assert Signature.parse(parsed.format()) == parsed
    rebuilt = Signature(parsed.metric, parsed.fields, version=parsed.version)
    assert rebuilt == parsed and rebuilt.format() == text
    assert make_signature(parsed.metric, **parsed.fields) == text  # version 0.1.0 is this checkout's


def test_make_signature_writes_todays_strings():
    assert make_signature("fed", model="dialeval/gemma3-dialogue@b01815f98bce", mode="conditional", level="turn") == (
        "metric:fed|model:dialeval/gemma3-dialogue@b01815f98bce|mode:conditional|level:turn|version:0.1.0")
    # None left out, booleans yes/no, numbers as str, the given order kept
    assert make_signature("m", b=True, a=None, c=False, n=3, x=0.85) == "metric:m|b:yes|c:no|n:3|x:0.85|version:0.1.0"
    assert make_signature("m") == f"metric:m|version:{__version__}"


def test_joined_signatures_read_back_one_by_one():
    """A result of several scoring passes (holistic's aspects) carries their signatures joined."""
    found = re.findall(r'"(metric:holistic[^"]* ; [^"]*)"', GOLDEN.read_text(encoding="utf-8"))
    assert found
    for text in found:
        parsed = Signature.parse_all(text)
        assert len(parsed) == text.count(" ; ") + 1 > 1
        assert joined(parsed) == text and joined(s.format() for s in parsed) == text
    assert Signature.parse_all("metric:m|version:1") == [Signature.parse("metric:m|version:1")]
    with pytest.raises(ValueError, match="separates signatures"):
        Signature("m", {"text": "a ; b"})
    with pytest.raises(ValueError, match="not a signature"):
        Signature.parse_all(None)


def test_parse_reads_the_fields_in_order():
    sig = Signature.parse("metric:ssrem|model:dialeval/x@1|g:sms:glove-6b-50d|nrefs:3|empty:|version:9.9")
    assert (sig.metric, sig.version) == ("ssrem", "9.9")
    assert list(sig.fields.items()) == [("model", "dialeval/x@1"), ("g", "sms:glove-6b-50d"), ("nrefs", "3"), ("empty", "")]
    assert sig["g"] == "sms:glove-6b-50d" and sig["metric"] == "ssrem" and sig["version"] == "9.9"
    assert sig.get("lookback") is None and sig.get("lookback", "50") == "50"
    with pytest.raises(KeyError, match="lookback"):
        sig["lookback"]
    assert str(sig) == "metric:ssrem|model:dialeval/x@1|g:sms:glove-6b-50d|nrefs:3|empty:|version:9.9"


def test_equality_follows_the_written_string():
    assert Signature("m", {"a": 1, "b": True}) == Signature.parse(f"metric:m|a:1|b:yes|version:{__version__}")
    assert Signature("m", {"a": 1, "b": 2}) != Signature("m", {"b": 2, "a": 1})  # order is part of it
    assert Signature("m", {"a": 1}, version="0.0.1") != Signature("m", {"a": 1})
    assert len({Signature("m", {"a": 1}), Signature.parse(Signature("m", {"a": 1}).format())}) == 1


@pytest.mark.parametrize("text, match", [
    ("", "not a signature"),
    ("model:x|version:1", "must start with metric:"),
    ("metric:x|model:y", "must start with metric: and end with version:"),
    ("metric:x", "must start with metric: and end with version:"),
    ("metric:x|model|version:1", r"field 1 \('model'\) is not key:value"),
    ("metric:x|:y|version:1", "field 1"),
    ("metric:x|a:1|a:2|version:1", "appears twice"),
])
def test_parse_names_what_is_wrong(text, match):
    with pytest.raises(ValueError, match=match):
        Signature.parse(text)


@pytest.mark.parametrize("metric, fields, match", [
    ("", {}, "non-empty name"),
    ("m", {"a:b": 1}, "field name 'a:b'"),
    ("m", {"version": "2"}, "signature's own"),
    ("m", {"metric": "n"}, "signature's own"),
    ("m", {"model": "a|b"}, "holds '|'"),
    ("m|n", {}, "holds '|'"),
])
def test_a_signature_that_could_not_be_read_back_is_refused(metric, fields, match):
    with pytest.raises(ValueError, match=match):
        Signature(metric, fields)


def test_combined_reads_a_components_model_from_its_signature():
    assert model_of("metric:fed|model:dialeval/gemma3-dialogue@b01815f98bce|mode:conditional|version:0.1.0") == (
        "dialeval/gemma3-dialogue@b01815f98bce")
    assert model_of("metric:holistic|aspect:consistency|nli:dialeval/minilm-nli@666d0802b62a|version:0.1.0") == (
        "dialeval/minilm-nli@666d0802b62a")
    assert model_of("metric:x|nli:first|model:second|version:1") == "first"  # the first of either, as written
    assert model_of("metric:multiref|mode:quality|nrefs:3|version:0.1.0") == "none"
    # joined signatures (holistic's aspects): the first model of the first signature that names one
    assert model_of("metric:h|aspect:diversity|version:1 ; metric:h|model:lm@1|version:1 ; metric:h|nli:n@2|version:1") == "lm@1"
    # a field whose name merely ends in "model" is not the model
    assert model_of("metric:x|scaling:model|version:1") == "none"
    assert model_of("metric:x|mymodel:a|version:1") == "none"
