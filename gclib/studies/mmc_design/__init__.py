"""Notebook ``05_mmc_design``: the GC-MMC design search under a load budget. Modules: :mod:`.claims`, :mod:`.plots`.
"""
