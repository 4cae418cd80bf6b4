"""Command line: ``gclib list | simulate | verify | reproduce`` (also ``python -m gclib ...``).

Bad arguments print one line on stderr and exit with code 2; a failed verification exits with 1.
"""
from __future__ import annotations

import argparse
import json
import sys

from . import schemes as sch
from .stragglers import MODELS, Persistent, make_model

EXIT_FAIL, EXIT_USAGE = 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        print(f"gclib: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _add_scheme_args(p):
    p.add_argument("--scheme", required=True, choices=sorted(sch.SCHEMES), help="the gradient code")
    for name, (typ, default, hlp) in sch.PARAMS.items():
        flag = "--" + name.replace("_", "-")
        if typ is bool:
            p.add_argument(flag, action="store_true", help=hlp)
        else:
            p.add_argument(flag, type=typ, default=None, help=f"{hlp} (default {default})" if default is not None
                           else hlp)


def add_model_args(p):
    """Compute-time model options, shared by every command that samples worker times."""
    p.add_argument("--model", default="shifted-exp", choices=sorted(MODELS), help="compute-time model")
    p.add_argument("--mu", type=float, default=10.0, help="shifted-exp: rate of the exponential part")
    p.add_argument("--alpha", type=float, default=0.01, help="shifted-exp: shift per partial gradient")
    p.add_argument("--rate", type=float, default=1.0, help="exp: rate")
    p.add_argument("--scale", type=float, default=1.0, help="pareto: scale (minimum time)")
    p.add_argument("--shape", type=float, default=2.0, help="pareto: shape (tail index)")
    p.add_argument("--per-task", action="store_true",
                   help="independent time per partial gradient (default: one draw per worker, task j at j*X)")
    p.add_argument("--persistent", type=int, default=0,
                   help="number of workers, drawn at random per trial, that never answer")


def model_from_args(a):
    model = make_model(a.model, mu=a.mu, alpha=a.alpha, rate=a.rate, scale=a.scale, shape=a.shape,
                       per_task=a.per_task)
    if a.persistent:
        model = Persistent(model, count=a.persistent)
    return model


def code_from_args(a):
    kw = {k: getattr(a, k) for k in sch.PARAMS if getattr(a, k, None) not in (None, False)}
    return sch.build(a.scheme, **kw)


def cmd_list(a):
    for name, s in sorted(sch.SCHEMES.items()):
        print(f"{name:24s} {s.help}  [{s.paper}]  params: {', '.join(s.params)}")
    return 0


def cmd_simulate(a):
    from .simulate import Communication, simulate

    code = code_from_args(a)
    model = model_from_args(a)
    comm = None
    if a.latency or a.bandwidth:
        comm = Communication(latency=a.latency or 0.0, bandwidth=a.bandwidth or float("inf"))
    res = simulate(code, model, trials=a.trials, seed=a.seed if a.seed is not None else 0, comm=comm,
                   progress=not a.json and a.trials >= 100_000)
    out = res.summary()
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{out['scheme']}: mean time {out['mean_time']:.5g} +/- {out['ci95_time']:.2g}, "
              f"messages {out['mean_messages']:.4g}, computations {out['mean_computations']:.4g}, "
              f"volume {out['mean_volume']:.4g} ({out['trials']} trials, {out['failed']} never decoded)")
    return 0


def cmd_verify(a):
    from .symbolic import verify

    a.exact = True
    code = code_from_args(a)
    res = verify(code, messages=a.messages, stragglers=a.drop)
    print(res.message())
    return 0 if res.ok else EXIT_FAIL


def cmd_reproduce(a):
    from .reproduce import main as reproduce_main

    return reproduce_main(profile=a.profile, only=a.only)


#: Extra subcommands: name -> (add_arguments(parser), run(args)). Other modules may add to it.
COMMANDS: dict = {}

# ---- issue 5 (lazy aggregation): `gclib train` -------------------------------------------------------------
def _train_add(p):
    from .learning.train_cli import add_train_args

    add_train_args(p)


def _train_run(a):
    from .learning.train_cli import cmd_train

    return cmd_train(a)


COMMANDS["train"] = (_train_add, _train_run)
# ---- end issue 5 ---------------------------------------------------------------------------------------------


def build_parser():
    p = _Parser(prog="gclib", description="Gradient coding: build, verify, simulate and run codes.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    sub.add_parser("list", help="list the schemes and the paper each comes from").set_defaults(fn=cmd_list)

    s = sub.add_parser("simulate", help="Monte Carlo of completion time, communication and computation")
    _add_scheme_args(s)
    add_model_args(s)
    s.add_argument("--trials", type=int, default=10_000)
    s.add_argument("--latency", type=float, default=0.0, help="communication: seconds per message")
    s.add_argument("--bandwidth", type=float, default=None, help="communication: gradients per second")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(fn=cmd_simulate)

    v = sub.add_parser("verify", help="exact (SymPy) check that every admissible pattern decodes")
    _add_scheme_args(v)
    v.add_argument("--messages", type=int, default=None,
                   help="check every set of this many messages instead of every straggler pattern")
    v.add_argument("--drop", type=int, default=None,
                   help="check patterns of this many stragglers instead of the code's s (more than s must fail)")
    v.set_defaults(fn=cmd_verify)

    r = sub.add_parser("reproduce", help="run every notebook through papermill and write figures/")
    r.add_argument("--profile", default="full", help="parameter profile (full or quick)")
    r.add_argument("--only", nargs="*", default=None, help="notebook names (stems) to run")
    r.set_defaults(fn=cmd_reproduce)

    for name, (add, run) in COMMANDS.items():
        c = sub.add_parser(name)
        add(c)
        c.set_defaults(fn=run)
    return p


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    try:
        return a.fn(a)
    except ValueError as e:
        print(f"gclib: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


# ---------------------------------------------------------------------------------------------- issue 6: runtime
# `gclib run`: a real distributed run over MPI (gclib/runtime/cli.py).
from .runtime.cli import add_run_args, cmd_run  # noqa: E402

COMMANDS["run"] = (add_run_args, cmd_run)
