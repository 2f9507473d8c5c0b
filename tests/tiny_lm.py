"""A tiny random GPT-2 and a byte-level BPE tokenizer trained here, for offline LM-metric tests.

``tiny_gpt2(tmp_dir)`` builds both (seeded, ~1 s), saves them to ``tmp_dir`` (so loading from a
directory can be tested) and returns ``(model, tokenizer)``. ``tiny_tokenizer()`` is the tokenizer
alone (also used by ``benchmarks/fed_speed.py``). The weights are drawn with a large
``initializer_range`` so that the model is far from uniform and position or masking mistakes show
up in the scores.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

EOS = "<|endoftext|>"
FOLLOWUPS = Path(__file__).resolve().parents[1] / "dialeval" / "fed" / "followups.json"
SENTENCES = """\
Hi! How are you doing today? I'm doing well, thanks for asking. What about you?
I just got back from a long walk in the park with my dog. The weather was lovely.
Do you like to read books? I mostly read science fiction and some history.
What kind of music do you listen to? I love jazz, rock and a bit of classical music.
I'm playing a video game right now. It's called Terraria and it is a lot of fun.
Sitting in a meeting. Can't say much about it, it's probably boring, isn't it?
My favourite food is pizza, but I also enjoy cooking pasta at home on weekends.
Have you ever been to Paris? I visited last year and saw the Eiffel Tower.
The movie was great, although the ending was a little confusing to me.
We should talk about something else. Tell me about your family and your friends.
I have two brothers and a sister. We grew up in a small town near the sea.
Sorry, I don't know. Could you explain what you mean by that question?
Sure! Numbers like 1, 2, 3 and 42 are fine; so are dates such as 2020-07-01.
"""


def corpus_text() -> str:
    """Training text: some conversation sentences plus every FED follow-up."""
    data = json.loads(FOLLOWUPS.read_text(encoding="utf-8"))
    followups = [
        text
        for level in ("turn_level", "dialog_level")
        for quality in data[level].values()
        for text in quality["positive"] + quality["negative"]
    ]
    return SENTENCES + "\n".join(followups)


@functools.lru_cache(maxsize=1)
def tiny_tokenizer(vocab_size: int = 400):
    """A GPT-2-style byte-level BPE ``PreTrainedTokenizerFast`` with ``<|endoftext|>`` as eos/pad/bos."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[EOS], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus_text().splitlines(), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, bos_token=EOS, pad_token=EOS, unk_token=EOS)


def tiny_gpt2(tmp_dir: str | Path, n_layer: int = 2, n_embd: int = 32, n_head: int = 2, n_positions: int = 128):
    """Build (seed 0), save to ``tmp_dir`` and return ``(model, tokenizer)`` of a tiny random GPT-2."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = tiny_tokenizer()
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        initializer_range=0.5,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(tmp_dir)
    tokenizer.save_pretrained(tmp_dir)
    return model, tokenizer
