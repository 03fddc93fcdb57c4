"""The operator's tools modules (`TOOLS`): imported at start, each a list of declared tools."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from tools.registry import Tool

# The attribute a module named without `:attr` must define.
DEFAULT_ATTRIBUTE = "TOOLS"


class ToolsModuleError(RuntimeError):
    """A module named in TOOLS cannot give its tools; the message says which and why."""


def load_tools(specs: Iterable[str], taken: Iterable[str] = ()) -> list[Tool]:
    """Return the tools of each `package.module` or `package.module:attribute` in `specs`.

    The attribute (`TOOLS` by default) is a list of `Tool`s, or a function without arguments
    that returns one. A name `taken` already, or given twice, is refused: no tool hides another.
    """
    names, out = set(taken), []
    for spec in specs:
        for tool in _tools_of(spec):
            if tool.name in names:
                raise ToolsModuleError(f"TOOLS: {spec!r} declares {tool.name!r}, a name taken")
            names.add(tool.name)
            out.append(tool)
    return out


def _tools_of(spec: str) -> list[Tool]:
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise ToolsModuleError(
            f"TOOLS: cannot import {module_name!r}: {type(err).__name__}: {err}"
        ) from err
    attribute = attribute or DEFAULT_ATTRIBUTE
    found = getattr(module, attribute, None)
    if found is None:
        raise ToolsModuleError(f"TOOLS: {module_name!r} has no attribute {attribute!r}")
    if callable(found):
        try:
            found = found()
        except Exception as err:
            raise ToolsModuleError(f"TOOLS: {spec!r} failed: {type(err).__name__}: {err}") from err
    if not isinstance(found, list | tuple) or not all(isinstance(t, Tool) for t in found):
        raise ToolsModuleError(f"TOOLS: {spec!r} must be a list of tools.registry.Tool")
    return list(found)
