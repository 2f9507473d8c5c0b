"""Where the files dialeval ships beside its code are: the ``evaluate`` modules, the bundled model
folders and the example dialogues.

In a checkout (and an editable install of it) they are the repository's top-level folders
``metrics/``, ``hub/`` and ``examples/``. A wheel carries the same folders as package data under
``dialeval/_shipped/<folder>/`` (``setup.py`` maps them there), so an installed dialeval scores,
registers its modules and runs its examples with no checkout. Human-judgment sets are never
shipped: they are read from ``$DIALEVAL_DATA`` (:func:`dialeval.data.data_dir`).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # dialeval/
CHECKOUT_ROOT = PACKAGE_ROOT.parent
SHIPPED_FOLDERS = ("metrics", "hub", "examples")
WHEEL_FOLDER = "_shipped"


def shipped_dir(folder: str) -> Path:
    """The shipped ``folder`` (one of :data:`SHIPPED_FOLDERS`): the wheel's package data when it is
    there, else the checkout's top-level folder."""
    if folder not in SHIPPED_FOLDERS:
        raise ValueError(f"unknown shipped folder {folder!r}; one of {SHIPPED_FOLDERS}")
    packaged = PACKAGE_ROOT / WHEEL_FOLDER / folder
    return packaged if packaged.is_dir() else CHECKOUT_ROOT / folder

