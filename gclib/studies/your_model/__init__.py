"""Notebook ``15_your_model``: a model of one's own, a small network on scikit-learn's digits, trained over MPI with
the codes ``gclib advise`` recommends for a shipped real trace, whose recorded delays the runs replay. Modules:
:mod:`gclib.studies.your_model.perceptron` (the network, in PyTorch and in NumPy), :mod:`.study` (the advice, the
runs and their tables), :mod:`.plots`, :mod:`.claims`.
"""
