"""The command line the launcher builds for each way of starting the ranks: the mpich wheel's mpiexec, the site's
(--mpiexec PATH), the first on PATH, a hostfile, and a SLURM allocation with srun and with mpiexec. Environments,
PATH and programs are fakes in tmp_path: nothing is started."""
import sys
from pathlib import Path

import pytest

from gclib.runtime.command import mpiexec_command
from gclib.runtime.hosts import (Launcher, choose_launcher, expand_nodelist, expand_tasks_per_node,
                                 slurm_allocation)

GUARD = str(Path(__file__).resolve().parents[1] / "gclib" / "runtime" / "guard.py")


def program(folder: Path, name: str) -> Path:
    """A fake program; an ``mpiexec`` answers ``--version`` as Hydra's does."""
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text("#!/bin/sh\n" + ("echo 'HYDRA build details:'\n" if name == "mpiexec" else "") + "exit 0\n")
    p.chmod(0o755)
    return p


@pytest.fixture
def fake(tmp_path):
    """A venv with the mpich wheel's mpiexec, one without, and a PATH folder (site programs)."""
    wheel_python = program(tmp_path / "wheel" / "bin", "python")
    program(tmp_path / "wheel" / "bin", "mpiexec")
    bare_python = program(tmp_path / "bare" / "bin", "python")
    site = tmp_path / "site" / "bin"
    site.mkdir(parents=True)
    return {"wheel": wheel_python, "bare": bare_python, "site": site, "tmp": tmp_path}


SLURM = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "node[01-02],gpu7", "SLURM_TASKS_PER_NODE": "4(x2),1",
         "SLURM_NTASKS": "9"}


def command(how, ranks=9, hosts=None):
    return mpiexec_command("/runs/spec.pkl", ranks, hosts=hosts, mpiexec=how)


def tail():
    return [sys.executable, "-I", GUARD, "/runs/spec.pkl"]


def test_the_wheels_mpiexec_comes_first(fake):
    program(fake["site"], "mpiexec")
    how = choose_launcher(env={"PATH": str(fake["site"])}, python=fake["wheel"], ranks=9)
    wheel = str(fake["wheel"].parent / "mpiexec")
    assert how == Launcher("mpiexec", wheel, None, "mpiexec")
    assert command(how) == [wheel, "-disable-auto-cleanup", "-n", "9", *tail()]


def test_the_sites_mpiexec_given_by_path(fake):
    site = program(fake["tmp"] / "opt" / "mpich" / "bin", "mpiexec")
    how = choose_launcher(mpiexec=site, env={"PATH": ""}, python=fake["wheel"], ranks=9)
    assert command(how) == [str(site), "-disable-auto-cleanup", "-n", "9", *tail()]
    assert choose_launcher("mpiexec", mpiexec=str(site), env={"PATH": ""}, python=fake["wheel"]).program == str(site)


def test_without_the_wheel_the_first_mpiexec_on_path(fake):
    first = program(fake["tmp"] / "a", "mpiexec")
    program(fake["tmp"] / "b", "mpiexec")
    env = {"PATH": f"{fake['tmp'] / 'empty'}:{first.parent}:{fake['tmp'] / 'b'}"}
    how = choose_launcher(env=env, python=fake["bare"], ranks=5)
    assert command(how, ranks=5) == [str(first), "-disable-auto-cleanup", "-n", "5", *tail()]


def test_a_hostfile_is_passed_with_f(fake):
    hosts = fake["tmp"] / "hosts"
    hosts.write_text("node1:4\nnode2:5\n")
    how = choose_launcher(hosts=hosts, env={"PATH": ""}, python=fake["wheel"], ranks=9)
    assert command(how, hosts=hosts) == [str(fake["wheel"].parent / "mpiexec"), "-disable-auto-cleanup", "-n", "9",
                                         "-f", str(hosts), *tail()]


def test_a_hostfile_beats_the_slurm_allocation(fake):
    hosts = fake["tmp"] / "hosts"
    hosts.write_text("node1:9\n")
    program(fake["site"], "srun")
    how = choose_launcher(hosts=hosts, env={**SLURM, "PATH": str(fake["site"])}, python=fake["wheel"], ranks=9)
    assert how.kind == "mpiexec" and how.hosts is None
    assert "-hosts" not in command(how, hosts=hosts)


def test_slurm_with_mpiexec_runs_on_the_allocations_hosts(fake):
    program(fake["site"], "srun")
    env = {**SLURM, "PATH": str(fake["site"])}
    for launcher in ("auto", "mpiexec"):
        how = choose_launcher(launcher, env=env, python=fake["wheel"], ranks=9)
        assert command(how) == [str(fake["wheel"].parent / "mpiexec"), "-disable-auto-cleanup", "-n", "9",
                                "-hosts", "node01:4,node02:4,gpu7:1", *tail()]


def test_slurm_with_srun(fake):
    srun = program(fake["site"], "srun")
    env = {**SLURM, "PATH": str(fake["site"])}
    how = choose_launcher("srun", env=env, python=fake["wheel"], ranks=9)
    assert command(how) == [str(srun), "--ntasks=9", "--kill-on-bad-exit=0", "--wait=0", *tail()]
    # auto: srun only when there is no mpiexec at all
    assert choose_launcher(env=env, python=fake["bare"], ranks=9).kind == "srun"
    program(fake["site"], "mpiexec")
    assert choose_launcher(env=env, python=fake["bare"], ranks=9).kind == "mpiexec"


@pytest.mark.parametrize("kw, env, message", [
    ({"launcher": "srun"}, {"PATH": ""}, "launcher srun needs a SLURM allocation"),
    ({"launcher": "srun"}, {**SLURM, "PATH": ""}, "launcher srun: no srun on PATH"),
    ({"launcher": "srun", "ranks": 10}, {**SLURM, "PATH": "SITE"}, "needs 10 MPI ranks"),
    ({"launcher": "mpiexec", "ranks": 10}, {**SLURM, "PATH": ""}, "SLURM job 4242 has 9 tasks"),
    ({"launcher": "srun", "mpiexec": "SITE/srun"}, {**SLURM, "PATH": "SITE"}, "do not give mpiexec"),
    ({"launcher": "mpirun"}, {"PATH": ""}, "launcher must be one of auto, mpiexec, srun, got 'mpirun'"),
    ({"mpiexec": "SITE/missing"}, {"PATH": ""}, "does not exist"),
    ({"mpiexec": "SITE/plain"}, {"PATH": ""}, "is not executable"),
    ({"mpiexec": "no-such-mpiexec"}, {"PATH": ""}, "is not a program on PATH"),
])
def test_what_is_missing_is_one_line(fake, kw, env, message):
    program(fake["site"], "srun")
    (fake["site"] / "plain").write_text("")
    kw = {k: v.replace("SITE", str(fake["site"])) if isinstance(v, str) else v for k, v in kw.items()}
    env = {k: v.replace("SITE", str(fake["site"])) for k, v in env.items()}
    with pytest.raises(ValueError, match=message) as e:
        choose_launcher(env=env, python=fake["wheel"], **{"ranks": 9, **kw})
    assert "\n" not in str(e.value)


def test_no_mpiexec_anywhere(fake):
    with pytest.raises(ValueError, match="no mpiexec found .* --mpiexec PATH"):
        choose_launcher(env={"PATH": str(fake["site"])}, python=fake["bare"])
    with pytest.raises(ValueError, match="do not give a hostfile"):
        choose_launcher("srun", hosts=fake["tmp"] / "hosts", env={"PATH": ""}, python=fake["bare"])


def test_slurm_host_lists():
    assert expand_nodelist("node[01-03,07],gpu1") == ["node01", "node02", "node03", "node07", "gpu1"]
    assert expand_nodelist("a[8-10]b,c") == ["a8b", "a9b", "a10b", "c"]
    assert expand_nodelist("single") == ["single"]
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    with pytest.raises(ValueError, match="unclosed"):
        expand_nodelist("node[1-2")
    with pytest.raises(ValueError, match="bad item"):
        expand_tasks_per_node("2(3)")
    assert slurm_allocation({"PATH": ""}) is None
    assert slurm_allocation({"SLURM_JOB_ID": "7", "SLURM_NODELIST": "n[1-2]"}) == {
        "job": "7", "hosts": [("n1", 1), ("n2", 1)], "tasks": 2}


def test_the_command_line_refuses_a_missing_launcher(tmp_path, capsys, monkeypatch):
    """``gclib run --launcher srun`` outside SLURM, and ``--mpiexec`` of a missing file: one line, exit 2, and
    nothing started."""
    from gclib.cli import main

    for k in list(SLURM) + ["SLURM_NODELIST", "SLURM_JOBID"]:
        monkeypatch.delenv(k, raising=False)
    base = ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--iterations", "2",
            "--run-dir", str(tmp_path / "run")]
    assert main(base + ["--launcher", "srun"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gclib: error:") and "launcher srun needs a SLURM allocation" in err and "\n" not in err
    with pytest.raises(SystemExit) as e:
        main(base + ["--mpiexec", str(tmp_path / "missing")])
    assert e.value.code == 2
    assert "argument --mpiexec:" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_guard_under_srun_finds_its_rank(monkeypatch):
    """srun sets SLURM_PROCID (and PMI_RANK only with a PMI plugin): the guard takes either."""
    from gclib.runtime.guard import env_rank

    for k in ("PMI_RANK", "PMI_ID", "SLURM_PROCID"):
        monkeypatch.delenv(k, raising=False)
    assert env_rank() is None
    monkeypatch.setenv("SLURM_PROCID", "3")
    assert env_rank() == 3
    monkeypatch.setenv("PMI_RANK", "5")
    assert env_rank() == 5


def test_the_arm_without_guards_is_an_mpiexec_that_starts_the_ranks_program_itself(tmp_path):
    """benchmarks/faults_ab.py's arm without guards: an mpiexec wrapper that hands the real one the launcher's
    command line with the guard's words replaced by the rank's program (the runtime itself always starts guards)."""
    import subprocess

    from benchmarks.runtime_arms import unguarded_mpiexec

    real = tmp_path / "bin" / "mpiexec"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")  # says what it was given, a word a line
    real.chmod(0o755)
    cmd = command(Launcher("mpiexec", "/opt/mpi/bin/mpiexec"))
    assert cmd[4:] == tail()  # the runtime's own command: every rank under its guard
    with unguarded_mpiexec(real) as exe:
        said = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, check=True).stdout.splitlines()
        assert said[:3] == ["-disable-auto-cleanup", "-n", "9"]
        assert said[3:] == [sys.executable, "-m", "gclib.runtime.rank", "/runs/spec.pkl"] and GUARD not in said
        assert subprocess.run([exe, "--version"], capture_output=True, text=True).stdout == "--version\n"
    assert not Path(exe).exists()  # removed on exit


def test_the_guards_table_in_the_docs_is_rendered_from_the_saved_benchmark():
    """docs/runtime.md's table of what the guards buy is the one benchmarks/faults_ab.py renders from its saved
    result (no number typed by hand)."""
    import json

    from benchmarks import faults_ab

    root = Path(__file__).resolve().parents[1]
    doc = json.loads((root / "benchmarks" / "faults_ab.json").read_text())
    text = (root / "docs" / "runtime.md").read_text()
    block = text[text.index(faults_ab.BEGIN) + len(faults_ab.BEGIN):text.index(faults_ab.END)]
    assert block.strip() == faults_ab.table(doc).strip()
    assert set(doc["scenarios"]) | set(doc["skipped"]) == set(faults_ab.SCENARIOS)
