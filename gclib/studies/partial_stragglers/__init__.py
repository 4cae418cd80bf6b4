"""Notebook ``11_partial_stragglers``: the partial-straggler scheme of Ramamoorthy, Meng and Girimaji (NeurIPS 2024),
reconstructed (:mod:`gclib.codes.partial_work`). Modules: :mod:`.study`, :mod:`.plots`, :mod:`.claims`.
"""
