"""Notebook ``03_communication_efficient``: the communication-efficient codes (Ye and Abbe; Kadhe, Koyluoglu and
Ramchandran). Modules: :mod:`.claims`, :mod:`.plots`.
"""
