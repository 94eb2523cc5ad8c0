"""The flows: one module per page or journey, each registering its functions with
browser.runner.flow. A new module here is picked up without being listed."""

import importlib
import pkgutil


def load():
    """Imports every module of this package, in name order (the order the flows run in)."""
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")
