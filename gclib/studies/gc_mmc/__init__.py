"""Notebook ``04_gc_mmc``: GC with multi-message communication (Ozfatura, Gunduz and Ulukus). Modules: :mod:`.claims`,
:mod:`.plots`.
"""
