"""Finding the modules of a discovery folder (rules, bottleneck patterns, CLI sub-commands).

A discovery folder is one where adding a module is the whole change: the registry finds it by
itself. That is only safe if a module that does not register is an error rather than a silent
skip (a pattern named `o2_...` used to be ignored while every test passed). So every module of
such a folder whose name does not start with `_` must match the folder's naming rule and define
the attributes the folder asks for; anything else raises `DiscoveryError` naming the module and
what it lacks. Private helpers keep a leading underscore (`_shapes.py`).
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType
from typing import Iterable


class DiscoveryError(RuntimeError):
    """A module in a discovery folder that would not be registered."""


def discover(package: ModuleType, *, kind: str, name_pattern: str, required: Iterable[str],
             recursive: bool = False, only: str | None = None) -> list[ModuleType]:
    """Every public module of `package` (sub-packages too when `recursive`), imported.

    `name_pattern` is a regular expression the module's own name must match in full, `required`
    the attributes it must define; `kind` names the folder's contents in the error message
    ("rule", "pattern", "command"). With `only`, just the module of that name is imported (when
    there is one), so a command line that runs one sub-command does not import the others; the
    names of all modules are still checked against `name_pattern`.
    """
    name_rule = re.compile(name_pattern)
    required = tuple(required)
    walk = pkgutil.walk_packages if recursive else pkgutil.iter_modules
    kwargs = {"prefix": package.__name__ + "."} if recursive else {}
    names: list[str] = []
    for info in walk(package.__path__, **kwargs):
        full = info.name if recursive else f"{package.__name__}.{info.name}"
        own = full.rsplit(".", 1)[-1]
        if info.ispkg or own.startswith("_"):
            continue
        if not name_rule.fullmatch(own):
            raise DiscoveryError(
                f"{full}: a {kind} module's name must match {name_pattern!r} "
                f"(or start with '_' if it is a private helper); it would not be registered")
        names.append(full)
    if only is not None:
        chosen = [n for n in names if n.rsplit(".", 1)[-1] == only]
        names = chosen or names
    modules = []
    for full in sorted(names):
        mod = importlib.import_module(full)
        missing = [attr for attr in required if not hasattr(mod, attr)]
        if missing:
            raise DiscoveryError(
                f"{full}: a {kind} module must define {', '.join(required)}; it lacks "
                f"{', '.join(missing)} (start its name with '_' if it is a private helper)")
        modules.append(mod)
    return modules
