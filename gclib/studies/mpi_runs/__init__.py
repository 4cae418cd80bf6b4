"""Notebook ``07_mpi_runs``: real MPI runs of every code with injected stragglers. Modules: :mod:`.claims`,
:mod:`.study`, :mod:`.plots`.
"""
