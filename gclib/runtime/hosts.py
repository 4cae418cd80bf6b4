"""Where a job's ranks run and what starts them: SLURM's host lists (``SLURM_JOB_NODELIST``,
``SLURM_TASKS_PER_NODE``), MPICH hostfiles (checked line by line), and the choice between a Hydra ``mpiexec`` and
SLURM's ``srun`` (:func:`choose_launcher`). See ``docs/cluster.md``.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
from pathlib import Path

from gclib import checks, files
from gclib.runtime.preflight import check_mpiexec

#: How a job is started: ``auto`` (see :func:`choose_launcher`), a Hydra ``mpiexec``, or SLURM's ``srun``.
LAUNCHERS = ("auto", "mpiexec", "srun")


@dataclasses.dataclass(frozen=True)
class Launcher:
    """The program that starts the ranks, as :func:`choose_launcher` chose it.

    Attributes:
        kind: ``"mpiexec"`` (a Hydra ``mpiexec``: MPICH's, the ``mpich`` wheel's, Intel MPI's, MVAPICH's) or
            ``"srun"``.
        program: its path.
        hosts: for ``mpiexec`` inside a SLURM allocation without a hostfile: the allocation's hosts as Hydra's
            ``-hosts`` list (``node1:4,node2:4``); else ``None``.
        why: how it was chosen, in words (for messages).
    """

    kind: str
    program: str
    hosts: str | None = None
    why: str = ""


def find_mpiexec(env=None, python=None) -> str:
    """The ``mpiexec`` of the running interpreter's environment (the ``mpich`` wheel puts it next to python),
    else the first one on ``PATH`` (``env``: the environment to look in, default ``os.environ``; ``python``: the
    interpreter, default ``sys.executable``)."""
    here = Path(python or sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec", path=(os.environ if env is None else env).get("PATH", os.defpath))
    if not found:
        raise ValueError("no mpiexec found next to the Python interpreter or on PATH; install the 'mpi' extra "
                         "(mpi4py + mpich), or give the site's with --mpiexec PATH")
    return found


def expand_nodelist(text: str) -> list[str]:
    """SLURM's compressed host list (``node[01-03,07],gpu1``) as host names (``node01 node02 node03 node07
    gpu1``), the way ``scontrol show hostnames`` expands it (ranges keep their zero padding)."""
    hosts, i, n = [], 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in ",[":
            j += 1
        prefix = text[i:j]
        if j < n and text[j] == "[":
            k = text.find("]", j)
            if k < 0:
                raise ValueError(f"SLURM host list {text!r}: unclosed '['")
            suffix_end = k + 1
            while suffix_end < n and text[suffix_end] != ",":
                suffix_end += 1
            suffix = text[k + 1:suffix_end]
            if "[" in suffix:
                raise ValueError(f"SLURM host list {text!r}: one bracket per name is supported")
            for part in text[j + 1:k].split(","):
                lo, sep, hi = part.partition("-")
                if not lo.isdigit() or (sep and not hi.isdigit()):
                    raise ValueError(f"SLURM host list {text!r}: bad range {part!r}")
                for v in range(int(lo), int(hi or lo) + 1):
                    hosts.append(f"{prefix}{v:0{len(lo)}d}{suffix}")
            i = suffix_end + 1
        else:
            if prefix:
                hosts.append(prefix)
            i = j + 1
    return hosts


def expand_tasks_per_node(text: str) -> list[int]:
    """SLURM's ``SLURM_TASKS_PER_NODE`` (``2(x3),1``) as one count per node (``2 2 2 1``)."""
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", item)
        if not m:
            raise ValueError(f"SLURM_TASKS_PER_NODE {text!r}: bad item {item!r}")
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def slurm_allocation(env=None) -> dict | None:
    """The SLURM allocation this process runs in (``SLURM_JOB_ID`` and ``SLURM_JOB_NODELIST`` or
    ``SLURM_NODELIST`` set), else ``None``: ``{"job": id, "hosts": [(host, tasks), ...], "tasks": total}``.
    Tasks per host come from ``SLURM_TASKS_PER_NODE``; the total from ``SLURM_NTASKS`` when set."""
    env = os.environ if env is None else env
    job = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not job or not nodelist:
        return None
    nodes = expand_nodelist(nodelist)
    per = expand_tasks_per_node(env["SLURM_TASKS_PER_NODE"]) if env.get("SLURM_TASKS_PER_NODE") else [1] * len(nodes)
    if len(per) != len(nodes):
        raise ValueError(f"SLURM_TASKS_PER_NODE {env['SLURM_TASKS_PER_NODE']!r} does not give one count per host "
                         f"of {nodelist!r} ({len(nodes)} hosts)")
    ntasks = env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS")
    total = int(ntasks) if ntasks and ntasks.isdigit() else sum(per)
    return {"job": job, "hosts": list(zip(nodes, per)), "tasks": total}


def choose_launcher(launcher: str = "auto", mpiexec=None, hosts=None, ranks: int | None = None, env=None,
                    python=None) -> Launcher:
    """The program that starts a job of ``ranks`` ranks.

    * ``mpiexec``: ``mpiexec`` (a path, the site's), else the ``mpich`` wheel's next to ``python``, else the first
      ``mpiexec`` on ``PATH``. With a hostfile (``hosts``) it gets ``-f FILE``; else, inside a SLURM allocation,
      the allocation's hosts (``-hosts node1:N1,...``).
    * ``srun``: SLURM's ``srun`` on ``PATH``, inside an allocation (it places the ranks on the allocation's
      hosts; no ``hosts``, no ``mpiexec``).
    * ``auto``: ``mpiexec`` as above when one is given or found, else ``srun`` inside a SLURM allocation.

    Inside an allocation, a job needs no more ranks than its tasks. ``env`` is the environment to read
    (``os.environ``), ``python`` the interpreter whose wheel ``mpiexec`` is looked for (``sys.executable``).
    Raises ``ValueError`` (one line) when what is asked for is missing.
    """
    env = os.environ if env is None else env
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    if launcher == "srun" and mpiexec is not None:
        raise ValueError("launcher srun starts the ranks itself: do not give mpiexec with it")
    if mpiexec is not None:
        mpiexec = check_mpiexec("mpiexec", mpiexec)
    alloc = slurm_allocation(env)
    path = env.get("PATH", os.defpath)
    if launcher == "auto":
        if mpiexec is not None or hosts is not None:
            launcher = "mpiexec"
        else:
            try:
                mpiexec = find_mpiexec(env, python)
                launcher = "mpiexec"
            except ValueError:
                if alloc is None or not shutil.which("srun", path=path):
                    raise
                launcher = "srun"
    if launcher == "srun":
        if hosts is not None:
            raise ValueError("launcher srun runs on the SLURM allocation's hosts: do not give a hostfile with it")
        if alloc is None:
            raise ValueError("launcher srun needs a SLURM allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST are not "
                             "set; run inside sbatch or salloc)")
        srun = shutil.which("srun", path=path)
        if not srun:
            raise ValueError("launcher srun: no srun on PATH")
        _check_tasks(alloc, ranks)
        return Launcher("srun", srun, why=f"srun in SLURM job {alloc['job']}")
    prog = mpiexec or find_mpiexec(env, python)
    if hosts is None and alloc is not None:
        _check_tasks(alloc, ranks)
        listed = ",".join(f"{h}:{n}" for h, n in alloc["hosts"])
        return Launcher("mpiexec", prog, hosts=listed, why=f"mpiexec on the hosts of SLURM job {alloc['job']}")
    return Launcher("mpiexec", prog, why="mpiexec")


def _check_tasks(alloc, ranks):
    if ranks is not None and ranks > alloc["tasks"]:
        raise ValueError(f"the run needs {ranks} MPI ranks (1 master + {ranks - 1} workers) but SLURM job "
                         f"{alloc['job']} has {alloc['tasks']} tasks; allocate at least {ranks} (sbatch --ntasks "
                         f"{ranks})")



#: The most a hostfile may hold (a line per host), checked before it is read.
HOSTFILE_BUDGET = files.Budget("a hostfile", files.MIB, lines=100_000, constant="gclib.runtime.hosts.HOSTFILE_BUDGET")
#: A host name of a hostfile: letters, digits, '.', '-' and '_', starting and ending with a letter, digit or '_'
#: (so never an option of ``ssh``), at most 253 characters (DNS names, IPv4 addresses, cluster node names).
HOST_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9_])?")
#: A Hydra option after a host in a hostfile: ``name=value`` without spaces or shell characters.
HOST_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9._:@/+,-]+")


def check_hostfile(name: str, path) -> Path:
    """Check an MPICH hostfile: an existing, readable, regular text file whose every line (``#`` starts a comment)
    is ``HOST`` or ``HOST:N`` with ``HOST`` a host name (:data:`HOST_NAME`) and ``N`` a positive number of
    processes, optionally followed by Hydra options ``name=value`` (:data:`HOST_OPTION`); at least one host.
    Returns the path; raises ``ValueError`` naming ``name``, the file, the line and what is wrong (instead of an
    ``mpiexec`` failure), never what the line holds (the file may be any file). ``name`` is ``None`` for the
    option's check (``checks.option``)."""
    p = checks.input_path(name, path, kind="file", must_exist=True)
    subject = f"{name} {str(path)!r}" if name else repr(str(path))
    try:
        text = files.read_text(name, p, HOSTFILE_BUDGET, expected="a text hostfile: HOST or HOST:N per line").decode()
    except files.FileRefused as e:
        raise ValueError(f"{subject}: {e.why()}") from None
    hosts = 0
    for no, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, sep, count = words[0].partition(":")
        if not HOST_NAME.fullmatch(host):
            raise ValueError(f"{subject}: line {no} must start with a host name (letters, digits, '.', '-' and '_', "
                             f"not starting with '-' or '.'), then optionally :N")
        if sep and not (count.isdigit() and int(count) > 0):
            raise ValueError(f"{subject}: line {no} must be HOST or HOST:N with N a positive number of processes")
        if not all(HOST_OPTION.fullmatch(w) for w in words[1:]):
            raise ValueError(f"{subject}: line {no} may follow its host only with Hydra options name=value (no "
                             f"spaces or shell characters in a value)")
        hosts += 1
    if not hosts:
        raise ValueError(f"{subject} names no host")
    return p
