"""dialeval's ``evaluate`` modules (``metrics/<name>/<name>.py``) and what they are built from.

* :mod:`~dialeval.modules.loading`: find, load and register the modules; its public names are
  re-exported here (``from dialeval.modules import load``);
* :mod:`~dialeval.modules.metric_base`: :class:`~dialeval.modules.metric_base.CheckedMetric`, the
  modules' base class;
* :mod:`~dialeval.modules.inputs`: what each module accepts, checked before ``evaluate`` sees it;
* :mod:`~dialeval.modules.widget`: the Gradio widget of each module's Space.

``metric_base`` imports ``evaluate`` and ``widget`` imports Gradio: they are imported where used,
not here.
"""

from dialeval.modules.loading import (
    HUB_NAMESPACE, METRICS_ROOT, available_metrics, kept_scorer, load, module_dir, register,
)

__all__ = ["HUB_NAMESPACE", "METRICS_ROOT", "available_metrics", "kept_scorer", "load", "module_dir", "register"]
