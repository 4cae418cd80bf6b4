"""The reduce on the draws themselves (gclib.reduce_on_draws): the numbers of the arrival times, to every digit, ties and
zeros included, for every schedule it reads, and its order statistics against a sort."""
import numpy as np
import pytest

from gclib import reduce_on_draws, schemes
from gclib.simulator import Schedule, simulate_chunk, simulate_workers

#: Schedules the reduce reads, sized so that the selections of kth_smallest run: the few largest (CRC,
#: K = 5000, s = 2), a partition (LCC, CRC at K = 300), a minimum of short blocks (FRC), a maximum (uncoded),
#: clusters (GC in 8 clusters, Kadhe et al.), messages of a third (Ye-Abbe, m = 3) and of two (RS on complex points)
#: gradients; the few smallest are checked on their own below.
READ = [("crc", dict(workers=5000, stragglers=2)), ("crc", dict(workers=300, stragglers=7)), ("frc", dict(workers=1000, stragglers=9)),
        ("rs", dict(workers=3000, stragglers=5, points="roots-of-unity")), ("lcc", dict(workers=2000, load=10)),
        ("uncoded", dict(workers=100)), ("gc", dict(workers=4000, load=5, clusters=8)),
        ("ye-abbe", dict(workers=2000, stragglers=3, comm=3)), ("kadhe", dict(workers=600, stragglers=1, comm=3)),
        ("ignore", dict(workers=100, stragglers=3))]


def draws(kind: str, n: int, K: int, rng) -> np.ndarray:
    """Continuous draws, draws on a grid of tenths (ties everywhere, and 3 * 0.1 != 0.3), or with zeros."""
    if kind == "continuous":
        return 0.01 + rng.exponential(0.1, (n, K))
    if kind == "ties":
        return rng.integers(1, 20, (n, K)) * 0.1
    return rng.integers(0, 3, (n, K)) * 0.3


@pytest.mark.parametrize("name,kw", READ, ids=[f"{n}-{k.get('workers')}" for n, k in READ])
def test_the_reduce_on_draws_gives_the_numbers_of_every_task(name, kw):
    sch = Schedule.of(schemes.simulable(name, **kw))
    bl = reduce_on_draws.plan(sch)
    assert bl is not None
    rng = np.random.default_rng(7)
    for kind in ("continuous", "ties", "zeros"):
        x = draws(kind, 12, sch.n_workers, rng)
        got = reduce_on_draws.evaluate(bl, x, sch.size)
        ref = simulate_chunk(sch, x[:, :, None] * np.arange(1, sch.load + 1))  # every task's finish time
        for k, v in ref.items():
            assert got[k].dtype == v.dtype and np.array_equal(got[k], v), (name, kind, k)
        assert all(np.array_equal(simulate_workers(sch, x)[k], v) for k, v in ref.items())


@pytest.mark.parametrize("name,kw", [("gc-mmc-correlated", dict(workers=40, load=10, order=6, clusters=4)),
                                     ("gc-mmc-uncorrelated", dict(workers=40, load=10, orders=(6, 8, 10))),
                                     ("hybrid", dict(workers=20, load=5, orders=(2, 5))),
                                     ("uc-mmc", dict(workers=12, load=3)),
                                     ("gc", dict(workers=41, load=10, clusters=4))])
def test_codes_of_several_messages_per_worker_or_unequal_clusters_are_not_read_on_draws(name, kw):
    assert reduce_on_draws.plan(Schedule.of(schemes.simulable(name, **kw))) is None


def test_the_order_statistic_is_the_sorted_entry():
    rng = np.random.default_rng(3)
    for n, P, B in ((5, 1, 40_000), (7, 3, 11), (4, 2, 2_000), (3, 1, 257)):
        for grid in (None, 0.25):
            xb = rng.exponential(1.0, (n, P, B))
            if grid:
                xb = np.round(xb / grid) * grid  # ties
            ref = np.sort(xb, axis=2)
            for k in sorted({1, 2, 3, 7, B // 2, B - 6, B - 1, B}):
                assert np.array_equal(reduce_on_draws.kth_smallest(xb, k), ref[:, :, k - 1]), (n, P, B, k)


def test_the_largest_draw_received_by_a_time_is_exact():
    rng = np.random.default_rng(5)
    v = np.concatenate([rng.exponential(1.0, 2000), [0.0, 0.1, 1e-300, 3.0]])
    for r in (1, 3, 10, 4991):
        t = v * r
        b = reduce_on_draws.largest_within(r, t, v)
        assert np.all(b >= v) and np.all(b * r <= t)
        assert np.all(np.nextafter(b, np.inf) * r > t)


def test_tasks_are_counted_on_the_rounded_products():
    x = np.array([[0.1, 0.0, 0.25, 1.0 / 3]])
    # 3 * 0.1 = 0.30000000000000004 > 0.3: two tasks; 0 * j = 0: all four; 0.25: one; 3 * (1/3) = 1.0 > 0.3: none
    assert reduce_on_draws.task_counts(x, np.array([[0.3]]), 4.0).tolist() == [[2.0, 4.0, 1.0, 0.0]]
    assert reduce_on_draws.tasks_done(x, np.array([0.3]), np.array([4, 4, 4, 4]))[0] == 7


def _counted(x, t, L, dtype):
    """``#{1 <= j <= L : dtype(j * x) <= t, finite}`` by the products themselves, entry by entry."""
    out = np.zeros(x.shape)
    for j in range(1, int(L) + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            p = (x * j).astype(dtype)
        out += (p <= t) & np.isfinite(p)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_task_counts_estimated_in_float32_are_exact_at_every_rounding_edge(dtype):
    """Times at exact multiples of the draws, one float either side of them, and the usual draws and edges (0, inf,
    subnormal, huge but with every product within the dtype's range): the float32 estimate recounts every entry it
    cannot be sure of."""
    rng = np.random.default_rng(11)
    huge = 1e300 if dtype is np.float64 else 1e30
    x = np.concatenate([rng.exponential(0.1, 3000), 0.01 + rng.exponential(1.0, 3000),
                        [0.0, np.inf, 5e-324, 1e-40, huge, 1 / 3, 0.1, 0.7]])
    j = rng.integers(1, 11, x.size).astype(float)
    base = (x * j).astype(dtype).astype(float)
    for t in (base, np.nextafter(base, np.inf), np.nextafter(base, -np.inf), np.full(x.size, 0.35), np.zeros(x.size),
              np.full(x.size, np.inf)):
        for L in (1.0, 10.0, 37.0):
            got = reduce_on_draws.task_counts(x, t, L, dtype=dtype)
            want = _counted(x, t, L, dtype)
            assert np.array_equal(got, want), (dtype, L, x[got != want][:5], t[got != want][:5])


def test_a_message_sent_before_the_whole_load_counts_every_task():
    """``ready`` below the load: the workers whose message arrived have not all computed their whole load."""
    from gclib.codes.rules import threshold

    K = 50
    sch = Schedule("early", K, np.arange(K), np.full(K, 2), np.ones(K), threshold(K, 40), np.full(K, 3))
    bl = reduce_on_draws.plan(sch)
    assert (bl.ready, bl.length, bl.k) == (2, 3, 40)
    rng = np.random.default_rng(2)
    for kind in ("continuous", "ties", "zeros"):
        x = draws(kind, 30, K, rng)
        got = reduce_on_draws.evaluate(bl, x, sch.size)
        ref = simulate_chunk(sch, x[:, :, None] * np.arange(1, 4))
        assert all(np.array_equal(got[k], v) for k, v in ref.items()), kind
