"""Notebook ``10_real_traces``: the shipped public traces through convert, fit, advise and back-test. Modules:
:mod:`.claims`, :mod:`.plots`, :mod:`.study`.
"""
