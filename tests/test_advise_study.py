"""gclib.studies.advise.study: the fit-recovery study and its summaries (the machine study runs MPI: notebook
09's test)."""
import numpy as np
import pytest

from gclib.studies.advise import study as cal
from gclib import fit
from gclib.stragglers import Exponential, Pareto, ShiftedExponential


def test_durations_are_the_differences_of_the_finish_times():
    m = ShiftedExponential(mu=5.0, alpha=0.1)
    d = cal.durations(m, 4, 3, 2, np.random.default_rng(1))
    f = m.sample(np.random.default_rng(1), 3, 4, 2)
    assert d.shape == (3, 4, 2)
    np.testing.assert_allclose(np.cumsum(d, axis=2), f)
    np.testing.assert_allclose(d[:, :, 0], d[:, :, 1])  # eq. 5: every task of a worker takes the same time


def test_recovery_rows_and_summaries():
    truths = {"shifted-exp per worker": ShiftedExponential(mu=10.0, alpha=0.01),
              "exp per task": Exponential(rate=4.0, per_task=True)}
    rec = cal.recovery(truths, workers=6, iterations=10, tasks=2, repeats=3, seed=2, bootstrap=40)
    assert len(rec) == 3 * (2 + 1)
    assert set(rec["parameter"]) == {"mu", "alpha", "rate"}
    assert (rec["covered"] == ((rec["lo"] <= rec["true_value"]) & (rec["true_value"] <= rec["hi"]))).all()
    assert set(rec["winner"]) <= {f"{fam} {conv}" for fam in fit.FAMILIES for conv in ("per task", "per worker")}
    assert set(rec["fit"]) == {"shifted-exp per worker", "exp per task"}
    again = cal.recovery(truths, workers=6, iterations=10, tasks=2, repeats=3, seed=2, bootstrap=40, processes=2)
    assert rec.equals(again)  # same seed, same numbers, in one process or two
    cov = cal.coverage(rec)
    assert list(cov["repeats"]) == [3, 3, 3]
    assert list(cov["covered"]) == [int(rec[(rec.truth == r.truth) & (rec.parameter == r.parameter)].covered.sum())
                                    for r in cov.itertuples()]
    good = cal.goodness(rec)
    assert list(good["repeats"]) == [3, 3]
    assert all(0 <= w <= 3 for w in good["wins"])


def test_matching_fit_and_mean_task_time():
    m = ShiftedExponential(mu=8.0, alpha=0.05)
    d = cal.durations(m, 20, 30, 1, np.random.default_rng(3))
    report = fit.fit(d, seed=0, bootstrap=50)
    f = cal._matching(report, m)
    assert f.family == "shifted-exp" and not f.per_task
    mean, lo, hi = cal.mean_task_time(f)
    assert lo <= mean <= hi
    assert mean == pytest.approx(f.params["alpha"] + 1 / f.params["mu"])
    assert cal.model_mean(m) == pytest.approx(0.05 + 1 / 8)
    assert cal.model_mean(Pareto(scale=1.0, shape=2.0)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no mean task time"):
        cal.model_mean(object())


def test_run_options_of_an_advice_command():
    assert cal._run_options("--scheme gc-mmc-uncorrelated --workers 8 --load 3 --orders 1,3") == (
        "gc-mmc-uncorrelated", {"workers": 8, "load": 3, "orders": "1,3"})
    with pytest.raises(ValueError, match="pairs"):
        cal._run_options("--scheme crc --exact")


def test_the_network_case_runs_on_this_machine_when_no_throttled_hosts_can_be_made(monkeypatch):
    from gclib.runtime import namespace_hosts

    calls = []
    monkeypatch.setattr(cal, "_network_case", lambda opts, where, *rest: calls.append((opts, where)) or "case")
    monkeypatch.setattr(namespace_hosts, "why_not", lambda rate=None: None)

    def refused(self):
        raise namespace_hosts.HostsUnavailable("cannot make local hosts: ip netns add: Operation not permitted")

    monkeypatch.setattr(namespace_hosts.LocalHosts, "__enter__", refused)
    kw = dict(workers=4, tasks=1, iterations=2, model=ShiftedExponential(10, 0.01), time_scale=0.02,
              run_iterations=2, dim=8)
    assert cal.network_case(rate="100mbit", **kw) == "case"
    (opts, where), = calls
    assert opts == {"hosts": None}
    assert where == ("this machine (no throttled local hosts: cannot make local hosts: ip netns add: Operation not "
                     "permitted)")
    calls.clear()
    monkeypatch.setattr(namespace_hosts, "why_not", lambda rate=None: "network namespaces need root")
    cal.network_case(rate="100mbit", hosts="hosts.txt", **kw)
    assert calls == [({"hosts": "hosts.txt"}, "the hostfile's hosts (no throttled local hosts: network namespaces "
                                              "need root)")]
    calls.clear()
    cal.network_case(**kw)
    assert calls == [({"hosts": None}, "this machine")]
