"""The network of notebook 15: a one-hidden-layer perceptron classifying scikit-learn's handwritten digits (1797
images of 8 x 8 pixels, 10 classes; the data ships inside scikit-learn), written twice, in PyTorch and as a pair of
NumPy functions, with the same parameters in the same order, so that the two frameworks compute the same gradient at
the same parameters.

``inputs (64) -> tanh(W1 x + b1) (hidden) -> W2 h + b2 (10 scores)``, the loss the mean softmax cross-entropy. The
parameters are laid out as PyTorch's ``parameters_to_vector`` lays out ``nn.Sequential(nn.Linear(64, hidden),
nn.Tanh(), nn.Linear(hidden, 10))``: ``W1`` (``hidden x 64``, row by row), ``b1``, ``W2`` (``10 x hidden``),
``b2``; both start at the same draw, PyTorch's default initialization of a linear layer (uniform within ``1 /
sqrt(fan_in)``) made from ``seed``.

A run over MPI names it by its import path, ``gclib.studies.your_model.perceptron:digits_mlp``, and every rank builds it
from that name and its arguments.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from scipy.special import log_softmax, softmax

from gclib import checks
from gclib.learning.adapters import accuracy, from_numpy, from_torch

#: The frameworks :func:`digits_mlp` builds the network in.
FRAMEWORKS = ("torch", "numpy")
#: Pixels per image and classes.
INPUTS, CLASSES = 64, 10


def shipped_digits() -> np.ndarray:
    """``(1797, 65)`` the digits as scikit-learn ships them: 64 pixels, then the label. Read from the file inside
    the installed package without importing scikit-learn (every MPI rank builds the network, and importing
    ``sklearn.datasets`` takes a second or two per rank); through ``sklearn.datasets.load_digits`` where the file is
    not where that version keeps it."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("No module named 'sklearn' (pip install 'gclib[data]')", name="sklearn")
    path = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"
    if path.is_file():
        return np.loadtxt(path, delimiter=",")
    from sklearn.datasets import load_digits  # (another layout of the package)

    d = load_digits()
    return np.column_stack([d.data, d.target])


def digits(data_seed: int = 0, test_fraction: float = 0.25) -> tuple:
    """``(X_train, y_train, X_test, y_test)``: the digits shuffled by ``data_seed``, ``test_fraction`` of them held
    out, every pixel standardized by the training images' mean and deviation (a pixel constant over them is left
    centred); labels are class indices."""
    test_fraction = checks.real("test_fraction", test_fraction, above=0, below=1)
    d = shipped_digits()
    perm = checks.generator(data_seed, "data_seed").permutation(len(d))
    X, y = d[perm, :INPUTS].astype(float), d[perm, INPUTS].astype(np.int64)
    n_test = int(round(test_fraction * len(y)))
    Xtr, Xte = X[n_test:], X[:n_test]
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, y[n_test:], (Xte - mu) / sd, y[:n_test]


def size(hidden: int) -> int:
    """The network's number of parameters."""
    return hidden * INPUTS + hidden + CLASSES * hidden + CLASSES


def initial(hidden: int, seed: int = 0) -> np.ndarray:
    """``(size(hidden),)`` PyTorch's default initialization of the two layers, drawn from ``seed``: every weight and
    bias of a layer uniform in ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``."""
    rng = checks.generator(seed)
    first = rng.uniform(-1, 1, hidden * INPUTS + hidden) / np.sqrt(INPUTS)
    second = rng.uniform(-1, 1, CLASSES * hidden + CLASSES) / np.sqrt(hidden)
    return np.concatenate([first, second])


def _layers(theta: np.ndarray, hidden: int) -> tuple:
    """``(W1, b1, W2, b2)``, views of the flat parameters."""
    a = hidden * INPUTS
    b = a + hidden
    c = b + CLASSES * hidden
    return (theta[:a].reshape(hidden, INPUTS), theta[a:b], theta[b:c].reshape(CLASSES, hidden), theta[c:])


def scores(theta: np.ndarray, X: np.ndarray, hidden: int) -> tuple:
    """``(H, S)``: the hidden activations ``(n, hidden)`` and the class scores ``(n, 10)`` of the rows ``X``."""
    W1, b1, W2, b2 = _layers(theta, hidden)
    H = np.tanh(X @ W1.T + b1)
    return H, H @ W2.T + b2


def mean_loss(theta: np.ndarray, X: np.ndarray, y: np.ndarray, hidden: int) -> float:
    """The mean softmax cross-entropy of the rows."""
    _, S = scores(theta, X, hidden)
    return float(-np.mean(log_softmax(S, axis=1)[np.arange(len(y)), y]))


def mean_gradient(theta: np.ndarray, X: np.ndarray, y: np.ndarray, hidden: int) -> np.ndarray:
    """``(size(hidden),)`` the gradient of :func:`mean_loss` (back-propagation by hand)."""
    W1, b1, W2, b2 = _layers(theta, hidden)
    H, S = scores(theta, X, hidden)
    D = softmax(S, axis=1)
    D[np.arange(len(y)), y] -= 1.0
    D /= len(y)  # d loss / d scores
    dZ = (D @ W2) * (1.0 - H ** 2)  # back through tanh
    return np.concatenate([(dZ.T @ X).ravel(), dZ.sum(axis=0), (D.T @ H).ravel(), D.sum(axis=0)])


def digits_mlp(parts: int, hidden: int = 32, framework: str = "torch", seed: int = 0, data_seed: int = 0,
               test_fraction: float = 0.25):
    """The network on the digits, split into ``parts`` data parts, in ``framework`` (one of :data:`FRAMEWORKS`): a
    :class:`gclib.learning.model.Model` with the test accuracy as its metric. The parameters start at
    :func:`initial` ``(hidden, seed)`` in both frameworks."""
    framework = checks.text("framework", framework, choices=FRAMEWORKS)
    hidden = checks.integer("hidden", hidden, low=1)
    Xtr, ytr, Xte, yte = digits(data_seed, test_fraction)
    theta0 = initial(hidden, seed)
    name = f"digits MLP ({hidden} hidden, {framework})"
    if framework == "numpy":
        return from_numpy(lambda t, X, y: mean_loss(t, X, y, hidden), lambda t, X, y: mean_gradient(t, X, y, hidden),
                          theta0, Xtr, ytr, parts, X_test=Xte, y_test=yte,
                          metrics={"accuracy": lambda t, X, y: accuracy(scores(t, X, hidden)[1], y)}, name=name)
    import torch  # here: the NumPy network needs no PyTorch

    net = torch.nn.Sequential(torch.nn.Linear(INPUTS, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, CLASSES))
    net = net.to(torch.float64)
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(torch.tensor(theta0), net.parameters())
    return from_torch(net, torch.nn.CrossEntropyLoss(), Xtr, ytr, parts, X_test=Xte, y_test=yte,
                      metrics={"accuracy": accuracy}, name=name)
