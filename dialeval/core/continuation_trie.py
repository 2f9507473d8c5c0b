"""The continuations of one prefix as a token trie, for :meth:`dialeval.core.lm.LMScorer.grouped_logprobs`.

FED asks the same conversation 32 follow-ups ("That's really interesting!", "That's not very
interesting.", ...); many begin with the same tokens. Laid out as a trie, depth-first, those tokens
are fed once: a node sees its group's prefix and its ancestors, at position ``len(prefix) + depth``,
so every continuation is still scored exactly as ``prefix + c`` alone, ``log P(c | prefix)`` being
the sum over the nodes of its path.
"""

from __future__ import annotations

from typing import Sequence


class ContinuationTrie:
    """The continuations of one prefix as a token trie, laid out depth-first (a node after its
    parent, a subtree contiguous), so that continuations sharing their first tokens (FED's "That's
    really ...", "That's not ...") feed those tokens once.

    ``tokens[t]``, ``parents[t]`` (-1: a first token, predicted from the prefix's last position),
    ``depths[t]`` (0 for a first token; its position is ``len(prefix) + depth``) and ``ends[t]`` (one
    past the last node of ``t``'s subtree: the nodes that see ``t``) per node; ``paths[j]``: the nodes
    of continuation ``j`` in order (``log P(c_j | prefix)`` is the sum of their log-probabilities).
    """

    def __init__(self, continuations: Sequence[Sequence[int]]):
        children: list[dict[int, int]] = [{}]  # node 0 is the root (the prefix), not laid out
        keys: list[tuple[int, int]] = [(-1, -1)]  # (parent node, token) of every node
        self.paths: list[list[int]] = []
        for cont in continuations:
            node, path = 0, []
            for token in cont:
                child = children[node].get(token)
                if child is None:
                    child = children[node][token] = len(keys)
                    children.append({})
                    keys.append((node, token))
                node = child
                path.append(node)
            self.paths.append(path)
        order: list[int] = []  # depth-first, children in order of first appearance
        stack = list(reversed(children[0].values()))
        depth = {0: -1}
        while stack:
            node = stack.pop()
            depth[node] = depth[keys[node][0]] + 1
            order.append(node)
            stack += reversed(children[node].values())
        at = {node: t for t, node in enumerate(order)}
        self.tokens = [keys[node][1] for node in order]
        self.parents = [at.get(keys[node][0], -1) for node in order]
        self.depths = [depth[node] for node in order]
        self.ends = [0] * len(order)
        for t in reversed(range(len(order))):  # a subtree ends where its last descendant's does
            self.ends[t] = max([t + 1] + [self.ends[at[c]] for c in children[order[t]].values()])
        self.paths = [[at[node] for node in path] for path in self.paths]

    def __len__(self) -> int:
        """Nodes of the trie: the tokens the continuations feed."""
        return len(self.tokens)
