"""USL-H (Phy, Zhao & Aizawa 2020, "Deconstruct to Reconstruct a Configurable Evaluation Metric for
Open-Domain Dialogue Systems", COLING): a response's Understandability (valid utterance prediction,
U), Sensibleness (next utterance prediction, S) and Likability/specificity (the response's negative
log-likelihood, L), combined hierarchically (:mod:`dialeval.usl.formula`)."""
