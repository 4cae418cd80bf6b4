"""Notebook ``01_gradient_coding``: Tandon et al.'s gradient coding. Modules: :mod:`.claims`, :mod:`.plots`.
"""
