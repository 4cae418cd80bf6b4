"""ordered_map: the same results in the same order in one process or several, and its checks."""
import functools

import numpy as np
import pytest

from gclib.parallel import ordered_map


def _draws(seed: int, n: int = 5) -> list:
    return np.random.default_rng(seed).exponential(size=n).tolist()


def test_several_processes_give_the_loops_results_in_its_order():
    one = ordered_map(_draws, range(7))
    assert one == [_draws(s) for s in range(7)]
    assert ordered_map(functools.partial(_draws, n=3), range(7), processes=2, chunksize=2) == \
        [_draws(s, 3) for s in range(7)]
    assert ordered_map(_draws, range(7), processes=2) == one


def test_a_bad_process_count_is_named():
    with pytest.raises(ValueError, match="processes"):
        ordered_map(_draws, range(3), processes=0)
