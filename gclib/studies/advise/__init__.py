"""Notebook ``09_advise``: checking gclib advise: fits, predictions and the network. Modules: :mod:`.calibration`,
:mod:`.claims`, :mod:`.plots`.
"""
