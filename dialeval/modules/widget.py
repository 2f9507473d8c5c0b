"""A Gradio widget for an evaluate module: the page of each ``metrics/<name>/app.py`` Space.

Why this exists: evaluate's own ``evaluate.utils.launch_gradio_widget`` (0.4.x) builds its page
with ``gr.inputs`` / ``gr.outputs``, which Gradio 4 removed, so with the Gradio this project
installs (>= 5) every widget crashed at start. This one keeps what was good in evaluate's helper
(the title and description from the card's YAML header, the card text shown under the widget, the
inputs read from ``module.features``) and adds what it lacked (the card's example prefilled, the
errors of ``compute`` shown as messages, a stable API endpoint).

The page has one text box per input of ``compute`` (per feature name of the module's
``features``), each holding a JSON list with one entry per item, e.g. for multiref
``predictions = ["i am fine ."]`` and ``references = [["fine , thanks .", "good ."]]`` (each entry
a string or a list of strings, as the features allow: the label says which), and an optional
``options`` box, a JSON object of other keyword arguments (``{"tooling": "dialeval"}``). The boxes
start with the keyword arguments of the card's first ``compute`` call on a module loaded with the
same configuration. The result dict is shown as JSON; a bad input or an exception of ``compute``
is shown as a ``gr.Error`` with its message. The scoring endpoint is ``api_name="compute"``::

    gradio_client.Client(url).predict(predictions='["i am fine ."]', references='[["fine , thanks ."]]',
                                      options="", api_name="/compute")
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import gradio as gr
from huggingface_hub import RepoCard

from dialeval.models.shipped import shipped_dir
from dialeval.modules.inputs import has_kind, input_kinds

API_NAME = "compute"
CODE_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
FORMAT_NOTE = (
    "Each input is a JSON list with one entry per item (strings in double quotes); "
    "`options` is an optional JSON object of other `compute()` keyword arguments."
)

Kinds = Mapping[str, Sequence[str]]


def load_json(name: str, text: str) -> Any:
    """The JSON value of box ``name``; ``ValueError`` naming the box when it is empty or not JSON."""
    if not text or not text.strip():
        raise ValueError(f"{name} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{name} is not valid JSON ({error}); strings take double quotes") from None


def parse_input(name: str, text: str, allowed: Sequence[str]) -> list[Any]:
    """The list written in box ``name``: non-empty, each entry one of the ``allowed`` kinds."""
    value = load_json(name, text)
    expected = " or ".join(allowed)
    if not isinstance(value, list) or not value:
        raise ValueError(f"{name} must be a non-empty JSON list, one entry per item, each {expected}")
    for i, item in enumerate(value):
        if not any(has_kind(item, kind) for kind in allowed):
            raise ValueError(f"{name}: item {i} must be {expected}, not {json.dumps(item)}")
    return value


def parse_inputs(kinds: Kinds, texts: Sequence[str]) -> dict[str, list[Any]]:
    """``compute`` keyword arguments from the input boxes (``texts`` in the order of ``kinds``)."""
    inputs = {name: parse_input(name, text, allowed) for (name, allowed), text in zip(kinds.items(), texts)}
    sizes = {name: len(value) for name, value in inputs.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"every input needs the same number of items, not {sizes}")
    return inputs


def parse_options(text: str, names: Sequence[str]) -> dict[str, Any]:
    """The optional JSON object of other ``compute`` keyword arguments ({} when the box is empty)."""
    if not text or not text.strip():
        return {}
    options = load_json("options", text)
    if not isinstance(options, dict):
        raise ValueError('options must be a JSON object of compute() keyword arguments, e.g. {"name": "value"}')
    repeated = sorted(set(options) & set(names))
    if repeated:
        raise ValueError(f"options: give {', '.join(repeated)} in its own box")
    return options


def json_literal(node: ast.expr) -> Any:
    """The value of ``node`` when it is a literal JSON can hold; ``ValueError`` otherwise."""
    try:
        value = ast.literal_eval(node)
        json.dumps(value)
    except (ValueError, TypeError, SyntaxError) as error:
        raise ValueError(f"not a JSON literal: {ast.unparse(node)}") from error
    return value


def loaded_configs(tree: ast.Module) -> dict[str, str]:
    """Variable -> configuration for every ``name = <x>.load("<module>"[, "<config>"])`` of ``tree``."""
    configs = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "load"):
            args = [*node.value.args[1:2], *(k.value for k in node.value.keywords if k.arg == "config_name")]
            try:
                configs[node.targets[0].id] = json_literal(args[0]) if args else "default"
            except ValueError:
                continue
    return configs


def literal_keywords(call: ast.Call) -> dict[str, Any]:
    """The keyword arguments of ``call`` written as JSON literals."""
    keywords = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        try:
            keywords[keyword.arg] = json_literal(keyword.value)
        except ValueError:
            continue
    return keywords


def compute_calls(block: str, config_name: str) -> Iterator[ast.Call]:
    """The ``<var>.compute(...)`` calls of a Python code block, in order, where ``<var>`` was loaded
    with ``config_name``."""
    try:
        tree = ast.parse(block)
    except SyntaxError:
        return
    configs = loaded_configs(tree)
    for node in (n for statement in tree.body for n in ast.walk(statement)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compute"
                and isinstance(node.func.value, ast.Name) and configs.get(node.func.value.id) == config_name):
            yield node


def card_example(card_text: str, config_name: str, names: Sequence[str]) -> dict[str, Any]:
    """Keyword arguments of the card's first ``compute`` call (in a ```python block) on a module loaded
    with ``config_name`` that gives every input in ``names`` as a literal list; {} if there is none."""
    for block in CODE_BLOCK.findall(card_text):
        for call in compute_calls(block, config_name):
            keywords = literal_keywords(call)
            if all(isinstance(keywords.get(name), list) for name in names):
                return keywords
    return {}


def module_card(module: Any) -> Path:
    """The card (README.md) beside the module's script, else beside the file that script was copied
    from (evaluate's cache keeps only the script of a module loaded by path, and names its origin in
    ``<script>.json``), else the shipped ``metrics/<script's name>/README.md`` (an origin since
    deleted, such as a removed checkout, whose cached copy evaluate reuses by its content hash)."""
    script = Path(inspect.getfile(type(module)))
    origin = script.with_suffix(".json")
    scripts = [script]
    if origin.is_file():
        scripts.append(Path(json.loads(origin.read_text()).get("original file path", script)))
    scripts.append(shipped_dir("metrics") / script.stem / script.name)
    cards = [path.with_name("README.md") for path in scripts]
    return next((card for card in cards if card.is_file()), cards[0])


def read_card(path: Path) -> tuple[dict[str, Any], str]:
    """The YAML header and the text of the card at ``path``; ({}, "") when there is none."""
    if not path.is_file():
        return {}, ""
    card = RepoCard.load(path)
    return card.data.to_dict(), card.text


def error_message(error: Exception) -> str:
    return str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"


def scoring_function(module: Any, kinds: Kinds) -> Callable[..., dict[str, Any]]:
    """What the page's button calls: the texts of the input boxes and of ``options`` in, the result
    of ``module.compute`` out, every failure as a ``gr.Error`` with its message. Its parameters are
    named after the boxes, so the API takes ``predict(predictions=..., options=...)`` too."""

    def compute(*texts: str) -> dict[str, Any]:
        try:
            inputs = parse_inputs(kinds, texts[:-1])
            return module.compute(**inputs, **parse_options(texts[-1], list(kinds)))
        except Exception as error:  # the page's one boundary: every failure becomes a message
            raise gr.Error(error_message(error)) from error

    compute.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)
         for name in [*kinds, "options"]],
        return_annotation=dict,
    )
    return compute


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value else ""


def build_widget(module: Any, card: Path | None = None) -> gr.Blocks:
    """The page of the evaluate ``module`` (see the module docstring); ``card`` defaults to
    :func:`module_card`."""
    header, text = read_card(card or module_card(module))
    kinds = input_kinds(module.features)
    example = card_example(text, module.config_name, list(kinds))
    title = header.get("title", module.name)
    if module.config_name != "default":
        title = f"{title}: {module.config_name}"
    with gr.Blocks(title=title) as widget:
        gr.Markdown(f"# {title}\n\n{header.get('description', module.description)}\n\n{FORMAT_NOTE}")
        boxes = [
            gr.Textbox(value=json_text(example.get(name)), label=name, lines=2,
                       info=f"JSON list, one entry per item; each entry {' or '.join(allowed)}")
            for name, allowed in kinds.items()
        ]
        options = gr.Textbox(value=json_text({k: v for k, v in example.items() if k not in kinds}), label="options",
                             info='optional JSON object of other compute() keyword arguments (see the card below); '
                                  '{"percentiles": true} adds each score\'s percentile among human replies and '
                                  'their mean <score>_percentile (a flagged reply at 0; beside each mean, flagged and '
                                  '<score>_unflagged are always there)')
        button = gr.Button("Compute", variant="primary")
        result = gr.JSON(label=module.name)
        gr.Markdown(text)
        button.click(scoring_function(module, kinds), inputs=[*boxes, options], outputs=result, api_name=API_NAME)
    return widget


def launch_widget(module: Any, **launch_kwargs: Any) -> None:
    """Build the widget of ``module`` and launch it. Gradio's ``launch`` reads GRADIO_SERVER_NAME and
    GRADIO_SERVER_PORT when ``server_name`` / ``server_port`` are not given."""
    build_widget(module).launch(**launch_kwargs)
