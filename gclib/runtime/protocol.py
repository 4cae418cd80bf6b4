"""What the master and the workers say to each other, and what both compute from the seed.

Messages (all point to point on ``COMM_WORLD``; rank 0 is the master, rank ``w + 1`` is worker ``w``):

* master -> worker, tag :data:`TAG_PARAMS`: ``float64 [iteration, theta...]``, the point at which to compute;
* master -> worker, tag :data:`TAG_STOP`: ``float64 [0]``, finish pending sends and say goodbye;
* master -> worker, tag :data:`TAG_FINAL`: ``float64 [hard]``, exit (``hard = 1``: skip ``MPI_Finalize``, which
  would wait forever for a dead rank);
* worker -> master, tag :func:`grad_tag` ``(iteration)``: ``[iteration, message id, worker clock, compute
  seconds, payload...]`` (complex for complex codes; the header then sits in the real parts);
* master -> worker, tag :data:`TAG_SPEC`: the pickled ``(spec, finish)`` (bytes) at start-up, or the pickled
  ``None`` when the run cannot start; sent point to point, so that a worker that dies before it arrives holds up
  nobody (a collective broadcast would wait for it);
* both ways, tag :data:`TAG_HELLO`, once at start-up, so that MPICH's lazily made connections are made before
  the first timed iteration, and the first message of each size each way is not a timed one: from the master,
  ``float64`` zeros as many as the parameters' message; from a worker, ``float64 [pid, bell, n, host name's n
  code points..., 0...]`` (``bell`` 1 if it opened the master's bell, else 0), padded with zeros to the bytes of a
  gradient message;
* master -> worker, tag :data:`TAG_DONE`: ``float64 [iteration]``, sent once that iteration is decoded and
  stepped (outside its timed window): a worker still working on it stops at once, reports the tasks it finished
  (as when newer parameters interrupt it), and waits for the next parameters, so that the stragglers of an
  iteration stop computing and sending before the next one starts;
* worker -> master, tag :data:`TAG_READY`: ``float64 [0]``, once at start-up, after the master's hello came in,
  the worker's connections went to its guard and its garbage was collected: the master starts the first
  iteration once every worker alive is ready, so that no start-up work of a worker overlaps a timed iteration;
* worker -> master, tag :data:`TAG_BYE`: ``float64 [messages sent, iterations abandoned]``, the worker's last
  message;
* master -> worker, tag :data:`TAG_NETWORK`: ``float64 [size, count]``, after a profile's last iteration
  (``RunSpec.network``): answer with ``count`` messages of ``size`` floats, tag :data:`TAG_ECHO`, to measure
  what a message costs (:mod:`gclib.runtime.message_probe`);
* worker -> master, tag :data:`TAG_TASKS`: ``float64 [iteration, t_1, ..., t_n]``, the worker-side finish times
  (seconds since it received that iteration's parameters) of the ``n`` partial gradients it computed in that
  iteration, sent once per iteration when the worker stops working on it (all its tasks done, newer parameters
  arrived, or the master said it is decoded); ``inf`` for a task whose injected delay is "never". The master
  takes it in like a late gradient and only stores it.

A run with ``RunSpec.exchange == "two-phase"`` (:mod:`gclib.runtime.two_phase`; the codes whose decoder names every
message's chunk) replaces the gradient messages by three others:

* worker -> master, tag :data:`TAG_PROGRESS`: ``float64 [iteration, message id]``, sent when a task readies that
  message (the chunk it finished: the code's decoder names it), instead of the message itself;
* master -> worker, tag :data:`TAG_SUM`: ``float64 [iteration, chunk ids...]`` (at most ``load + 1`` numbers: it
  fits the worker's control buffer), the chunks, all of them finished and reported, whose partial gradients the
  worker adds;
* worker -> master, tag :func:`grad_tag` ``(iteration)``: the answer, ``[iteration, worker, worker clock, compute
  seconds, sum...]``, one full-size vector per instruction, in the order of the instructions (so that a late one
  drains like a late gradient).

The iteration is in the tag, so the master recognizes a late gradient without reading it and drains it.

A rank whose model fails (it cannot be built from its name, or raises while computing) says so on its standard
output, where the launcher reads it (:func:`report_failure`); the launcher then ends the run with that line's
words.
"""
from __future__ import annotations

import base64
import binascii
import ctypes
import enum
import gc
import json

import numpy as np

from gclib.learning.model import ModelError
from gclib.simulator import arrival_times

#: Prefix of the master's event lines on stdout (``MARK {"kind": ..., ...}``, read by the launcher).
MARK = "@gclib "
TAG_PARAMS = 1
TAG_STOP = 2
TAG_FINAL = 3
TAG_BYE = 4
TAG_HELLO = 5
TAG_SPEC = 6
TAG_TASKS = 7
TAG_READY = 8
TAG_DONE = 9
TAG_NETWORK = 10
TAG_ECHO = 11
TAG_PROGRESS = 12
TAG_SUM = 13

#: A wait that the bell ends (:mod:`gclib.runtime.wakeup`) sleeps at most this many polls (``RunSpec.poll``): the
#: master's when every worker alive shares its bell, a worker's when it does.
BELL_SLICE_POLLS = 20
GRAD_BASE = 100
HEADER = 4  # iteration, message id, worker clock (s since it got the parameters), compute seconds


#: Characters of an error's text a failure report keeps (a line of the ranks' output must stay short).
FAILURE_TEXT = 400


def report_failure(worker, stage: str, error: BaseException, iteration=None) -> None:
    """Print the failure of a rank's model as one line for the launcher: ``MARK {"kind": "failed", "worker": w,
    "stage": "build" | "iteration", "iteration": i, "error": "Type: text"}`` (``worker`` ``None``: the master)."""
    said = str(error) if isinstance(error, ModelError) else f"{type(error).__name__}: {error}"  # (it names the model)
    text = " ".join(said.split())[:FAILURE_TEXT]
    print(MARK + json.dumps({"kind": "failed", "worker": worker, "stage": stage, "iteration": iteration,
                             "error": text}), flush=True)


class Exit(enum.Enum):
    """How a rank leaves a run: ``CLEAN``, ready for the next run of a series (or ``MPI_Finalize``); ``LAST``
    (rank 0) through ``MPI_Finalize`` with no run after it in this job (the run stopped early, every rank alive);
    ``HARD`` without finalize (a peer died, or never said its last word, and finalize would wait for it forever)."""

    CLEAN = "clean"
    LAST = "last"
    HARD = "hard"


def grad_tag(iteration: int) -> int:
    """The MPI tag of a gradient message of ``iteration`` (MPICH allows tags up to 2**29 - 1)."""
    return GRAD_BASE + int(iteration)


def tag_iteration(tag: int) -> int:
    return int(tag) - GRAD_BASE


def message_width(code, dim: int) -> int:
    """Length of one message payload: ``ceil(dim / n_pieces)``."""
    return -(-dim // code.n_pieces)


def message_dtype(code):
    return np.complex128 if np.iscomplexobj(code.B) else np.float64


class Rank:
    """What the master and a worker share: the run, its message layout, and their non-blocking sends."""

    def __init__(self, comm, spec):
        from mpi4py import MPI  # here: importing it starts MPI (the launcher imports this module too)

        self.MPI = MPI
        self.comm = comm
        self.spec = spec
        self.code = spec.code
        self.dim = spec.problem.dim
        self.width = message_width(self.code, self.dim)
        self.dtype = message_dtype(self.code)
        self.sends = []  # pending (request, buffer): a buffer must live until its send completes

    def settle(self):
        """Called once, after the untimed warm-up: make the waits of the timed loop cheap and punctual
        (:meth:`collect_garbage`, :meth:`tighten_timers`)."""
        self.collect_garbage()
        self.tighten_timers()

    def collect_garbage(self):
        """Run Python's cyclic garbage collector now and freeze everything alive out of its reach (``gc.freeze``): a
        full collection over the imported libraries' objects takes milliseconds, and the allocations of the polling
        loops would otherwise trigger one in the middle of an iteration."""
        gc.collect()
        gc.freeze()

    def tighten_timers(self):
        """Set this thread's timer slack to 1 ns (Linux ``PR_SET_TIMERSLACK``; by default the kernel may let a
        sleep run 50 us late to batch wake-ups): every sleep slice of a wait ends when asked."""
        try:
            ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK
        except (OSError, AttributeError):  # not Linux: the default slack
            pass

    def _isend(self, arr, dest, tag):
        self.sends.append((self.comm.Isend(arr, dest=dest, tag=tag), arr, dest))

    def _reap(self):
        """Forget the sends that completed (a send whose test fails, say to a peer that died, is dropped too)."""
        if self.sends:
            keep = []
            for r, b, d in self.sends:
                try:
                    if not r.Test():
                        keep.append((r, b, d))
                except self.MPI.Exception:
                    pass
            self.sends = keep


def pack_step_state(state: dict) -> dict:
    """The state of an update (``TandonAGD`` / ``GD``: a dict of arrays and numbers) as exact JSON: arrays as
    ``{"f64": text, "shape": [...]}`` with ``text`` the base64 of the array's little-endian doubles, integers as
    integers, floats as ``float.hex`` strings.

    The master packs the state after every iteration and the launcher parses it, while the workers start the
    next iteration on the same cores: one string per array keeps both cheap (a string per element cost each of
    them several times more)."""
    out = {}
    for k, v in state.items():
        if isinstance(v, np.ndarray) or isinstance(v, (list, tuple)):
            a = np.asarray(v, dtype="<f8")
            out[k] = {"f64": base64.b64encode(a.tobytes()).decode("ascii"), "shape": list(a.shape)}
        elif isinstance(v, (bool, np.bool_)):
            out[k] = {"bool": bool(v)}
        elif isinstance(v, (int, np.integer)):
            out[k] = int(v)
        elif isinstance(v, (float, np.floating)):
            out[k] = {"float": float(v).hex()}
        else:
            raise TypeError(f"step state entry {k!r} has type {type(v).__name__}; only arrays and numbers can be "
                            f"saved")
    return out


def unpack_step_state(packed: dict) -> dict:
    """Inverse of :func:`pack_step_state` (raises ``ValueError`` on anything else)."""
    if not isinstance(packed, dict):
        raise ValueError("step_state must be an object")
    out = {}
    for k, v in packed.items():
        if isinstance(v, bool) or not isinstance(v, (int, dict)):
            raise ValueError(f"step_state entry {k!r} is malformed")
        if isinstance(v, int):
            out[k] = v
        elif "f64" in v:
            shape = v.get("shape")
            if not isinstance(v["f64"], str) or not isinstance(shape, list):
                raise ValueError(f"step_state entry {k!r} is malformed")
            try:
                data = base64.b64decode(v["f64"], validate=True)
                out[k] = np.frombuffer(data, dtype="<f8").astype(float).reshape(shape)
            except (binascii.Error, ValueError, TypeError):
                raise ValueError(f"step_state entry {k!r} is malformed (not the base64 of {shape} doubles)") \
                    from None
        elif "float" in v:
            out[k] = float.fromhex(v["float"])
        elif "bool" in v:
            out[k] = bool(v["bool"])
        else:
            raise ValueError(f"step_state entry {k!r} is malformed")
    return out


def sample_finish(model, iterations: int, workers: int, n_tasks: int, seed) -> np.ndarray:
    """The injected delays of a run: ``(iterations, workers, n_tasks)`` finish times in model units.

    One generator seeded with ``seed`` draws every iteration at once (``model.sample``), so the master and a
    later replay (or the simulator) see the same numbers. ``model=None``: no injected delay (zeros).
    """
    if model is None:
        return np.zeros((iterations, workers, n_tasks))
    rng = np.random.default_rng(seed)
    return np.asarray(model.sample(rng, iterations, workers, n_tasks), dtype=float)


def predicted_times(code, finish: np.ndarray, time_scale: float) -> np.ndarray:
    """``(iterations,)`` iteration times the simulator predicts for these delays (seconds; ``inf`` = never)."""
    arr = arrival_times(code, finish * time_scale)
    return code.rule.completion(arr)
