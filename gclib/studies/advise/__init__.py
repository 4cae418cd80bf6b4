"""Notebook ``09_advise``: checking gclib advise: fits, predictions and the network. Modules: :mod:`.study`,
:mod:`.claims`, :mod:`.plots`.
"""
