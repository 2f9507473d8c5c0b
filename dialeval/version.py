"""dialeval's version, in a module of its own: signatures and cache keys carry it, and the ground
floor (``dialeval.stats``, ``dialeval.core``) reads it from here, not from the package facade
``dialeval/__init__.py`` (which re-exports it as ``dialeval.__version__``)."""

__version__ = "0.1.0"
