"""Notebook ``06_lazy_aggregation``: lazy aggregation: LAG, LAGC and G-LAG (Zhang and Simeone). Modules:
:mod:`.claims`, :mod:`.study`, :mod:`.plots`.
"""
