"""The `protocol.messages` package: one import path for every model of every family module."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

from protocol import messages


def _public_names(module_name: str) -> set[str]:
    """Return the public names a module defines at its top level (not those it imports)."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module_name)))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def test_every_public_name_of_a_family_module_is_exported_by_the_package() -> None:
    exported = set(messages.__all__)
    for info in pkgutil.iter_modules(messages.__path__):
        module_name = f"{messages.__name__}.{info.name}"
        missing = _public_names(module_name) - exported
        assert not missing, f"{module_name} defines {sorted(missing)}, not in __all__"


def test_every_exported_name_is_listed_once_and_resolves() -> None:
    assert len(messages.__all__) == len(set(messages.__all__))
    for name in messages.__all__:
        assert hasattr(messages, name), name
