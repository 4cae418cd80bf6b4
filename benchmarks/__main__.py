"""Run every benchmark module (``python -m benchmarks [name ...]``), each printing one JSON object."""
import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv):
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    if argv:
        unknown = set(argv) - set(names)
        if unknown:
            print(f"unknown benchmarks {sorted(unknown)}; have {names}", file=sys.stderr)
            return 2
        names = [n for n in names if n in argv]
    for name in names:
        importlib.import_module(f"benchmarks.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
