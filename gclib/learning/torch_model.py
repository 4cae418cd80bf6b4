"""A PyTorch module as a :class:`gclib.learning.model.Model` (made by :func:`gclib.learning.adapters.from_torch`).

The parameters the runtime sends are the module's trainable parameters flattened in their order
(``torch.nn.utils.parameters_to_vector``); a gradient is computed by setting them
(``vector_to_parameters``), running the module on the part's rows and ``torch.autograd.grad`` of the loss, and
leaves as a float64 NumPy vector. The module is moved to float64, so that a decoded gradient agrees with the
full-batch gradient to float64's rounding, and put in eval mode: every gradient is then a deterministic function
of the parameters and the rows (no dropout; batch normalization from its running statistics), which the parts'
gradients must be to add up to the full one.
"""
from __future__ import annotations

import numpy as np
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from gclib import checks
from gclib.learning.data_model import DataModel, check_metrics, rows_match

#: Memory of PyTorch in each rank that imports it (about 220 MB resident measured for torch 2.13's CPU build),
#: rounded up: counted in :attr:`TorchModel.nbytes` for the runtime's check of a host's memory.
TORCH_BYTES = 250e6


def _tensor(a, dtype):
    """``a`` as a tensor: floating point in ``dtype``, integers (class labels, token ids) as they are."""
    t = torch.as_tensor(np.asarray(a) if not isinstance(a, torch.Tensor) else a)
    return t.to(dtype) if t.is_floating_point() else t


class TorchModel(DataModel):
    """See the module docstring and :func:`gclib.learning.adapters.from_torch`.

    Attributes:
        module: the ``nn.Module`` (float64, eval mode). params: its trainable parameters, in order. X, y, X_test,
            y_test: tensors (floating point as float64).
    """

    def __init__(self, module, loss, X, y, parts, *, X_test=None, y_test=None, metrics=None, name=None):
        if not isinstance(module, torch.nn.Module):
            raise checks.ParameterTypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        if not callable(loss):
            raise checks.ParameterTypeError(f"loss must be a function (outputs, targets), got {type(loss).__name__}")
        self.dtype = torch.float64
        self.module = module.to(self.dtype).eval()
        self.params = [p for p in self.module.parameters() if p.requires_grad]
        if not self.params:
            raise ValueError(f"module {type(module).__name__} has no trainable parameters")
        self.X, self.y = _tensor(X, self.dtype), _tensor(y, self.dtype)
        super().__init__(rows_match("from_torch", self.X, self.y), parts, name or type(module).__name__)
        self.X_test = None if X_test is None else _tensor(X_test, self.dtype)
        self.y_test = None if y_test is None else _tensor(y_test, self.dtype)
        if self.X_test is not None:
            rows_match("from_torch (test data)", self.X_test, self.y_test)
        self.metrics = check_metrics(metrics)
        self.loss_fn = loss
        self._dim = int(sum(p.numel() for p in self.params))
        with torch.no_grad():  # the parameters as the module was made (a gradient's computation sets others)
            self.theta0 = parameters_to_vector(self.params).cpu().numpy().astype(np.float64)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def nbytes(self) -> int:
        data = sum(t.numel() * t.element_size() for t in (self.X, self.y, self.X_test, self.y_test) if t is not None)
        return int(data + 8 * self._dim + TORCH_BYTES)

    def initial(self):
        """``(dim,)`` the module's parameters as it was made (its own initialization)."""
        return self.theta0.copy()

    def _set(self, theta):
        vec = torch.tensor(np.asarray(theta, dtype=np.float64), dtype=self.dtype)  # a copy: theta stays the caller's
        with torch.no_grad():
            vector_to_parameters(vec, self.params)

    def mean_loss(self, theta, rows):
        self._set(theta)
        with torch.no_grad():
            return float(self.loss_fn(self.module(self.X[rows]), self.y[rows]))

    def mean_gradient(self, theta, rows):
        self._set(theta)
        with torch.enable_grad():
            value = self.loss_fn(self.module(self.X[rows]), self.y[rows])
            grads = torch.autograd.grad(value, self.params, allow_unused=True)
        flat = parameters_to_vector([torch.zeros_like(p) if g is None else g for g, p in zip(grads, self.params)])
        return flat.detach().cpu().numpy().astype(np.float64)

    def test_metrics(self, theta):
        if self.X_test is None:
            return {}
        self._set(theta)
        with torch.no_grad():
            out = self.module(self.X_test)
            res = {"test_loss": float(self.loss_fn(out, self.y_test))}
        scores, labels = out.cpu().numpy(), self.y_test.cpu().numpy()
        res.update({k: float(f(scores, labels)) for k, f in self.metrics.items()})
        return res
