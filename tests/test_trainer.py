"""The README's `transformers.Trainer` recipe: a real `Seq2SeqTrainer.evaluate()` step whose decoded
generations include empty strings (a model in training often generates EOS at once) goes through the
README's `compute_metrics` with multiref, and the empty generations are scored, not raised on."""

import numpy as np
import pytest
import torch

from tiny_lm import tiny_tokenizer

INPUTS = ["how are you ?", "do you like books ?", "what music do you like ?", "hi !",
          "tell me about paris .", "are you ok ?", "what is your name ?", "i like pizza ."]
REFERENCES = [["i am fine , thanks .", "good ."], ["yes , novels ."], ["jazz mostly ."], ["hello !"],
              ["it is a big city ."], ["yes i am ."], ["my name is sam ."], ["me too !"]]
N_EMPTY = 3


def tiny_bart_that_sometimes_stops_at_once(tokenizer):
    """A random 1-layer BART whose final bias makes EOS the first token for the N_EMPTY inputs where
    it is closest to the top (so greedy decoding yields exactly those as empty strings)."""
    from transformers import BartConfig, BartForConditionalGeneration

    eos = tokenizer.eos_token_id
    config = BartConfig(
        vocab_size=len(tokenizer), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        pad_token_id=eos, bos_token_id=eos, eos_token_id=eos, decoder_start_token_id=eos,
        forced_eos_token_id=None, init_std=0.5,
    )
    torch.manual_seed(0)
    model = BartForConditionalGeneration(config).eval()
    encoded = tokenizer(INPUTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        first = model(**encoded, decoder_input_ids=torch.full((len(INPUTS), 1), eos)).logits[:, -1]
        gap = first.max(-1).values - first[:, eos]
        model.final_logits_bias[0, eos] += float(gap.sort().values[N_EMPTY - 1]) + 1e-3
    model.generation_config.num_beams = 1
    model.generation_config.do_sample = False
    return model


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
def test_seq2seq_trainer_evaluate_scores_empty_generations(tmp_path):
    from datasets import Dataset
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    import dialeval

    tokenizer = tiny_tokenizer()
    model = tiny_bart_that_sometimes_stops_at_once(tokenizer)
    features = tokenizer(INPUTS)
    features["labels"] = tokenizer([refs[0] for refs in REFERENCES])["input_ids"]
    eval_dataset = Dataset.from_dict(dict(features))

    multiref = dialeval.load("multiref")
    seen = {}

    # The README's compute_metrics, verbatim apart from keeping the texts and the full result.
    def compute_metrics(eval_pred, tokenizer=tokenizer, references=REFERENCES):
        preds = np.where(eval_pred.predictions != -100, eval_pred.predictions, tokenizer.pad_token_id)
        texts = tokenizer.batch_decode(preds, skip_special_tokens=True)
        result = multiref.compute(predictions=texts, references=references)
        seen.update(texts=texts, result=result)
        return {k: v for k, v in result.items() if isinstance(v, float)}  # means only

    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=3, predict_with_generate=True,
        generation_max_length=5, report_to=[], use_cpu=True,
    )
    trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=eval_dataset, compute_metrics=compute_metrics,
                             data_collator=DataCollatorForSeq2Seq(tokenizer, model=model))
    metrics = trainer.evaluate()

    texts, result = seen["texts"], seen["result"]
    empty = [i for i, t in enumerate(texts) if not t.strip()]
    assert len(texts) == len(INPUTS) and len(empty) == N_EMPTY  # the premise: some generations are empty
    for name in ("bleu2", "rougeL"):
        per_item = result[f"{name}_scores"]
        assert len(per_item) == len(INPUTS)  # empty generations are counted ...
        assert all(per_item[i] == 0.0 for i in empty)  # ... as hypotheses with no tokens
        assert metrics[f"eval_{name}"] == pytest.approx(sum(per_item) / len(INPUTS), rel=1e-12)
