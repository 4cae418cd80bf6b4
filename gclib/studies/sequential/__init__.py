"""Notebook ``12_sequential``: sequential gradient coding (Krishnan, Ebrahimi and Khisti, ICLR 2023,
arXiv:2211.13802) replayed on delay matrices from gclib's compute-time models, the shipped real traces and a real
MPI run. Modules: :mod:`.study`, :mod:`.claims`, :mod:`.plots`.
"""
