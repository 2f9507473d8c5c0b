"""Build configuration beyond setup.cfg: the wheel carries the evaluate modules (``metrics/``), the
bundled model folders (``hub/``) and the example dialogues (``examples/``) as package data under
``dialeval/_shipped/``, where :mod:`dialeval.models.shipped` finds them when there is no checkout."""

from setuptools import find_packages, setup

SHIPPED_FOLDERS = ("metrics", "hub", "examples")  # = dialeval.models.shipped.SHIPPED_FOLDERS

shipped_packages = {f"dialeval._shipped.{folder}": folder for folder in SHIPPED_FOLDERS}

setup(
    packages=find_packages(include=["dialeval", "dialeval.*"]) + list(shipped_packages),
    package_dir=shipped_packages,
    package_data={
        "dialeval": ["*/*.json"],
        **{package: ["**/*"] for package in shipped_packages},
    },
    exclude_package_data={package: ["**/__pycache__/*", "**/*.pyc"] for package in shipped_packages},
)
