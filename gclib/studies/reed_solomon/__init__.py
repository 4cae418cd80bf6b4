"""Notebook ``02_reed_solomon``: Reed-Solomon gradient codes and their numerical stability. Modules: :mod:`.claims`,
:mod:`.plots`, :mod:`.study`.
"""
