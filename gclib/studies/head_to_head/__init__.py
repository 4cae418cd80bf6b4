"""Notebook ``14_head_to_head``: every family of codes of 2017-2024 side by side, on the same compute-time models
and the shipped real traces. Modules: :mod:`.study`, :mod:`.plots`, :mod:`.claims`.
"""
