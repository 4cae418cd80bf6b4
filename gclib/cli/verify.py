"""``gclib verify``: the exact (SymPy) check of one code (:func:`gclib.symbolic.verify`)."""
from __future__ import annotations

from . import options, registries


def add_parser(sub):
    from .. import checks

    p = sub.add_parser("verify", help="exact (SymPy) check that every admissible pattern decodes",
                       epilog=registries.epilog(models=False))
    options.add_scheme_args(p)
    p.add_argument("--messages", type=checks.option(checks.integer, low=1), default=None,
                   help="check every set of this many messages instead of every straggler pattern")
    p.add_argument("--drop", type=checks.option(checks.integer, low=0), default=None,
                   help="check patterns of this many stragglers instead of the code's s (more than s must fail)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from ..symbolic import verify

    options.reject_unused(a, model=False)
    a.exact = True
    code = options.code_from_args(a)
    res = verify(code, messages=a.messages, stragglers=a.drop)
    print(res.message())
    return 0 if res.ok else options.EXIT_FAIL
