"""The studies: one package per notebook, named like it, with the notebook's study (``study``: the functions that
compute its tables), its figures (``plots``) and its claims (``claims``: the paper's statements, our readings and our
checks, judged from the tables). They import the core (``gclib.codes``, ``gclib.simulator``, ...) and the runtime, never
the other way round (``tests/test_floors.py`` checks every arrow); ``gclib.studies.params`` checks the notebooks'
parameters and ``gclib.studies.gallery`` describes every figure.

=====================================  ==============================================================
notebook                               package
=====================================  ==============================================================
``01_gradient_coding``                 :mod:`gclib.studies.gradient_coding`
``02_reed_solomon``                    :mod:`gclib.studies.reed_solomon` (its study: numerical stability)
``03_communication_efficient``         :mod:`gclib.studies.communication_efficient`
``04_gc_mmc``                          :mod:`gclib.studies.gc_mmc`
``05_mmc_design``                      :mod:`gclib.studies.mmc_design`
``06_lazy_aggregation``                :mod:`gclib.studies.lazy_aggregation` (and its study)
``07_mpi_runs``                        :mod:`gclib.studies.mpi_runs` (and its study)
``08_scale``                           :mod:`gclib.studies.scale`
``09_advise``                          :mod:`gclib.studies.advise` (and its study)
``10_real_traces``                     :mod:`gclib.studies.real_traces` (and its study)
``11_partial_stragglers``              :mod:`gclib.studies.partial_stragglers`
``12_sequential``                      :mod:`gclib.studies.sequential` (and its study)
``13_approximate``                     :mod:`gclib.studies.approximate` (its study and training)
``14_head_to_head``                    :mod:`gclib.studies.head_to_head` (and its study)
``15_your_model``                      :mod:`gclib.studies.your_model` (its perceptron and study)
=====================================  ==============================================================
"""
