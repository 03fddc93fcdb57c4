"""Werkzeug's URL builders, compiled once per test process instead of once per app.

Werkzeug compiles two URL builders for every rule of every app it binds: it writes each as a
Python AST and compiles it (`Rule._compile_builder`). That was over half the CPU of building
an app, and the suite builds thousands of apps from the same few hundred rules. A builder's
code depends only on the rule's text, its parsed parts (`_trace`), the names of its defaults
and whether it appends unknown arguments; it reads the rule's converters through the rule it
is bound to at each call. So a builder compiled for one app's rule serves the same rule of
another app, bound to that rule, as the one werkzeug would compile for it. A rule with a
default for one of its own variables bakes the converted default into the code: those are
compiled as werkzeug compiles them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from werkzeug.routing.rules import Rule

Builder = Callable[..., tuple[str, str]]

_compile = Rule._compile_builder
_builders: dict[tuple[Any, ...], Builder] = {}


def _compile_once(rule: Rule, append_unknown: bool = True) -> Builder:
    defaults = rule.defaults or {}
    trace = tuple(rule._trace)
    if any(dynamic and name in defaults for dynamic, name in trace):
        return _compile(rule, append_unknown)
    key = (append_unknown, rule.rule, trace, tuple(defaults))
    builder = _builders.get(key)
    if builder is None:
        builder = _builders[key] = _compile(rule, append_unknown)
    return builder


def compile_builders_once() -> None:
    """Make werkzeug compile each distinct rule's builders once in this process."""
    # The werkzeug this was written for (3.1): a method of the rule and `append_unknown`.
    if list(inspect.signature(_compile).parameters) != ["self", "append_unknown"]:
        return
    Rule._compile_builder = _compile_once  # type: ignore[method-assign]
