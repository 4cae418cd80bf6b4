"""The partial-straggler scheme of Ramamoorthy, Meng and Girimaji as we reconstruct it (gclib.codes.partial_work): Q_max
by hand, by brute force over progress states and minimized by exhaustive search over orderings; the coverage rule
against the span oracle on every progress state; the 0/1 decode in exact arithmetic."""
from __future__ import annotations

from math import factorial

import numpy as np
import pytest
import sympy as sp

from gclib import schemes
from gclib.codes import DecodingError
from gclib.codes import partial_work as R
from gclib.symbolic import exact_matrix, exact_target, is_decodable_exact, verify

SMALL = [(4, 2), (4, 3), (5, 2), (5, 3), (6, 2), (6, 3)]


# ------------------------------------------------------------------------------------------------ Q_max
def test_q_max_by_hand():
    # cyclic n = 4, l = 2 in the natural order: chunk c is at position 1 of worker c - 1 and 0 of worker c; left
    # uncovered, worker c - 1 has done 1 chunk, worker c none, the two others 2 each: 5, and the next computation
    # may be the one that covers: 6
    assert R.q_max(R.cyclic_assignment(4, 2)) == 6 == R.q_max_bound(4, 2)
    # n = 5, l = 3: 1 + (5 - 3) 3 + (0 + 1 + 2) = 10
    assert R.q_max(R.cyclic_assignment(5, 3)) == 10 == R.q_max_bound(5, 3)
    # a bad order for n = 3, l = 2 (workers hold {0,1}, {1,2}, {2,0}): chunk 2 is last at both its holders;
    # uncovered, workers 1 and 2 have done one chunk each and worker 0 both: 4, so Q_max = 5 > the bound 4
    bad = [(0, 1), (1, 2), (0, 2)]
    assert R.q_max(bad) == 5 and R.q_max_bound(3, 2) == 4
    # every worker holds every chunk (n = l = 4): two workers in the order 0123 and two in 3210 put no chunk at
    # every position once, yet every chunk's positions sum to 6 = l (l - 1) / 2: the bound 1 + 0 + 6 = 7 is met
    balanced = [(0, 1, 2, 3), (3, 2, 1, 0), (0, 1, 2, 3), (3, 2, 1, 0)]
    assert R.q_max(balanced) == 7 == R.q_max_bound(4, 4)


def _q_max_by_states(order) -> int:
    """Q_max by brute force: 1 + the largest total progress over every progress state (chunks done per worker)
    whose finished chunks miss some chunk."""
    rows = R.check_assignment(order, None)
    missing = [sum(k) for k in R.progress_states(rows) if not R.covers(rows, k, len(rows))]
    return max(missing, default=-1) + 1


@pytest.mark.parametrize("n, l", SMALL)
def test_q_max_formula_equals_the_brute_force_over_progress_states(n, l):
    a = R.cyclic_assignment(n, l)
    for order in (R.optimal_order(a), R.make_order(a, "cyclic"), R.make_order(a, "random", seed=n * l)):
        assert R.q_max(order) == _q_max_by_states(order)
    assert R.q_max([(0, 1), (1, 2), (0, 2)]) == _q_max_by_states([(0, 1), (1, 2), (0, 2)])


@pytest.mark.parametrize("n, l", SMALL)
def test_the_matching_order_attains_the_exhaustive_minimum_of_q_max(n, l):
    for a in (R.cyclic_assignment(n, l), R.random_assignment(n, l, seed=7)):
        best, tried = R.min_q_max_exhaustive(a)
        order = R.optimal_order(a)
        assert tried == factorial(l) ** n
        assert R.q_max(order) == best == R.q_max_bound(n, l)
        # every chunk at every position exactly once among its holders
        pos = R.positions(order)
        for c in range(n):
            assert sorted(pos[:, c][pos[:, c] >= 0].tolist()) == list(range(l))
        # a worker computes exactly its assigned chunks
        assert [sorted(o) for o in order] == [sorted(x) for x in a]


def test_the_matching_by_hand_and_on_a_large_assignment():
    # worker 0 holds {0, 1}, worker 1 only {0}: worker 0 first takes chunk 0, worker 1 then reclaims it along the
    # augmenting path 1 -> 0 -> 0 -> 1, and worker 0 moves to chunk 1
    assert R._perfect_matching([{0, 1}, {0}], 2) == [1, 0]
    # the cyclic n = 3, l = 2 assignment: workers 0 and 1 take chunks 0 and 1; worker 2 ({0, 2}) tries chunk 0
    # first and reclaims it: worker 0 moves to 1, worker 1 to the free 2 (a path through every worker)
    assert R._perfect_matching([{0, 1}, {1, 2}, {0, 2}], 3) == [1, 2, 0]
    # thousands of workers: augmenting paths far longer than Python's recursion limit
    a = R.random_assignment(3000, 4, seed=1)
    order = R.optimal_order(a)
    assert [sorted(o) for o in order] == [sorted(x) for x in a]
    pos = R.positions(order)
    assert all(np.bincount(pos[:, c][pos[:, c] >= 0], minlength=4).tolist() == [1] * 4 for c in range(3000))
    assert R.q_max(order) == R.q_max_bound(3000, 4)


def test_random_orderings_are_never_better_and_often_worse():
    a = R.cyclic_assignment(8, 4)
    qs = [R.q_max(R.make_order(a, "random", seed=s)) for s in range(50)]
    assert min(qs) >= R.q_max_bound(8, 4) and max(qs) > R.q_max_bound(8, 4)


# ------------------------------------------------------------------------------------------------ the rule
@pytest.mark.parametrize("n, l", SMALL)
@pytest.mark.parametrize("ordering", ["optimal", "random"])
def test_coverage_rule_agrees_with_the_span_oracle_on_every_progress_state(n, l, ordering):
    code = R.rmg(n, l, ordering, seed=3)
    for k in R.progress_states(code.order):
        rec = R.received_of(code, k)
        mask = np.zeros(code.n_messages, dtype=bool)
        mask[rec] = True
        fast = R.covers(code.order, k)
        assert fast == bool(code.rule.decodable(mask)) == (rec.size > 0 and code.is_decodable(rec)), k


@pytest.mark.parametrize("n, l", [(4, 2), (4, 3), (5, 2)])
def test_exact_every_covering_state_decodes_with_0_1_and_no_other_state_decodes(n, l):
    code = R.rmg(n, l)
    B, T = exact_matrix(code), exact_target(code)
    n_cover = 0
    for k in R.progress_states(code.order):
        rec = R.received_of(code, k).tolist()
        if R.covers(code.order, k):
            A = code.decode(rec)
            assert set(np.unique(A).tolist()) <= {0.0, 1.0}
            As = sp.Matrix(A.astype(int).tolist())
            assert As * B.extract(rec, list(range(n))) == T  # A B_R = 1, exactly
            n_cover += 1
        else:
            assert not (rec and is_decodable_exact(B, rec, T))
            if rec:
                with pytest.raises(DecodingError):
                    code.decode(rec)
    assert 0 < n_cover < (l + 1) ** n


def test_the_0_1_decode_returns_the_gradient_exactly_and_uploads_one_vector_per_picked_worker():
    rng = np.random.default_rng(0)
    code = R.rmg(6, 3)
    g = rng.standard_normal((6, 5))
    msgs = code.encode(g)
    k = (3, 1, 3, 0, 2, 1)
    assert R.covers(code.order, k)
    rec = R.received_of(code, k)
    A = code.decode(rec)
    np.testing.assert_allclose(code.combine(A, msgs[rec], 5), g.sum(axis=0), rtol=1e-14, atol=1e-14)
    plan = R.decode_plan(code.order, k)
    picked = sorted(c for v in plan.values() for c in v)
    assert picked == list(range(6))
    for w, chunks in plan.items():
        assert set(chunks) <= set(code.order[w][: k[w]])
    cost = R.protocol_cost(code.order, k)
    assert cost.vectors == len(plan) <= 6 and cost.reports == sum(k) and cost.instructions == 6


def test_approximate_recovery_errors():
    order = R.cyclic_assignment(4, 2)  # worker i: (i, i + 1)
    assert R.coverage_mse(order, (1, 0, 0, 0)) == 3 / 4
    assert R.coverage_mse(order, (2, 0, 1, 0)) == 1 / 4
    assert R.coverage_mse(order, (2, 0, 2, 0)) == 0.0
    # least squares: one row [1 1 0 0] leaves 1 and 1 unmatched: 2 / 4; no row: 1
    assert R.lstsq_mse(np.array([[1.0, 1, 0, 0]]), 4) == pytest.approx(0.5)
    assert R.lstsq_mse(np.zeros((0, 4)), 4) == 1.0
    # a row [1 2 0 0] is best scaled by 3/5: error (2/5)^2 + (1/5)^2 + 1 + 1
    assert R.lstsq_mse(np.array([[1.0, 2, 0, 0]]), 4) == pytest.approx((0.16 + 0.04 + 2) / 4)


# ------------------------------------------------------------------------------------------------ registry
def test_the_scheme_builds_verifies_and_schedules_like_its_code():
    code = schemes.build("rmg", workers=5, load=3)
    assert code.name == "rmg" and code.stragglers == 2 and code.params["q_max"] == R.q_max_bound(5, 3)
    assert verify(code).ok  # every set of l - 1 stragglers: the others cover every chunk
    sch = schemes.simulable("rmg", workers=5, load=3, ordering="cyclic")
    cyc = schemes.build("rmg", workers=5, load=3, ordering="cyclic")
    assert np.array_equal(sch.sender, cyc.sender) and np.array_equal(sch.ready, cyc.ready)
    arrival = np.random.default_rng(1).exponential(size=(200, cyc.n_messages))
    np.testing.assert_array_equal(sch.rule.completion(arrival), cyc.rule.completion(arrival))


@pytest.mark.parametrize("kw, says", [({"ordering": "best"}, "ordering"), ({"load": 7}, "load"),
                                      ({"workers": 0}, "workers")])
def test_bad_parameters_name_themselves(kw, says):
    with pytest.raises(ValueError, match=says):
        R.rmg(**{"workers": 5, "load": 3, **kw})


def test_assignments_are_checked():
    with pytest.raises(ValueError, match="same number of workers"):
        R.check_assignment([(0, 1), (0, 2), (0, 1)])
    with pytest.raises(ValueError, match="distinct"):
        R.check_assignment([(0, 0), (1, 2), (2, 1)])
    a = R.random_assignment(7, 3, seed=2)
    assert R.check_assignment(a) and all(len(set(x)) == 3 for x in a)
    code = R.rmg(7, 3, assignment=a)
    assert R.q_max(code.order) == R.q_max_bound(7, 3)


# ------------------------------------------------------------------------------------------------ MPI
@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_an_mpi_run_survives_a_killed_worker_and_decodes_exactly(tmp_path, monkeypatch):
    """The runtime runs the code unchanged (every chunk sent as computed); worker 3 dies at iteration 1 and the
    others' chunks still cover every chunk (load 2: one straggler tolerated)."""
    import tempfile

    from gclib.learning import TandonAGD, make_problem
    from gclib.runtime import RunSpec, launch
    from gclib.stragglers import ShiftedExponential

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    code = schemes.build("rmg", workers=4, load=2)
    problem = make_problem("tandon-logistic", parts=4, seed=0, n_samples=400, dim=10)
    spec = RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(mu=10, alpha=0.01),
                   iterations=4, seed=3, time_scale=0.01, timeout=5.0, stop_timeout=3.0, kill={3: 1})
    res = launch(spec, job_timeout=60, check=False)
    assert res.ok, res.error
    assert len(res.records) == 4 and res.dead_workers == [3], (res.error, res.deaths)
    assert max(r["grad_error"] for r in res.records) < 1e-9
    assert all(3 not in r["workers"] for r in res.records[1:])


# ---------------------------------------------------------------------------------------------- two-phase exchange
def _two_phase_spec(exchange="two-phase", **kw):
    from gclib.learning import TandonAGD, make_problem
    from gclib.runtime import RunSpec
    from gclib.stragglers import ShiftedExponential

    scheme = kw.pop("scheme", "rmg")
    code = schemes.build(scheme, workers=6, **({"load": 3} if scheme == "rmg" else {}))
    problem = make_problem("tandon-logistic", parts=6, seed=0, n_samples=600, dim=10)
    return RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(mu=10, alpha=0.01),
                   iterations=kw.pop("iterations", 5), seed=3, time_scale=0.01, timeout=5.0, stop_timeout=3.0,
                   exchange=exchange, **kw)


def _picks(n=4, l=2):
    from gclib.runtime.two_phase import Picks

    code = schemes.build("rmg", workers=n, load=l)
    return code, Picks(code)


def test_the_picks_of_the_two_phase_exchange_are_the_decode_plan_and_add_every_chunk_once():
    code, picks = _picks(5, 2)
    covering = [k for k in R.progress_states(code.order) if R.covers(code.order, k)]
    for progress in covering:  # the master's first picks are the decode plan of the progress reported
        picks.reset()
        for m in R.received_of(code, progress):
            picks.report(int(m))
        plan = R.decode_plan(code.order, progress)
        assert sorted(c for v in plan.values() for c in v) == list(range(5))  # every chunk once ...
        assert all(set(v) <= set(code.order[w][:progress[w]]) for w, v in plan.items())  # ... from a finisher
        assert picks.pick() == plan
    for progress in R.progress_states(code.order)[:20]:
        if not R.covers(code.order, progress):
            picks.reset()
            for m in R.received_of(code, progress):
                picks.report(int(m))
            assert picks.pick() == {}  # not covered: nobody picked
    code, picks = _picks(6, 3)
    progress = [3, 1, 1, 2, 0, 1]
    for m in R.received_of(code, progress):
        picks.report(int(m))
    plan = picks.pick()
    assert plan == R.decode_plan(code.order, progress)
    for w, chunks in plan.items():
        picks.instruct(w, chunks, 0.0)
    assert picks.needed() == set() and picks.pick() == {}  # nothing picked twice
    for w in plan:
        assert picks.answer(w) == plan[w]
    assert picks.complete() and picks.used == picks.vectors == picks.instructions == len(plan)
    assert sorted(code.decoder.chunk[m] for m in picks.messages_used()) == list(range(6))
    assert picks.reports == sum(progress)


def test_a_lost_picked_worker_has_its_chunks_picked_again_or_waits_for_progress():
    code, picks = _picks(4, 2)  # cyclic: worker w holds w, w + 1 (mod 4)
    order = code.order
    for w in range(4):  # every worker finished its first chunk: they cover every chunk
        picks.report(w * 2)
    plan = picks.pick()
    assert sum(len(c) for c in plan.values()) == 4 and all(len(c) == 1 for c in plan.values())
    for w, chunks in plan.items():
        picks.instruct(w, chunks, float(w))
    assert picks.overdue(1.5) == [0, 1]  # instructed at 0 and 1
    assert picks.answer(1) == plan[1]
    lost_chunk = plan[0][0]
    assert picks.lose(0) and not picks.lose(0)
    assert picks.needed() == {lost_chunk}
    assert picks.pick() == {}  # nobody else finished it yet: wait for more progress
    holder = next(w for w in range(1, 4) if lost_chunk in order[w])
    picks.report(holder * 2 + order[holder].index(lost_chunk))
    assert picks.pick(exclude=[holder]) == {}  # (dead or silent: not picked)
    again = picks.pick()
    assert again == {holder: (lost_chunk,)}
    picks.instruct(holder, again[holder], 2.0)
    assert picks.answer(0) is None  # a dropped worker's late vector is not added
    for w in (2, 3, holder):
        assert picks.answer(w) is not None
    assert picks.complete() and picks.vectors == 5 and picks.used == 4 and picks.instructions == 5
    possible = picks.possible([0, 1])
    assert possible.all()  # every chunk added: the dead do not matter any more


def test_two_phase_is_refused_for_a_code_without_chunks_and_in_a_profile():
    with pytest.raises(ValueError, match="exchange 'two-phase' needs a code whose decoder names the chunk"):
        _two_phase_spec(scheme="uncoded")
    with pytest.raises(ValueError, match="exchange must be one of 'messages', 'two-phase', got 'two'"):
        _two_phase_spec(exchange="two")
    with pytest.raises(ValueError, match="wait_all"):
        _two_phase_spec(wait_all=True)
    assert _two_phase_spec("messages", scheme="uncoded").exchange == "messages"


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_the_two_phase_exchange_decodes_exactly_and_uploads_fewer_vectors_than_the_messages(tmp_path, monkeypatch):
    """Injected stragglers: each iteration ends with one vector per picked worker (at most n), added to the exact
    gradient, and fewer full-size uploads than the per-chunk messages of the same delays."""
    import tempfile

    from gclib.runtime import launch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    two = launch(_two_phase_spec(iterations=4), job_timeout=60, check=False)
    assert two.ok, two.error
    assert len(two.records) == 4 and max(r["grad_error"] for r in two.records) < 1e-9
    for r in two.records:
        assert 1 <= r["vectors"] == r["messages"] <= 6 and r["instructions"] == r["vectors"]
        assert r["reports"] >= 6 and r["workers"]
    assert two.messages_sent == two.messages_received  # every vector sent was received
    one = launch(_two_phase_spec("messages", iterations=4), job_timeout=60, check=False)
    assert one.ok, one.error
    assert all(r["messages"] >= 6 for r in one.records)  # one message of every chunk, at least
    assert sum(r["vectors"] for r in two.records) < sum(r["messages"] for r in one.records)
    assert two.summary()["mean_vectors"] < one.summary()["mean_messages"]


@pytest.mark.mpi
@pytest.mark.timeout(90)
def test_the_two_phase_exchange_survives_a_killed_worker(tmp_path, monkeypatch):
    import tempfile

    from gclib.runtime import launch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    res = launch(_two_phase_spec(kill={2: 1, 4: 2}), job_timeout=60, check=False)
    assert res.ok, res.error
    assert len(res.records) == 5 and res.dead_workers == [2, 4]
    assert max(r["grad_error"] for r in res.records) < 1e-9
    assert all(2 not in r["workers"] for r in res.records[1:]) and all(4 not in r["workers"] for r in res.records[2:])


class _Status:
    tag = count = 0

    def Get_tag(self):
        return self.tag

    def Get_count(self, datatype=None):
        return self.count


class _Control:
    """A worker's posted control receive without MPI: each ``Test`` completes with the next queued message."""

    def __init__(self, buf, queue):
        self.buf, self.queue, self.active = buf, list(queue), True

    def Test(self, status):
        if not self.active or not self.queue:
            return False
        status.tag, data = self.queue.pop(0)
        status.count = len(data)
        self.buf[:len(data)] = data
        self.active = False
        return True

    def Start(self):
        self.active = True


def test_a_two_phase_worker_reports_progress_and_answers_an_instruction_with_one_sum():
    """Without MPI: worker 1 of rmg (4 workers, load 2) sends a small report per finished chunk, no gradient; the
    master's instruction, after the iteration, is answered with the sum of the chunks named, tagged as a gradient
    of that iteration; an instruction of another iteration is not answered."""
    import collections
    from types import SimpleNamespace

    from gclib.learning import make_problem
    from gclib.runtime import protocol as P
    from gclib.runtime import worker as W

    code = schemes.build("rmg", workers=4, load=2)
    problem = make_problem("tandon-logistic", parts=4, seed=0, n_samples=400, dim=3)
    w = object.__new__(W.Worker)
    sent = []
    w.comm = SimpleNamespace(Isend=lambda arr, dest, tag: sent.append((tag, np.array(arr)))
                             or SimpleNamespace(Test=lambda: True))
    w.MPI = SimpleNamespace(DOUBLE=None)
    w.params_buf = np.zeros(problem.dim + 1)
    w.control, w.control_status, w.control_posted = _Control(w.params_buf, []), _Status(), True
    w.spec, w.code, w.w, w.dim = SimpleNamespace(kill={}, problem=problem), code, 1, problem.dim
    w.order, w.msgs, w.sends, w.slice, w.tests, w.bell = code.order[1], code.messages_of(1), [], 1e-4, 2, None
    w.width, w.dtype = P.message_width(code, problem.dim), P.message_dtype(code)
    w.finish, w.lead, w.recent = np.zeros((1, 2)), 0.0, collections.deque(maxlen=4)
    w.end_spin, w.take_in_yield, w.received_at = 0.0, 0.0, 0.0
    w.decoded, w.current, w.sent, w.abandoned, w.two_phase = -1, W.IDLE, 0, 0, True
    theta = np.array([0.1, -0.2, 0.3])
    assert w._iterate(0, theta, 0.0) is None  # both tasks done
    assert [(tag, d.tolist()) for tag, d in sent[:2]] == [(P.TAG_PROGRESS, [0.0, float(m)]) for m in w.msgs]
    assert [tag for tag, _ in sent[2:]] == [P.TAG_TASKS] and w.sent == 0
    chunks = list(code.order[1])
    w.control.queue = [(P.TAG_SUM, [1.0, chunks[1]]), (P.TAG_SUM, [0.0, *chunks])]
    w._receive_control()
    tag, vec = sent[-1]
    assert tag == P.grad_tag(0) and len(sent) == 4 and w.sent == 1  # (the instruction of iteration 1: none)
    assert vec[:2].tolist() == [0.0, 1.0] and vec.size == P.HEADER + problem.dim
    np.testing.assert_allclose(vec[P.HEADER:], sum(problem.partial_gradient(theta, c) for c in chunks), rtol=1e-12)


def test_gclib_run_refuses_the_two_phase_exchange_for_another_scheme(capsys):
    from gclib.cli import main

    assert main(["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--exchange", "two-phase"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gclib: error: argument --exchange: exchange 'two-phase' needs a "
                                               "code whose decoder names the chunk"), err
