"""What a model is to gclib: the small interface the runtime and the simulated clock train through, whatever the
framework behind it, and the name every MPI rank builds it from.

A model (:class:`Model`) is a loss ``F(theta) = sum_j f_j(theta)`` over ``k`` data parts, ``theta`` its parameters
as one flat float64 vector of ``dim`` numbers:

===================================  ====================================================================
``dim``                              the number of parameters (``int``)
``n_parts``                          ``k``, the number of data parts (``int``); a code of ``k`` parts
``initial()``                        ``(dim,)`` float64: where training starts (zeros unless overridden)
``partial_gradient(theta, j)``       ``(dim,)`` float64: the gradient of ``f_j`` at ``theta`` (``0 <= j < k``)
``loss(theta)``                      ``F(theta)``, a float
``gradient(theta)``                  ``(dim,)``: the gradient of ``F`` (default: the sum of the partial ones)
``test_metrics(theta)``              ``{name: float}`` on held-out data (default: none)
===================================  ====================================================================

The gradient every code decodes is the plain sum of the partial gradients, so ``f_j`` must be part ``j``'s share of
the loss: with a loss that is a mean over rows, part ``j``'s mean weighted by its rows over all rows
(the adapters of :mod:`gclib.learning.adapters` do this). :func:`check_model` checks a model once, at its initial
parameters: the sizes, shapes, finiteness, and that the partial gradients add up to the full gradient.

Any object with ``dim``, ``n_parts``, ``partial_gradient`` and ``loss`` is a model (:func:`as_model` gives it the
defaults of the others); :class:`gclib.learning.problems.Problem` (linear and logistic regression) is one, and the
adapters wrap a PyTorch module, a pair of NumPy functions or a JAX loss.

A model trained over MPI is named, not pickled: :class:`ModelRef` holds an import path ``"package.module:function"``
and the function's keyword arguments, and every rank builds the model from it (:func:`load`). The name is what
``gclib run --model package.module:function --model-args hidden=64`` takes.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gclib import checks
from gclib.checks import ParameterTypeError

#: Largest relative difference between the sum of a model's partial gradients and its full gradient that
#: :func:`check_model` accepts (room for a model computing in float32; a loss summed where a mean was meant, or a
#: part's share weighted wrongly, is off by far more).
SUM_TOLERANCE = 1e-6
#: What a model needs, beyond what :func:`as_model` fills in.
REQUIRED = ("dim", "n_parts", "partial_gradient", "loss")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class Model:
    """The base of a model (the table of the module's docstring): a subclass defines ``dim``, ``n_parts``,
    ``partial_gradient`` and ``loss``, and may define ``initial``, ``gradient``, ``test_metrics``, ``n_samples``
    (rows of training data, or ``None``), ``nbytes`` (the memory its data takes in every rank, for the runtime's
    memory check) and ``name``."""

    @property
    def dim(self) -> int:
        raise NotImplementedError

    @property
    def n_parts(self) -> int:
        raise NotImplementedError

    @property
    def n_samples(self):
        return None

    @property
    def nbytes(self) -> int:
        return 0

    def initial(self) -> np.ndarray:
        """``(dim,)`` the parameters training starts from (zeros)."""
        return np.zeros(self.dim)

    def partial_gradient(self, theta: np.ndarray, j: int) -> np.ndarray:
        """``(dim,)`` the gradient of ``f_j`` at ``theta``."""
        raise NotImplementedError

    def partial_gradients(self, theta: np.ndarray, which=None) -> np.ndarray:
        """``(k, dim)`` (or ``(len(which), dim)``) partial gradients."""
        which = range(self.n_parts) if which is None else which
        return np.stack([part_gradient(self, theta, j) for j in which])

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """``(dim,)`` the gradient of ``F`` (the sum of the partial gradients)."""
        return self.partial_gradients(theta).sum(axis=0)

    def loss(self, theta: np.ndarray) -> float:
        """``F(theta)``."""
        raise NotImplementedError

    def test_metrics(self, theta: np.ndarray) -> dict:
        """``{name: value}`` on held-out data (none here)."""
        return {}

    def prepare(self, iterations: int) -> None:
        """Before a timed run of ``iterations`` (on every MPI rank, at its start): load what the computation will
        need, so that no measured iteration pays for an import (nothing here)."""


class _Adapted(Model):
    """Any object with the required attributes of :data:`REQUIRED`, with the defaults of :class:`Model` for the
    others."""

    def __init__(self, inner):
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)

    dim = property(lambda self: self.inner.dim)
    n_parts = property(lambda self: self.inner.n_parts)
    n_samples = property(lambda self: getattr(self.inner, "n_samples", None))
    nbytes = property(lambda self: getattr(self.inner, "nbytes", 0))

    def __getattr__(self, name):  # what else the object has (smoothness, optimum, ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def initial(self):
        f = getattr(self.inner, "initial", None)
        return np.zeros(self.dim) if f is None else f()

    def prepare(self, iterations):
        f = getattr(self.inner, "prepare", None)
        if f is not None:
            f(iterations)

    def partial_gradient(self, theta, j):
        return self.inner.partial_gradient(theta, j)

    def gradient(self, theta):
        f = getattr(self.inner, "gradient", None)
        return super().gradient(theta) if f is None else f(theta)

    def loss(self, theta):
        return _float(self.inner.loss(theta))

    def test_metrics(self, theta):
        f = getattr(self.inner, "test_metrics", None)
        out = {} if f is None else f(theta)
        return {k: _float(v) for k, v in out.items()} if isinstance(out, dict) else out


def _float(v):
    """A number as a Python float (a NumPy or framework scalar included); anything else as it is (for
    :func:`check_model` to refuse)."""
    try:
        return float(v) if np.ndim(v) == 0 else v
    except (TypeError, ValueError):
        return v


def as_model(obj, what: str = "model") -> Model:
    """``obj`` as a :class:`Model`: itself when it is one, else wrapped (an object with the attributes of
    :data:`REQUIRED`). Raises a ``TypeError`` (also a ``ValueError``) naming what is missing."""
    if isinstance(obj, Model):
        return obj
    missing = [a for a in REQUIRED if not hasattr(obj, a)]
    if missing:
        raise ParameterTypeError(f"{what} must be a model (an object with {', '.join(REQUIRED)}; see "
                                 f"gclib.learning.model), got {type(obj).__name__} without {', '.join(missing)}")
    return _Adapted(obj)


def model_name(model) -> str:
    """How messages name ``model``: its import path and arguments when it was built from one, else its ``name``,
    else its class's name."""
    ref = getattr(model, "ref", None)
    if isinstance(ref, ModelRef):
        return ref.text()
    return str(getattr(model, "name", None) or type(model).__name__)


class ModelError(ValueError):
    """A model that does not do what the interface says (a gradient of the wrong shape, one that raised)."""


def part_gradient(model, theta: np.ndarray, j: int) -> np.ndarray:
    """``(dim,)`` float64 gradient of part ``j`` of ``model`` at ``theta``, checked for its shape (what a worker
    computes; a :class:`ModelError` naming the part otherwise)."""
    g = np.asarray(model.partial_gradient(theta, j), dtype=float)
    if g.shape != (model.dim,):
        raise ModelError(f"model {model_name(model)}: the gradient of part {j} has shape {g.shape}, not "
                         f"({model.dim},) (one number per parameter)")
    return g


def step_size(model, lr=None) -> float:
    """``lr`` checked (a positive number), or by default ``1 / L`` for a model with a smoothness constant ``L``
    (its ``smoothness``, as a :class:`~gclib.learning.problems.Problem` has); a model without one needs ``lr``."""
    if lr is not None:
        return checks.real("lr", lr, above=0)
    L = getattr(model, "smoothness", None)
    if L is None:
        raise ValueError(f"lr must be given for model {model_name(model)}: it has no smoothness constant (the "
                         f"default step is 1 / L)")
    return 1.0 / float(L)


# ---------------------------------------------------------------------------------------------- checking
def _size(model, attr: str) -> int:
    v = getattr(model, attr)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ModelError(f"model {model_name(model)}: {attr} must be a positive integer, got {v!r}")
    return int(v)


def _finite_vector(model, what: str, value, dim: int) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"model {model_name(model)}: {what} is not an array of numbers, got "
                         f"{type(value).__name__}") from None
    if v.shape != (dim,):
        raise ModelError(f"model {model_name(model)}: {what} has shape {v.shape}, not ({dim},) (one number per "
                         f"parameter)")
    bad = ~np.isfinite(v)
    if bad.any():
        raise ModelError(f"model {model_name(model)}: {what} is not finite ({int(bad.sum())} of its {dim} entries "
                         f"are nan or inf)")
    return v


def _called(model, what: str, f, *args):
    try:
        return f(*args)
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"model {model_name(model)}: {what} raised {type(e).__name__}: {e}") from None


def check_model(model, theta=None, parts: int | None = None) -> Model:
    """Check ``model`` once, at ``theta`` (default its initial parameters): ``dim`` and ``n_parts`` positive
    integers (``n_parts`` equal to ``parts`` when given), the initial parameters, every partial gradient and the
    full gradient ``dim`` finite numbers, the loss and test metrics finite, and the partial gradients adding up to
    the full gradient within :data:`SUM_TOLERANCE`. Returns the model (:func:`as_model`).

    Raises:
        ModelError: (a ``ValueError``) one line naming the model and what is wrong.
    """
    model = as_model(model)
    dim, k = _size(model, "dim"), _size(model, "n_parts")
    if parts is not None and k != parts:
        raise ModelError(f"model {model_name(model)} has {k} parts, the code needs {parts}")
    start = _called(model, "initial()", model.initial) if theta is None else theta
    theta = _finite_vector(model, "its initial parameters" if theta is None else "theta", start, dim)
    total = np.zeros(dim)
    for j in range(k):
        g = _called(model, f"the gradient of part {j}", model.partial_gradient, theta.copy(), j)
        total += _finite_vector(model, f"the gradient of part {j} at the initial parameters", g, dim)
    full = _finite_vector(model, "its full gradient at the initial parameters",
                          _called(model, "the full gradient", model.gradient, theta.copy()), dim)
    loss = _called(model, "the loss", model.loss, theta.copy())
    if not _is_finite_number(loss):
        raise ModelError(f"model {model_name(model)}: its loss at the initial parameters is not a finite number: "
                         f"{loss!r}")
    metrics = _called(model, "test_metrics", model.test_metrics, theta.copy())
    if not isinstance(metrics, dict) or not all(isinstance(n, str) and _is_number(v) for n, v in metrics.items()):
        raise ModelError(f"model {model_name(model)}: test_metrics must return {{name: number}}, got {metrics!r}")
    scale = max(float(np.linalg.norm(full)), float(np.linalg.norm(total)), 1e-300)
    diff = float(np.linalg.norm(total - full)) / scale
    if diff > SUM_TOLERANCE:
        raise ModelError(f"model {model_name(model)}: its partial gradients do not add up to its full gradient "
                         f"(relative difference {diff:.3g} > {SUM_TOLERANCE:g}); the gradient of part j must be "
                         f"that of part j's share of the loss (for a loss that is a mean over rows, part j's mean "
                         f"times its rows over all rows)")
    return model


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _is_finite_number(v) -> bool:
    if hasattr(v, "item") and np.ndim(v) == 0:  # a NumPy (or framework) scalar
        v = v.item()
    return _is_number(v) and math.isfinite(v)


# ---------------------------------------------------------------------------------------------- naming a model
def _plain(value) -> bool:
    """A value every rank can rebuild from its text: a number, text, a boolean, ``None``, or a list of them."""
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, bool, int, float))


@dataclass(frozen=True, eq=False)
class ModelRef:
    """A model by name: ``target`` ``"package.module:function"`` (a function, or a class, returning a model; the
    part after the colon may be dotted: ``module:Class.method``), called with ``kwargs`` (plain values: numbers,
    text, booleans, ``None`` and lists of them) on every rank that needs the model. ``path``: the folder put first
    on ``sys.path`` before the import (where the launching process found the module; it must exist on every host,
    as gclib itself does), or ``None``."""

    target: str
    kwargs: dict = field(default_factory=dict)
    path: str | None = None

    def __post_init__(self):
        if not isinstance(self.target, str):
            raise ParameterTypeError(f"model must be an import path 'package.module:function', got "
                                     f"{type(self.target).__name__}")
        module, sep, attr = self.target.partition(":")
        if not (sep and _NAME.match(module) and _NAME.match(attr)):
            raise ValueError(f"model must be an import path 'package.module:function' (dotted Python names either "
                             f"side of one colon), got {self.target!r}")
        if not isinstance(self.kwargs, dict) or not all(isinstance(k, str) and k.isidentifier() for k in self.kwargs):
            raise ValueError(f"model arguments must be a dict of keyword arguments, got {self.kwargs!r}")
        bad = [k for k, v in self.kwargs.items() if not _plain(v)]
        if bad:
            raise ValueError(f"model argument {bad[0]} must be a plain value (a number, text, a boolean, None or a "
                             f"list of them: every rank builds the model from it), got "
                             f"{type(self.kwargs[bad[0]]).__name__}")

    def text(self) -> str:
        """``package.module:function(a=1, b='x')``."""
        return f"{self.target}({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"

    def describe(self) -> dict:
        return {"target": self.target, "kwargs": dict(self.kwargs)}

    def build(self) -> Model:
        """Import the target and call it with the arguments: the model, checked for the attributes it needs
        (:func:`as_model`, not :func:`check_model`), with this reference as its ``ref``.

        Raises:
            ModelError: one line naming the model: it cannot be imported, has no such attribute, raised while it
                was built, or returned what is not a model.
        """
        f = _resolve(self.target, self.path)
        try:
            obj = f(**self.kwargs)
        except Exception as e:
            raise ModelError(f"model {self.text()} raised {type(e).__name__} while it was built: {e}"
                             f"{_hint(e)}") from None
        try:
            model = as_model(obj)
        except ValueError as e:
            raise ModelError(f"model {self.text()}: {e}") from None
        try:
            model.ref = self
        except AttributeError:  # a model that takes no new attribute: wrapped, the wrapper takes it
            model = _Adapted(obj)
            model.ref = self
        return model


def _resolve(target: str, path: str | None):
    """The callable named by ``target``, imported with ``path`` first on ``sys.path`` (and, for a module that is not
    found, the working directory after it)."""
    module_name, _, attr = target.partition(":")
    if path and path not in sys.path:
        sys.path.insert(0, path)
    try:
        module = _import(module_name)
    except Exception as e:
        raise ModelError(f"model {target}: its module {module_name} cannot be imported: {type(e).__name__}: "
                         f"{e}{_hint(e)}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ModelError(f"model {target}: {type(obj).__name__} {getattr(obj, '__name__', attr)!r} has no "
                             f"attribute {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ModelError(f"model {target}: {attr} is a {type(obj).__name__}, not a function or class that builds "
                         f"the model")
    return obj


def _hint(e: Exception) -> str:
    """What to install for a framework an adapter needs that is missing (``""`` otherwise)."""
    name = (getattr(e, "name", None) or "").split(".")[0]
    return {"torch": " (pip install 'gclib[torch]')", "jax": " (pip install jax)"}.get(name, "") if isinstance(
        e, ModuleNotFoundError) else ""


def _import(module_name: str):
    """Import ``module_name``; when it (or its package) is not found, look in the working directory too (where
    ``python -m`` would have looked, and ``gclib``'s console script does not)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        here = os.getcwd()
        mine = e.name is not None and module_name.startswith(e.name)
        if not mine or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


def module_root(module_name: str) -> str | None:
    """The folder the imported module ``module_name`` was found in, its top package's parent (``None`` for a
    module without a file)."""
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if not file:
        return None
    p = Path(file).resolve()
    if p.name == "__init__.py":
        p = p.parent
    return str(p.parents[len(module_name.split(".")) - 1])


def load(target: str, **kwargs) -> Model:
    """The model named ``target`` (``"package.module:function"``) built with ``kwargs`` and checked
    (:func:`check_model`), its :class:`ModelRef` (with the folder its module came from) as its ``ref``: what
    :class:`gclib.runtime.RunSpec` sends the ranks instead of the model. Raises :class:`ModelError` (a
    ``ValueError``) in one line naming what is wrong."""
    ref = ModelRef(target, dict(kwargs))
    model = ref.build()
    model.ref = ModelRef(target, dict(kwargs), module_root(target.partition(":")[0]))
    return check_model(model)


def accepts(target: str, name: str) -> bool:
    """Whether the function (or class) named by ``target`` takes a keyword argument ``name`` (or any, ``**kw``).
    Raises :class:`ModelError` when ``target`` cannot be imported."""
    f = _resolve(ModelRef(target).target, None)
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):  # a callable without a signature Python can read
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def parse_kwargs(text) -> dict:
    """``{name: value}`` from ``"hidden=64,lr=0.1,act=relu,sizes=[32,16]"``: ``name=value`` items split at the commas
    outside brackets and quotes, each value a Python literal (a number, a quoted text, ``True``, ``None``, a list)
    or else the text itself. ``None`` or ``""``: no arguments.

    Raises:
        ValueError: an item without ``=``, a name that is not an identifier, a name given twice.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return {}
    if isinstance(text, dict):  # (a saved command line)
        return dict(text)
    out = {}
    for item in _split_items(str(text)):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"model arguments must be NAME=VALUE items separated by commas, got {item.strip()!r} in "
                             f"{text!r}")
        if name in out:
            raise ValueError(f"model argument {name} is given twice in {text!r}")
        value = value.strip()
        try:
            out[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            out[name] = value
    return out


def _split_items(text: str) -> list:
    """``text`` split at the commas that are not inside brackets or quotes."""
    items, depth, quote, cur = [], 0, None, []
    for c in text:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    items.append("".join(cur))
    return items
