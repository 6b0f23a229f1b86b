"""The estimator surface every ``toptwo`` estimator shares (no scikit-learn dependency).

Modelled on ``sklearn.base.BaseEstimator``: the parameters are exactly the keyword
arguments of ``__init__``, stored unchanged under the same names and validated in
``fit``. From that follow ``get_params``/``set_params`` (so ``sklearn.base.clone``
works) and a ``repr`` that shows the parameters that differ from their defaults
(:class:`ParamsBase`). Each estimator declares what its parameters may be in
``_parameter_constraints`` (the vocabulary is in :mod:`toptwo._validation`:
``Interval``, ``StrOptions``, ``InstanceOf``, ``RealArray``, None, "boolean",
"random_state"); ``_validate_params`` checks them all, once, at the start of ``fit``
and returns the normalised values. :class:`BaseEstimator` adds the fitted surface of
the crowdsourcing estimators: one place that records what ``fit`` saw
(``n_workers_in_``, ``n_tasks_in_``, ``n_labels_in_``), ``fit_predict`` and
``soft_labels``. Reading a fitted attribute (name ending in ``_``) before ``fit``
raises :class:`toptwo._validation.NotFittedError`.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np

from ._validation import FittedAttributesMixin, check_is_fitted, check_parameter
from .model import soft_labels as _soft_labels

__all__ = ["BaseEstimator", "ParamsBase"]


class ParamsBase:
    """Parameters from the ``__init__`` signature, checked against declared constraints."""

    #: Name used as ``owner`` in messages: the class name, unless a class sets its own.
    _name: str = "ParamsBase"

    #: ``{parameter: [constraint, ...]}``, one entry per ``__init__`` parameter; a value
    #: is valid when one constraint of its list accepts it (see ``_validate_params``).
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._name = cls.__dict__.get("_name", cls.__name__)

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters as a dict (``deep`` is accepted for scikit-learn)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> "ParamsBase":
        """Set constructor parameters by name; unknown names raise ValueError."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; valid "
                                 f"parameters are {', '.join(valid)}.")
            setattr(self, name, value)
        return self

    def _validate_params(self) -> dict[str, Any]:
        """Check every parameter against ``_parameter_constraints``, in declaration order.

        Called once, at the start of ``fit``. Constraints that depend on the data (e.g.
        ``n_top <= n_labels``) are checked by ``fit`` afterwards.

        Returns
        -------
        dict
            Parameter name -> normalised value (an ``int`` for an integer parameter,
            a ``float`` for a real one, a ``bool``, a ``numpy.random.Generator`` for
            ``rng``, a float array for an array); the attributes are left unchanged.

        Raises
        ------
        TypeError, ValueError
            Naming the parameter, the estimator, the value and what is allowed.
        """
        return {name: check_parameter(getattr(self, name), constraints, name, owner=self._name)
                for name, constraints in self._parameter_constraints.items()}

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        shown = []
        for name in self._param_names():
            value = getattr(self, name)
            default = sig.parameters[name].default
            if default is inspect.Parameter.empty or not _same(value, default):
                shown.append(f"{name}={_short(value)}")
        return f"{type(self).__name__}({', '.join(shown)})"


class BaseEstimator(FittedAttributesMixin, ParamsBase):
    """A crowdsourcing estimator: :class:`ParamsBase` and the common fitted surface."""

    # ------------------------------------------------------------ fitted surface
    def _record_input(self, R: Any) -> None:
        """Record the shape of the data ``fit`` saw (one place for every estimator)."""
        self.n_workers_in_, self.n_tasks_in_, self.n_labels_in_ = (
            int(R.n_workers), int(R.n_tasks), int(R.n_labels))

    def fit(self, A: Any, n_labels: int | None = None) -> "BaseEstimator":  # pragma: no cover
        raise NotImplementedError

    def fit_predict(self, A: Any, n_labels: int | None = None) -> np.ndarray:
        """Fit and return g_hat, shape (n_tasks,) (0 for a task nobody answered)."""
        return self.fit(A, n_labels).top_two_[:, 0]

    def soft_labels(self) -> np.ndarray:
        """(n_tasks, K): q_hat on g_hat, 1 - q_hat on h_hat, 0 elsewhere (Sec. 6.3).

        NaN rows for tasks nobody answered.
        """
        check_is_fitted(self, "top_two_")
        return _soft_labels(self.top_two_, self._soft_confusion(), self.n_labels_in_)

    def _soft_confusion(self) -> np.ndarray:
        return self.confusion_


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"<array of shape {value.shape}>"
    if isinstance(value, np.random.Generator):
        return "Generator(...)"
    return repr(value)
