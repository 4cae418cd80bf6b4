"""Simulator throughput at n = 40 and decoding time per straggler pattern at n = 40 and n = 100.

Target: 100,000 trials of any of uncoded, ignore, FRC, CRC at n = 40 in under one second.
Prints one JSON object.
"""
import json
import time

import numpy as np

from gclib.schemes import build
from gclib.simulator import simulate
from gclib.stragglers import ShiftedExponential


def _best_of(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def simulator(n=40, s=9, trials=100_000):
    model = ShiftedExponential(10, 0.01)
    out = {}
    ns = {"workers": n, "stragglers": s}
    for code in (build("uncoded", workers=n), build("ignore", **ns), build("frc", **ns), build("crc", **ns, seed=1)):
        sec = _best_of(lambda: simulate(code, model, trials, seed=1))
        out[code.name] = {"trials": trials, "seconds": round(sec, 4), "trials_per_second": round(trials / sec),
                          "meets_target_1s": sec < 1.0}
    return out


def decoding(n, s, patterns=200):
    rng = np.random.default_rng(0)
    out = {}
    ns = {"workers": n, "stragglers": s}
    for code in (build("frc", **ns) if n % (s + 1) == 0 else None, build("crc", **ns, seed=1),
                 build("ignore", **ns)):
        if code is None:
            continue
        sets = [code.surviving(rng.choice(n, s, replace=False)) for _ in range(patterns)]
        t0 = time.perf_counter()
        for idx in sets:
            code.decode(idx, check=False, warn=False)
        out[code.name] = {"ms_per_pattern": round(1e3 * (time.perf_counter() - t0) / patterns, 4)}
    return out


def main():
    res = {"benchmark": "simulate", "simulator_n40": simulator(),
           "decode_n40_s9": decoding(40, 9), "decode_n100_s24": decoding(100, 24)}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
