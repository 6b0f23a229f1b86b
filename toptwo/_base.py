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

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's estimator tags (read by ``sklearn.utils.validation.check_is_fitted``
        and the HTML repr; only called when scikit-learn is installed)."""
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False))

    def _repr_html_(self) -> str | None:
        """The notebook display: scikit-learn's HTML diagram when it is installed."""
        try:
            from sklearn.utils import estimator_html_repr
        except ImportError:
            return None
        return estimator_html_repr(self)

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
        """Record the shape of the data ``fit`` saw (one place for every estimator).

        The user's worker and task ids (``Responses.worker_ids`` / ``task_ids``: ids read
        from a file or a DataFrame) are kept by reference for :meth:`to_frame`.
        """
        self.n_workers_in_, self.n_tasks_in_, self.n_labels_in_ = (
            int(R.n_workers), int(R.n_tasks), int(R.n_labels))
        self._ids_in = (R.worker_ids, R.task_ids)
        # by reference, for the p_g/p_pair columns of to_frame (toptwo.posterior)
        self._responses_in = R
        self.__dict__.pop("_task_probabilities", None)

    def to_frame(self, kind: str = "tasks", *, gold: Any = None) -> Any:
        """The fitted estimates as a pandas DataFrame indexed by the user's ids.

        Parameters
        ----------
        kind : {"tasks", "workers"}, default="tasks"
            ``"tasks"``: one row per task, indexed by the task ids of the data given to
            ``fit`` (a DataFrame's or CSV file's ids; 0..n_tasks-1 for an array), with
            columns ``g`` and ``h`` (the estimated top-two answers, labels 1..K,
            missing for a task nobody answered), ``confusion`` (``confusion_``: q_hat_j
            of eq. (4) for TopTwo1/TopTwo2, each method's own ratio otherwise), ``p_g``
            (the posterior probability that g is the task's true answer) and ``p_pair``
            (that (g, h) is its ordered pair), both under the top-two model
            (:func:`toptwo.posterior.task_probabilities`; the CLI's columns of the same
            names). ``"workers"``: one row per worker with
            the column ``reliability`` (``reliability_``, p_hat_i of eq. (3) for the
            paper's estimators).
        gold : array-like or mapping, optional
            Known answers of some tasks (gold tasks, labels 1..K: an integer array of
            shape (n_tasks,) with 0 for the others, or a dict / pandas Series from task
            id to label; at least :data:`toptwo.posterior.MIN_GOLD`). Then ``p_g`` and
            ``p_pair`` are recalibrated on them
            (:func:`toptwo.posterior.gold_probabilities`; on a gold task ``p_g`` is 1 or
            0, whether g is its known answer) and a column ``p_g_source`` says which
            (``"calibrated"`` or ``"gold"``). Only with ``kind="tasks"``.

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        ImportError
            Without pandas (``pip install "toptwo[pandas]"``).
        ValueError
            For ``kind="workers"`` when the method estimates no per-worker reliability.
        """
        check_is_fitted(self, "top_two_")
        from ._validation import check_choice

        check_choice(kind, "kind", ("tasks", "workers"), owner=f"{self._name}.to_frame")
        try:
            import pandas as pd
        except ImportError:                              # pragma: no cover - pandas installed in CI
            raise ImportError(f"{self._name}.to_frame needs pandas, an optional dependency: "
                              f"pip install 'toptwo[pandas]'.") from None
        worker_ids, task_ids = getattr(self, "_ids_in", (None, None))
        if gold is not None and kind != "tasks":
            raise ValueError(f"{self._name}.to_frame takes gold only with kind='tasks' (the "
                             f"known answers recalibrate the per-task p_g); got "
                             f"kind={kind!r}.")
        if kind == "workers":
            if "reliability_" not in self.__dict__ or np.ndim(self.reliability_) != 1:
                raise ValueError(f"{self._name} estimates no per-worker reliability "
                                 f"(no 1-D reliability_); to_frame('workers') is not "
                                 f"available for it.")
            index = pd.Index(np.arange(self.n_workers_in_) if worker_ids is None
                             else worker_ids, name="worker")
            return pd.DataFrame({"reliability": np.asarray(self.reliability_, float)},
                                index=index)
        top = np.asarray(self.top_two_)
        index = pd.Index(np.arange(self.n_tasks_in_) if task_ids is None else task_ids,
                         name="task")
        columns: dict[str, Any] = {
            "g": pd.array(np.where(top[:, 0] > 0, top[:, 0], 0), dtype="Int64"),
            "h": pd.array(np.where(top[:, 1] > 0, top[:, 1], 0), dtype="Int64"),
            "confusion": np.asarray(self.confusion_, dtype=float),
        }
        for name in ("g", "h"):                          # 0 = no estimate -> missing
            col = columns[name]
            col[col == 0] = pd.NA
        if "_responses_in" in self.__dict__:
            from .posterior import gold_probabilities, task_probabilities
            columns.update(task_probabilities(self) if gold is None
                           else gold_probabilities(self, gold))
        elif gold is not None:
            raise ValueError(f"{self._name}.to_frame(gold=...) needs the data the estimator "
                             f"was fitted on, which fit did not record.")
        return pd.DataFrame(columns, index=index)

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
