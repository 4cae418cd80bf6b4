"""Encoding and decoding time of the Reed-Solomon and communication-efficient codes.

    python -m benchmarks.bench_codes            # prints one JSON object

For every construction at n = 40 and n = 100 (s = 8, m = 2): ``build_ms`` (constructing the code, i.e. its
encoding matrix), ``encode_ms_per_worker`` (one worker's message from its partial gradients of length
``LENGTH``), ``decode_ms`` (the fast decoder on one received set, mean over random straggler patterns) and
``decode_checked_ms`` (``GradientCode.decode`` with its residual check and conditioning warning). Target: decoding
under 1 ms per pattern at n = 100.
"""
from __future__ import annotations

import json
import time
import warnings

import numpy as np

LENGTH = 10_000
PATTERNS = 200
TARGET_MS = 1.0


def _builders():
    from gclib.schemes import build

    return {
        "rs": lambda n, s, m: build("rs", workers=n, stragglers=s),
        "rs roots-of-unity": lambda n, s, m: build("rs", workers=n, stragglers=s, points="roots-of-unity"),
        "ye-abbe": lambda n, s, m: build("ye-abbe", workers=n, stragglers=s, comm=m),
        "kadhe": lambda n, s, m: build("kadhe", workers=n, stragglers=s, comm=m, generator="gaussian", seed=0),
        # [10, 2, 5]: d = 10 like the others
        "kadhe repetition": lambda n, s, m: build("kadhe", workers=n, stragglers=4, comm=m, generator="repetition"),
        "crc (lstsq, reference)": lambda n, s, m: build("crc", workers=n, stragglers=s, seed=0),
    }


def _time(fn, repeat: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat * 1e3


def bench_one(name: str, build, n: int, s: int = 8, m: int = 2, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    code = build(n, s, m)
    build_ms = (time.perf_counter() - t0) * 1e3
    g = rng.standard_normal((code.n_parts, LENGTH))
    from gclib.codes import split_pieces

    G = split_pieces(g, code.n_pieces)
    w = 0
    cols = np.flatnonzero(np.abs(code.B[w]) > 0)
    enc_ms = _time(lambda: code.B[w, cols] @ G[cols], 20)
    pats = [code.surviving(rng.choice(n, size=code.stragglers, replace=False)) for _ in range(PATTERNS)]
    dec = code.decoder
    for idx in pats[:5]:  # warm up (first calls of LAPACK)
        dec(code, idx)
    t0 = time.perf_counter()
    for idx in pats:
        dec(code, idx)
    dec_ms = (time.perf_counter() - t0) / len(pats) * 1e3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        for idx in pats[:50]:
            code.decode(idx)
        chk_ms = (time.perf_counter() - t0) / 50 * 1e3
    return {"construction": name, "n": n, "s": code.stragglers, "m": code.n_pieces, "load": code.load,
            "build_ms": round(build_ms, 3), "encode_ms_per_worker": round(enc_ms, 4),
            "decode_ms": round(dec_ms, 4), "decode_checked_ms": round(chk_ms, 4),
            "under_target": bool(dec_ms < TARGET_MS)}


def main() -> dict:
    rows = []
    for n in (40, 100):
        for name, build in _builders().items():
            rows.append(bench_one(name, build, n))
    out = {"benchmark": "codes", "length": LENGTH, "patterns": PATTERNS, "target_decode_ms_at_n100": TARGET_MS,
           "results": rows}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
