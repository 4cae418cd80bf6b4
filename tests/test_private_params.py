"""No private side channel through ``GradientCode.params``: a family's data lives in its decoder's fields.

The scan reads the library, the tests, the benchmarks and the notebooks' code cells for a subscript or a lookup of
an underscore key of something named ``params`` (``params["_x"]``, ``params.get('_x')``, ...); the codes refuse
such keys at construction.
"""
from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

from gclib import codes
from gclib.codes.base import Decoder, GradientCode
from gclib.codes.mmc import gc_mmc_correlated, gc_mmc_uncorrelated, hybrid

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"""params\s*(?:\[|\.(?:get|pop|setdefault)\()\s*[rbuf]*["']_""")


def _sources():
    for folder in ("gclib", "tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == Path(__file__).resolve():  # its examples of what the scan finds
                continue
            yield path.relative_to(ROOT), path.read_text()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        yield path.relative_to(ROOT), "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def private_reads(text: str) -> list[str]:
    """The lines of ``text`` that read an underscore key of a ``params`` mapping."""
    return [line.strip() for line in text.splitlines() if PRIVATE.search(line)]


def test_the_scan_finds_what_it_looks_for():
    bad = ['beta = code.params["_beta"]', "x = p.params.get('_rank', 1)", 'c = params[ "_cache" ]',
           "params.pop('_G')"]
    assert private_reads("\n".join(bad)) == bad
    assert private_reads('h = code.params["h"]\nparams.get("points")\nself._params["x"]') == []


def test_no_module_or_notebook_reads_a_private_params_key():
    found = {str(path): lines for path, text in _sources() if (lines := private_reads(text))}
    assert found == {}


def test_a_code_refuses_private_params():
    with pytest.raises(ValueError, match=r"private keys \['_beta'\]"):
        GradientCode(name="x", n_workers=1, n_parts=1, order=[(0,)], B=np.ones((1, 1)), sender=[0], ready=[1],
                     rule=codes.threshold(1, 1), stragglers=0, params={"n": 1, "_beta": np.zeros(1)})


SHIPPED = {"crc": lambda: codes.crc(6, 2), "rs": lambda: codes.rs(6, 2), "ye-abbe": lambda: codes.ye_abbe(6, 2, 2),
           "kadhe": lambda: codes.kadhe(8, 2, 2), "partial": lambda: codes.partial_stragglers(4, 1, 3),
           "frc": lambda: codes.frc(6, 2), "ignore": lambda: codes.ignore_stragglers(6, 2),
           "correlated": lambda: gc_mmc_correlated(8, 4, 2, 2),
           "uncorrelated": lambda: gc_mmc_uncorrelated(8, 4, [2, 4], 2), "hybrid": lambda: hybrid(8, 4, [2, 4])}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_decoder_is_an_immutable_object_that_pickles(name):
    code = SHIPPED[name]()
    assert isinstance(code.decoder, Decoder)
    with pytest.raises(AttributeError):  # frozen: no hidden mutable state on the decoder
        code.decoder.points = None
    assert not any(isinstance(v, (dict, list, set)) for v in vars(code.decoder).values())
    back = pickle.loads(pickle.dumps(code))
    idx = code.surviving(range(code.stragglers))
    assert np.array_equal(back.surviving(range(code.stragglers)), idx)
    assert np.allclose(back.decode(idx, warn=False, check=False), code.decode(idx, warn=False, check=False))


def test_the_family_says_which_messages_survive():
    part = codes.partial_stragglers(4, 1, 3)  # a partial straggler still sends its first message
    assert part.surviving([2]).tolist() == [0, 1, 2, 3, 4, 5, 7]
    assert codes.crc(4, 1).surviving([2]).tolist() == [0, 1, 3]


def test_points_and_rank_are_public_fields_of_the_decoder():
    rs = codes.rs(6, 2, "equispaced", assign="natural")
    assert np.allclose(rs.decoder.points, np.linspace(-2, 2, 6)) and rs.decoder.decodable_rank == 4
    ya = codes.ye_abbe(6, 2, 2)
    assert ya.decoder.points.shape == (6,) and ya.decoder.decodable_rank == 4
    kd = codes.kadhe(8, 2, 2)
    assert kd.decoder.G.shape == (2, 4) and kd.decoder.decodable_rank == 4 and kd.decoder.points is None
    assert codes.crc(6, 2).decoder.points is None and codes.crc(6, 2).decoder.decodable_rank is None
