"""``gclib verify``: the exact (SymPy) check of one code (:func:`gclib.symbolic.verify`)."""
from __future__ import annotations

from gclib import checks
from gclib.cli import options, registries
from gclib.codes.approximate import error_report


#: The command, and its line in ``gclib --help``.
NAME = "verify"
HELP = ("exact (SymPy) check that every admissible pattern decodes; for an approximate code, its decoding "
        "error over every pattern")


#: The examples of ``gclib verify --help`` (the tests run each).
EXAMPLES = (
    ("gclib verify --scheme crc --workers 7 --stragglers 3 --seed 2",
     "every pattern of 3 stragglers decodes exactly (exit 1 with the failing pattern otherwise)"),
    ("gclib verify --scheme gc-mmc-correlated --workers 6 --load 3 --order 2",
     "a multi-message code: every pattern of its admissible stragglers"),
    ("gclib verify --scheme rs --workers 6 --stragglers 2 --messages 4",
     "every set of 4 of the 6 messages (n - s of them decode)"),
    ("gclib verify --scheme expander --workers 10 --stragglers 2 --load 3",
     "an approximate code: its decoding error over every pattern"))


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       epilog=options.examples(EXAMPLES) + "\n\n" + registries.epilog(models=False))
    options.add_scheme_args(p, any_scheme=())  # --seed is read by the random constructions only
    p.add_argument("--messages", type=checks.option(checks.integer, low=1), default=None,
                   help="check every set of this many messages instead of every straggler pattern")
    p.add_argument("--drop", type=checks.option(checks.integer, low=0), default=None,
                   help="check patterns of this many stragglers instead of the code's s (more than s must fail)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib.symbolic import patterns_to_check, verify

    options.reject_unused(a, model=False, any_scheme=())
    if a.messages is not None and a.drop is not None:
        raise ValueError("argument --drop: cannot be given with --messages (--messages checks every set of that "
                         "many messages, --drop every pattern of that many stragglers)")
    # the number of patterns first, from the float code (cheap): a request too large is refused before the exact
    # code is built
    a.exact = False
    code = options.code_from_args(a)
    patterns_to_check(code, messages=a.messages, stragglers=a.drop)
    if not code.exact:  # an approximate code: no exactness to prove, its decoding error instead
        print(error_report(code, stragglers=a.drop, messages=a.messages).message())
        return 0
    a.exact = True
    res = verify(options.code_from_args(a), messages=a.messages, stragglers=a.drop)
    print(res.message())
    return 0 if res.ok else options.EXIT_FAIL

