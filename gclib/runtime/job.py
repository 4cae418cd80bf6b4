"""One ``mpiexec`` job, from its start to its end: start it, hand the spec to rank 0, follow what the ranks say,
pass the deaths on to the master, and kill the job when it cannot go on; :func:`run_job` starts it again when its
start-up was held.

Three threads run beside the main thread, one per pipe of ``mpiexec``:

* :meth:`Job.read_master` reads the job's standard output, where the master's lines are (after
  :data:`~gclib.runtime.protocol.MARK`: rank 0 ready for the spec, each iteration with the update's state, the end),
  and any rank's report that its model failed (:func:`gclib.runtime.protocol.report_failure`);
* :meth:`Job.read_guards` reads the job's standard error, copies it to ``stderr.txt`` in the run directory, and
  takes the guards' reports of a rank that died or was stopped (:mod:`gclib.runtime.guard`), each queued as a notice
  for the master;
* :meth:`Job.feed_rank0` writes rank 0's standard input: the pickled spec, a window at a time, then the notices;
  after a run's end, the next spec of a series, or a length of 0 when none follows (:mod:`gclib.runtime.rank`).

A job runs one spec (:func:`gclib.runtime.launcher.launch`) or several one after the other
(:func:`gclib.runtime.launcher.launch_series`): the next one starts only after a run that ended cleanly (status
``ok``, no worker dead or stopped), and what each finished run said is kept in :attr:`Job.finished`.

The main thread watches the job (:meth:`Job.watch`): a dead master, a start-up that a rank holds, a job that does
not exit after the master's end, and the job timeout end it (:meth:`Job.kill`). What the job comes to is
:func:`gclib.runtime.result.job_result`'s.
"""
from __future__ import annotations

import json
import math
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

from gclib.runtime.command import ROOT, job_env, mpiexec_command
from gclib.runtime.guard import REPORT, STOPPED
from gclib.runtime.processes import hydra_files, job_processes, remove_files, shm_segments
from gclib.runtime.protocol import MARK
from gclib.runtime.result import job_result
from gclib.runtime.signals import Interrupted, catch_stop_signals, restore, signal_name

#: Seconds the job may take to exit after the master reported its end (``MPI_Finalize``) before it is killed.
END_GRACE = 10.0
#: ... when a worker never said goodbye (stopped, or unreachable): the job cannot exit by itself, and the ranks
#: that said it leave without ``MPI_Finalize``, at once.
END_GRACE_SILENT = 2.0
#: Times a job is started again when a rank died by a signal, was stopped, or did not get through ``MPI_Init``
#: in time (a collective: the others would wait there for it forever). Nothing is lost: no iteration ran.
START_RETRIES = 2
#: Default seconds from the job's start until every rank is through ``MPI_Init`` (see
#: :func:`gclib.runtime.launcher.launch`).
STARTUP_TIMEOUT = 60.0
#: Seconds a rank may stay stopped (SIGSTOP, ...) before every rank is through ``MPI_Init`` before the job is
#: started again (the other ranks wait for it there; a short stop, a debugger's, is waited out).
STOPPED_AT_START = 1.0
#: Seconds between two looks for the topology files of a job's Hydra proxies (:meth:`Job.look_for_topology`).
TOPOLOGY_EVERY = 0.25
#: Seconds after rank 0's word that every rank is through ``MPI_Init`` that the launcher still looks for MPICH's
#: shared-memory files of the job's ranks on this host, when it has found none (:meth:`Job.look_for_segments`).
SEGMENTS_AFTER_INIT = 2.0
#: Why :meth:`Job.watch` killed a job after which it is started again (nothing ran; see :func:`run_job`).
RESTARTABLE = ("startup-stopped", "startup-timeout")
#: Rank 0's input after a run's end (:meth:`Job.feed_rank0`): the next spec of the series, or that none follows.
NEXT = "the next spec"
NONE_FOLLOWS = b"0\n"


def _events(init=None) -> dict:
    """What the master says of one run: its iterations' ``records``, ``state`` and ``tasks``, and the last line
    of each other kind (``init`` is the job's: rank 0 says it once)."""
    return {"records": [], "state": None, "init": init, "start": None, "end": None, "tasks": [], "failed": None}


class FinishedRun:
    """A run of a series that ended cleanly before the job's last one, as :func:`gclib.runtime.result.job_result`
    reads a job: its spec, what the master said, and its seconds from its spec's sending to its end (the first
    one's from the job's start). No rank died or stopped, the launcher killed nothing, and the job's exit code is
    not the run's (``proc`` is ``None``)."""

    deaths, stopped, master_death, killed, interrupted, proc = {}, {}, None, None, None, None

    def __init__(self, spec, events: dict, seconds: float):
        self.spec, self.events, self.seconds = spec, events, seconds


def run_job(spec, pickled, run_dir, hosts, exe, job_timeout, progress, prior, args, extra=(),
            startup_timeout=STARTUP_TIMEOUT):
    """Run the MPI job, started again (up to ``START_RETRIES`` times) when a rank was killed by a signal, was
    stopped, or did not get through ``MPI_Init`` within ``startup_timeout`` seconds. ``spec`` and ``pickled`` are
    one spec, or lists of a series' specs (one after the other in the job). Returns ``(job, restarts)``: the job
    that ran and, per job started again, what happened to its ranks (``{worker: what}``, ``{}`` when nobody knows
    which rank held the start-up)."""
    restarts = []  # what stopped each start-up, before the job that ran
    while True:
        job = Job(spec, run_dir, hosts, exe, job_timeout, progress, append=bool(restarts), extra=extra,
                  startup_timeout=startup_timeout)
        try:
            job.run(pickled)
        except BaseException:  # a bug of ours: no rank left, and what the job reported is kept
            job.kill()
            try:
                job_result(job, *prior).save(run_dir / "state.json", args=args)
            except Exception:
                pass
            raise
        restartable = (job.killed in RESTARTABLE or
                       (job.killed == "startup" and all(d.get("signal") for d in job.deaths.values())))
        if not (restartable and len(restarts) < START_RETRIES):
            return job, restarts
        restarts.append(job.startup_report())


class Job:
    """One ``mpiexec`` job and what it said.

    What the master said is in :attr:`events` (``records``, ``state`` and ``tasks`` of the iterations, and the last
    line of each other kind: ``init``, ``start``, ``end``, ...); what the guards said in :attr:`deaths` (worker ->
    its death), :attr:`stopped` (rank -> (its stop, when heard), ranks stopped now) and :attr:`master_death`; why
    the launcher killed the job in :attr:`killed` (``None``: it ended by itself), and :attr:`interrupted` the stop
    signal that ended it (``None``: none).
    """

    def __init__(self, spec, run_dir, hosts, exe, job_timeout, progress, append=False, extra=(),
                 startup_timeout=STARTUP_TIMEOUT):
        self.specs = list(spec) if isinstance(spec, list) else [spec]  # the series' specs (one for a run alone)
        self.index = 0  # the run under way: self.specs[self.index]
        self.finished = []  # a FinishedRun per run that ended cleanly before it
        self.pickled = []
        spec = self.specs[0]
        self.spec, self.run_dir, self.job_timeout, self.progress = spec, Path(run_dir), job_timeout, progress
        self.startup_timeout = startup_timeout
        self.append = append  # a job started again keeps the stderr of the earlier attempts
        # the job's name in the ranks' command lines (they never read it): how job_processes finds them
        self.cmd = mpiexec_command(self.run_dir, spec.ranks, hosts, exe, extra=extra)
        self.events = _events()
        self.deaths = {}  # worker -> what its guard reported
        self.stopped = {}  # rank -> (what its guard reported, when we heard it): ranks stopped now (SIGSTOP, ...)
        self.master_death = None  # what the master's guard reported
        self.other = []  # stdout lines that are not ours (mpiexec's own report)
        self.lock = threading.Lock()
        self.proc = None
        self.killed = None  # why we killed the job, if we did
        self.interrupted = None
        self.killing = False  # once we kill the job, the guards' reports are our own doing
        self.seconds = math.nan
        self.window = None  # bytes rank 0 takes on its standard input at a time (its "init" line says)
        self.acked = 0  # bytes of the spec rank 0 has read
        self.heard = threading.Condition(self.lock)
        self.notices = queue.Queue()  # lines for the master's standard input (deaths), None to stop
        self.topology = None  # Hydra's topology files of this job, once found (removed after it: a killed proxy
        # leaves them behind); set() when there are none to find
        self.looked = -math.inf
        self.segments = set()  # MPICH's shared-memory files of this job's ranks on this host (removed after the
        # job: ranks that leave without MPI_Finalize leave them in memory), looked for until found
        self.init_at = None  # when rank 0's word that every rank is through MPI_Init came
        self.segments_done = False  # no more looks for them

    # ------------------------------------------------------------------ the job
    def run(self, pickled) -> None:
        """Start the job, run the three threads, watch it to its end (or kill it); the outcome is in the job's
        attributes. ``pickled``: the pickled spec, or the list of a series' pickled specs."""
        self.run_began = time.perf_counter()
        self.pickled = list(pickled) if isinstance(pickled, list) else [pickled]
        handlers = catch_stop_signals()
        threads = []
        try:
            with open(self.run_dir / "stderr.txt", "a" if self.append else "w") as err:
                try:
                    # the ranks start in the package's folder (which every host has), not in ours
                    self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                 stdin=subprocess.PIPE, text=True, env=job_env(), cwd=ROOT,
                                                 start_new_session=True)
                    threads = [threading.Thread(target=self.read_master, name="gclib-master-lines", daemon=True),
                               threading.Thread(target=self.read_guards, args=(err,), name="gclib-guard-lines",
                                                daemon=True),
                               threading.Thread(target=self.feed_rank0, name="gclib-rank0-input", daemon=True)]
                    for t in threads:
                        t.start()
                    self.killed = self.watch()
                except Interrupted as e:
                    self.interrupted = e.signum
                    self.kill()
                self.notices.put(None)
                for t in threads:
                    t.join(timeout=10)
                if self.proc is not None:
                    try:
                        self.proc.stdin.close()
                    except (OSError, ValueError):
                        pass
        finally:
            restore(handlers)
            remove_files(self.topology or ())
            remove_files(self.segments)
            self.seconds = time.perf_counter() - self.run_began  # (the last run's: the job's when alone)

    def watch(self) -> str | None:
        """Wait for the job to end; kill it when it cannot go on. Returns why it was killed (``"master"``: the
        master died; ``"startup"``: a worker died before every rank was through ``MPI_Init``;
        ``"startup-stopped"``, ``"startup-timeout"``: a rank stopped there, or not every rank through it in time;
        ``"end"``: the job did not exit after the master's end; ``"timeout"``: the job timeout; ``"failed"``: a
        rank's model failed, and it said so), or ``None`` when it ended by itself."""
        started = time.monotonic()
        deadline = started + self.job_timeout
        ended = grace = None
        while True:
            try:
                self.proc.wait(timeout=0.1)
                return None
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            why = None
            self.look_for_topology(now)
            self.look_for_segments(now)
            if self.events["failed"] is not None and self.events["end"] is None:
                why = "failed"  # a rank's model failed (it said so): the run cannot go on
            elif self.master_death is not None and self.events["end"] is None:
                why = "master"
            elif self.events["init"] is None:  # the other ranks wait in MPI_Init for any that is not there
                if self.deaths:
                    why = "startup"
                elif any(now - t > STOPPED_AT_START for _, t in list(self.stopped.values())):
                    why = "startup-stopped"
                elif now - started > self.startup_timeout:
                    why = "startup-timeout"
            if why is None and self.events["end"] is not None and ended is None:
                ended = now
                end = self.events["end"]
                # a worker that never said goodbye (and is not known dead) keeps the job from exiting by itself
                silent = set(end.get("dead_workers") or []) - set(self.deaths)
                grace = END_GRACE_SILENT if silent else END_GRACE + self.spec.stop_timeout
            if why is None and ended is not None and now - ended > grace:
                why = "end"  # the result is complete; the job did not exit (a finalize that hangs)
            if why is None and now > deadline:
                why = "timeout"
            if why is not None:
                self.kill()
                return why

    def look_for_topology(self, now: float) -> None:
        """Note the topology files this job's Hydra proxies hold (:attr:`topology`): looked for every
        :data:`TOPOLOGY_EVERY` seconds from the start until found, or until a look after every rank is through
        ``MPI_Init`` finds none (no local proxy wrote one: srun, or remote hosts only)."""
        if self.topology is not None or now - self.looked < TOPOLOGY_EVERY:
            return
        self.looked = now
        found = hydra_files(self.proc.pid)
        if found or self.events["init"] is not None:
            self.topology = found

    def look_for_segments(self, now: float) -> None:
        """Note MPICH's shared-memory files that this job's ranks on this host map (:attr:`segments`), at every
        watch from the job's start: until a look after rank 0 said every rank is through ``MPI_Init`` (where MPICH
        makes them) finds some, or for :data:`SEGMENTS_AFTER_INIT` seconds after that word (a job without a rank
        here maps none). Not only at that word: it can reach the launcher late, when a short run's ranks are gone."""
        if self.segments_done:
            return
        self.segments |= shm_segments(job_processes(self.run_dir))
        init = self.init_at
        self.segments_done = init is not None and (bool(self.segments) or now - init > SEGMENTS_AFTER_INIT)

    def kill(self) -> None:
        """Kill the job: mpiexec (Hydra forwards the signal to its proxies, which kill the ranks), then any rank
        process of this run still on this host."""
        self.killing = True
        proc = self.proc
        if proc is not None and proc.poll() is None:
            self.topology = (self.topology or set()) | hydra_files(proc.pid)  # what the proxies hold, before they die
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        for pid in job_processes(self.run_dir):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def startup_report(self) -> dict:
        """``{worker: what}`` of a start-up that was killed: the workers that died by a signal, and those whose
        process was stopped (``{"stopped": "SIGSTOP", ...}``)."""
        out = {w: dict(d, restarted=True) for w, d in self.deaths.items()}
        for rank, (info, _) in self.stopped.items():
            if rank > 0 and rank - 1 not in out:
                out[rank - 1] = {"signal": None, "name": None, "code": None, **info, "restarted": True}
        return out

    # ------------------------------------------------------------------ standard output: the master's lines
    def read_master(self) -> None:
        """Thread: read the job's standard output to its end. The master's lines go to :attr:`events` (an
        iteration's record also to the ``progress`` callback; rank 0's readiness for the spec wakes
        :meth:`feed_rank0`); any other line to :attr:`other`."""
        for line in self.proc.stdout:
            at = line.find(MARK)
            if at < 0:
                self.other.append(line)
                continue
            try:
                ev = json.loads(line[at + len(MARK):])
                kind = ev["kind"]
            except (ValueError, KeyError, TypeError):  # a line cut by another rank's output: not ours to trust
                self.other.append(line)
                continue
            if kind in ("init", "spec"):  # rank 0 is ready for (more of) the spec
                with self.heard:
                    if kind == "init":
                        self.window = int(ev.get("window") or 4096)
                    else:
                        self.acked = max(self.acked, int(ev.get("received") or 0))
                    self.heard.notify_all()
            if kind == "iter":
                with self.lock:
                    self.events["records"].append(ev["record"])
                    self.events["state"] = ev.get("state")
                    self.events["tasks"].extend(ev.get("tasks") or [])
                if self.progress:
                    try:
                        self.progress(ev["record"])
                    except Exception:  # a broken callback must not stop the reader
                        pass
            elif kind == "failed":  # a rank's model failed (gclib.runtime.protocol.report_failure): the first says
                if self.events["failed"] is None:
                    self.events["failed"] = ev
            elif kind == "end":
                self.run_ended(ev)
            else:
                self.events[kind] = ev
                if kind == "init":
                    self.init_at = time.monotonic()

    def run_ended(self, end: dict) -> None:
        """The master's end of the run under way: when it ended cleanly and a spec of the series follows, keep
        the run in :attr:`finished` and start the next one; else the job's end. Where rank 0 waits for a word
        (``reads_next``), it hears which: the next spec, or that none follows (:meth:`feed_rank0`); else nothing is
        written to it (it is leaving, and Hydra fails a job whose input reaches a rank that is gone)."""
        reads = bool(end.get("reads_next"))
        with self.lock:
            self.events["tasks"].extend(end.get("tasks") or [])
            clean = (reads and end.get("status") == "ok" and not end.get("dead_workers") and not self.deaths
                     and not self.stopped and self.events["failed"] is None and not self.killing)
            if clean and self.index + 1 < len(self.specs):
                now = time.perf_counter()
                self.finished.append(FinishedRun(self.spec, dict(self.events, end=end), now - self.run_began))
                self.index += 1
                self.spec = self.specs[self.index]
                self.events = _events(init=self.events["init"])
                self.run_began = now
                self.notices.put(NEXT)
                return
            self.events["end"] = end
        if reads:
            self.notices.put(NONE_FOLLOWS)

    # ------------------------------------------------------------------ standard error: the guards' lines
    def read_guards(self, err) -> None:
        """Thread: copy the job's standard error to ``err`` (``stderr.txt``) to its end, and take each guard's
        line: a rank stopped or continued (:meth:`guard_stopped`), a rank that died (:meth:`guard_died`)."""
        for line in self.proc.stderr:
            err.write(line)
            err.flush()
            at = line.find(STOPPED)
            if at >= 0:
                self.guard_stopped(line[at + len(STOPPED):])
                continue
            at = line.find(REPORT)
            if at >= 0:
                self.guard_died(line[at + len(REPORT):])

    def guard_died(self, text) -> None:
        """A guard's report that its rank died: the master's death ends the run (:meth:`watch` kills the job); a
        worker's is kept in :attr:`deaths` and, the first time, passed on to the master."""
        try:
            rep = json.loads(text)
            w = int(rep["rank"]) - 1
        except (ValueError, KeyError, TypeError):
            return
        if self.killing:
            return
        sig = rep.get("signal")
        info = {"signal": sig, "name": signal_name(sig) if sig else None, "code": rep.get("code"),
                "pid": rep.get("pid"), "host": rep.get("host"),
                "iteration": self.spec.start + len(self.events["records"])}
        if w < 0:
            if self.events["end"] is None:
                self.master_death = info
            return
        with self.lock:
            new = w not in self.deaths
            self.deaths.setdefault(w, info)
            self.stopped.pop(w + 1, None)
        if new:  # tell the master (it reads its standard input between polls)
            self.notices.put(json.dumps({"worker": w, **info}).encode() + b"\n")

    def guard_stopped(self, text) -> None:
        """A guard's line: its rank was stopped by a signal, or continued. Kept in :attr:`stopped`, and passed on
        to the master (a stopped worker is silent at once)."""
        try:
            rep = json.loads(text)
            rank = int(rep["rank"])
        except (ValueError, KeyError, TypeError):
            return
        if self.killing:
            return
        how = rep.get("stopped")
        info = {"stopped": how, "pid": rep.get("pid"), "host": rep.get("host"),
                "iteration": self.spec.start + len(self.events["records"])}
        with self.lock:
            if how:
                self.stopped[rank] = (info, time.monotonic())
            else:
                self.stopped.pop(rank, None)
        if rank > 0:
            note = {"worker": rank - 1, **({"stopped": how} if how else {"continued": True})}
            self.notices.put(json.dumps(note).encode() + b"\n")

    # ------------------------------------------------------------------ standard input: rank 0's
    def feed_rank0(self) -> None:
        """Thread: write to rank 0's standard input (through ``mpiexec``): the first spec once rank 0 is through
        ``MPI_Init`` (:meth:`send_spec`); then the notices as they come, and after each run's end the next spec
        (:data:`NEXT`) or a length of 0 (:data:`NONE_FOLLOWS`), until ``None`` or the job's end."""
        out = self.proc.stdin.buffer  # bytes, under the text wrapper
        try:
            if not self._heard(lambda: self.window is not None) or not self.send_spec(out, self.pickled[0]):
                return
            while True:
                line = self.notices.get()
                if line is None:
                    return
                if line is NEXT:
                    if not self.send_spec(out, self.pickled[self.index]):
                        return
                    continue
                out.write(line)
                out.flush()
        except (OSError, ValueError):  # the job ended: nobody reads any more
            return

    def send_spec(self, out, pickled: bytes) -> bool:
        """Write one pickled spec, a window at a time, each once rank 0 has read the one before (Hydra's proxy
        gives up when rank 0's pipe is full). False when the job ended first."""
        with self.lock:
            self.acked = 0
        window = self.window
        out.write(b"%d\n" % len(pickled))
        for at in range(0, len(pickled), window):
            piece = pickled[at:at + window]
            out.write(piece)
            out.flush()
            if not self._heard(lambda: self.acked >= at + len(piece)):
                return False
        return True

    def _heard(self, test) -> bool:
        """Wait until ``test()`` holds (under the lock): True; False when the job ended (or is being killed)
        first."""
        with self.heard:
            while not test():
                if self.proc.poll() is not None or self.killing:
                    return False
                self.heard.wait(0.1)
            return True
