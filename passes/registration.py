"""Custom passes and fusion patterns, as GE's custom pass registration offers them.

```python
@dataclass(frozen=True)
class FoldMyScale(ModulePass):
    name = "my-fold-scale"
    def apply(self, ctx, op): ...

ge.register_pass(FoldMyScale, after="ge-constant-fold")   # runs wherever ge-constant-fold runs
ge.register_fusion_pattern("my-fuse-swish", FuseSwish)    # a RewritePattern; runs with the fusions
```
A registered pass is known by its name to `ge-opt -p` (in the process that registered it, or
through `ge-opt --load-pass-plugin MODULE`), to pipeline specs and, for a fusion pattern, to
fusion switch files (`{"Switch": {"GraphFusion": {"my-fuse-swish": "off"}}}`) and the fusion
report. Without `after`, a pass runs only where it is named.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import RewritePattern
from xdsl.universe import Universe

from ge.errors import GeError

from . import PASSES
from .driver import pattern_name, rewrite
from .pipelines import CUSTOM_FUSION, CUSTOM_STAGES, XDSL_PASSES
from .session import current

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
"""Pass names are kebab-case, as `ge-fuse-conv-bn`."""

_BUILT_IN = frozenset(PASSES) | frozenset(XDSL_PASSES)


if TYPE_CHECKING:
    PatternFactory = staticmethod[[], RewritePattern]
else:  # xDSL reads a pass's annotations at run time, and staticmethod takes no parameters before 3.12
    PatternFactory = staticmethod
"""What makes a registered pattern (a class or a function), kept unbound as a staticmethod."""


def _taken(name: str) -> str | None:
    """Who has `name` already: a built-in pass, one of xDSL's (which `ge-opt -p` offers too), a
    registered pass, or None."""
    if name in _BUILT_IN:
        return "a built-in pass"
    if name in Universe.get_multiverse().all_passes:
        return "an xDSL pass"
    if name in PASSES:
        return "another registered pass"
    return None


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise GeError(f"{what} needs a kebab-case name such as 'my-fold-scale', got {name!r}")
    return name


def register_pass(
    pass_class: type[ModulePass], description: str | None = None, *, after: str | None = None
) -> type[ModulePass]:
    """Makes `pass_class` (a `ModulePass` with a kebab-case `name`; its options are dataclass
    fields) known by its name; with `after`, every pipeline that runs that pass runs this one
    right after it. Returns the class, so it also serves as a decorator. Registering the same
    class again does nothing."""
    if not (isinstance(pass_class, type) and issubclass(pass_class, ModulePass)):
        raise GeError(f"register_pass takes a ModulePass subclass, got {pass_class!r}")
    name = _check_name(getattr(pass_class, "name", None), f"pass {pass_class.__name__}")
    if description is not None and not isinstance(description, str):
        raise GeError(f"register_pass: the description of '{name}' must be text, got {description!r}")
    if after is not None and after not in PASSES and after not in XDSL_PASSES:
        raise GeError(
            f"register_pass: '{name}' cannot run after '{after}', which is no pass "
            f"(known: {', '.join(PASSES)})"
        )
    if name in PASSES and PASSES[name][0]() is pass_class and CUSTOM_STAGES.get(name) == after:
        return pass_class
    if (owner := _taken(name)) is not None:
        raise GeError(f"pass name '{name}' is taken by {owner}; unregister_pass('{name}') first")
    doc = (pass_class.__doc__ or "").strip().splitlines()
    PASSES[name] = (lambda: pass_class, description or (doc[0] if doc else "a registered pass"))
    if after is not None:
        CUSTOM_STAGES[name] = after
    return pass_class


@dataclass(frozen=True)
class FusionPatternPass(ModulePass):
    """A registered fusion pattern as a pass: the pattern applied greedily until it no longer
    matches; each rewrite is counted in the fusion report. (Not `RewritesOnly`: nothing promises
    that a user's pattern changes the IR only through the rewriter, so its output is verified.)"""

    name = "fusion-pattern"
    PATTERN: ClassVar[PatternFactory]
    """What makes the pattern (a class or a function), stored as a staticmethod so it stays unbound."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        session = current()
        pattern = type(self).PATTERN()
        rewrite(op, [pattern], session)
        applied = session.rewrites.get(self.name, {}).get(pattern_name(pattern), 0)
        counts = session.patterns.setdefault(self.name, {})
        counts[pattern_name(pattern)] = {"matched": applied, "applied": applied}


def register_fusion_pattern(
    name: str, pattern: Callable[[], RewritePattern], description: str | None = None
) -> type[ModulePass]:
    """Registers `pattern` (a `RewritePattern` class, or anything that makes one with no
    arguments) as the fusion pass `name`, run after the built-in fusions at O2 and O3 and named
    in fusion switch files and the fusion report. Returns the pass class."""
    name = _check_name(name, "register_fusion_pattern")
    try:
        probe = pattern() if callable(pattern) else None
    except Exception as error:  # the factory's own failure, named with the registration
        raise GeError(f"register_fusion_pattern('{name}'): {pattern!r}() fails: {error}") from None
    if not isinstance(probe, RewritePattern):
        raise GeError(
            f"register_fusion_pattern('{name}') takes a RewritePattern class, or a function that "
            f"makes one with no arguments, got {pattern!r}"
        )
    if name in CUSTOM_FUSION and getattr(PASSES[name][0](), "PATTERN", None) is pattern:
        return PASSES[name][0]()
    title = "".join(part.title() for part in name.split("-"))
    doc = description or f"the registered fusion pattern {getattr(pattern, '__name__', name)}"
    pass_class = dataclass(frozen=True)(
        type(title, (FusionPatternPass,), {"name": name, "PATTERN": staticmethod(pattern), "__doc__": doc})
    )
    register_pass(pass_class, doc)
    CUSTOM_FUSION.append(name)
    return pass_class


def unregister_pass(name: str) -> None:
    """Forgets a registered pass or fusion pattern (built-in passes stay)."""
    if name in _BUILT_IN:
        raise GeError(f"'{name}' is a built-in pass; only registered passes can be unregistered")
    if name not in PASSES:
        raise GeError(f"no registered pass is named '{name}'")
    followers = sorted(other for other, after in CUSTOM_STAGES.items() if after == name)
    if followers:
        raise GeError(f"'{followers[0]}' runs after '{name}'; unregister it first")
    del PASSES[name]
    CUSTOM_STAGES.pop(name, None)
    if name in CUSTOM_FUSION:
        CUSTOM_FUSION.remove(name)


def load_pass_plugin(plugin: str) -> None:
    """Imports `plugin` (a module name or a `.py` file) for the passes it registers, as
    `ge-opt --load-pass-plugin` and `ge-bisect --load-pass-plugin` do."""
    try:
        if plugin.endswith(".py"):
            path = Path(plugin)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None or not path.is_file():
                raise GeError(f"pass plugin '{plugin}' is not a readable Python file")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            importlib.import_module(plugin)
    except GeError:
        raise
    except Exception as error:  # the plugin's own failure, whatever it is, named with the plugin
        raise GeError(f"pass plugin '{plugin}' failed to load: {type(error).__name__}: {error}") from None
