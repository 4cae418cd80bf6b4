"""Notebook ``08_scale``: codes at up to ten thousand workers. Modules: :mod:`.claims`, :mod:`.plots`.
"""
