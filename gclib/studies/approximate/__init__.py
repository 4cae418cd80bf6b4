"""Notebook ``13_approximate``: approximate gradient codes (Raviv et al.'s expander codes with the optimal and the
fixed decoder, stochastic gradient coding, ignore-stragglers) against an exact code of the same load. Modules:
:mod:`.study` (the decoding error against the straggler fraction, and the authors' published benchmark),
:mod:`.training` (gradient descent with the decoded gradients on a simulated clock), :mod:`.plots`,
:mod:`.claims`.
"""
