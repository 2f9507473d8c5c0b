"""A combined metric learned from dialeval's own scores (issue 21; after Yeh et al. 2021's suggestion
to combine metrics): a non-negative ridge regression over the headline scores of the other metrics,
trained on the human-judgment sets and always validated on a set it never saw (leave-one-set-out).
"""
