"""Python's arguments are declared once, in the extension's signatures
(`#[pyo3(signature = ...)]`), and every other layer is checked against them:
the stubs (`_native.pyi`), the wrappers of `lockstep/runs.py` (each
argument passed on and documented) and the README's list of the keyword
arguments every run takes."""

from __future__ import annotations

import ast
import inspect
import re

import lockstep
from lockstep import _native, runs

from conftest import REPO

STUBS = REPO / "python" / "lockstep" / "_native.pyi"
KINDS = {
    "posonlyargs": inspect.Parameter.POSITIONAL_ONLY,
    "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "kwonlyargs": inspect.Parameter.KEYWORD_ONLY,
}


def stub_params(fn: ast.FunctionDef, method: bool):
    """(name, kind, default) of a stub's parameters, `self` left out."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(positional, defaults):
        kind = KINDS["posonlyargs"] if arg in a.posonlyargs else KINDS["args"]
        out.append((arg.arg, kind, inspect.Parameter.empty if d is None else ast.literal_eval(d)))
    if a.vararg:
        out.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, KINDS["kwonlyargs"], inspect.Parameter.empty if d is None else ast.literal_eval(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty))
    return out[1:] if method and out and out[0][0] in ("self", "cls") else out


def native_params(obj):
    """(name, kind, default) of the extension's parameters, `self` left out."""
    params = [(p.name, p.kind, p.default) for p in inspect.signature(obj).parameters.values()]
    return params[1:] if params and params[0][0] == "self" else params


def stubbed():
    """Every function and method the stubs declare: (qualified name, the
    extension's object, the stub's parameters)."""
    tree = ast.parse(STUBS.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, getattr(_native, node.name), stub_params(node, False)
        elif isinstance(node, ast.ClassDef):
            cls = getattr(_native, node.name)
            for f in node.body:
                if not isinstance(f, ast.FunctionDef):
                    continue
                decorators = {getattr(d, "id", None) for d in f.decorator_list}
                if "property" in decorators or f.name in ("__enter__", "__exit__"):
                    continue
                obj = cls if f.name == "__init__" else getattr(cls, f.name)
                yield f"{node.name}.{f.name}", obj, stub_params(f, "staticmethod" not in decorators)


def test_the_stubs_are_the_extensions_signatures():
    checked = 0
    for name, obj, params in stubbed():
        try:
            native = native_params(obj)
        except ValueError:
            continue  # no text signature to compare with (a dunder)
        assert params == native, f"{name}: the stub says {params}, the extension {native}"
        checked += 1
    assert checked >= 30, checked


WRAPPERS = {
    runs.fly: _native._fly,
    runs.montecarlo: _native._montecarlo,
    runs.montecarlo_run: _native._montecarlo_run,
    runs.compare_integrators: _native._compare_integrators,
}


def test_each_wrapper_takes_passes_on_and_documents_the_extensions_arguments():
    for wrapper, native in WRAPPERS.items():
        w = [(p.name, p.kind) for p in inspect.signature(wrapper).parameters.values()]
        n = [(p.name, p.kind) for p in inspect.signature(native).parameters.values()]
        assert w == n, f"{wrapper.__name__}: {w} against {native.__name__}: {n}"
        source = inspect.getsource(wrapper)
        call = source[source.index(f"_native.{native.__name__}(") :]
        doc = inspect.getdoc(wrapper)
        for name, kind in w:
            if kind == inspect.Parameter.KEYWORD_ONLY:
                assert f"{name}=" in call, f"{wrapper.__name__} does not pass {name} on"
            assert re.search(rf"^\s*{name}:|``{name}``", doc, re.M), f"{wrapper.__name__}'s docstring lacks {name}"


def test_the_readme_lists_the_keyword_arguments_every_run_takes():
    readme = (REPO / "README.md").read_text()
    said = readme[readme.index("The keyword arguments are the command line's options (") :]
    said = said[: said.index("`isolation`") + len("`isolation`")]
    listed = set(re.findall(r"`(\w+)`", said))
    every = set.intersection(
        *({p.name for p in inspect.signature(n).parameters.values()} for n in WRAPPERS.values())
    ) - {"scenario"}
    assert every <= listed, f"the README leaves out {sorted(every - listed)}"
    for name in listed:
        assert any(name in inspect.signature(n).parameters for n in WRAPPERS.values()), name
    assert lockstep.fly is runs.fly
