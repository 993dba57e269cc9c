"""The README's Python section runs as written (from the repository root's
point of view: its relative paths are the repository's)."""

from __future__ import annotations

import re

import pytest

from conftest import REPO


def blocks():
    text = (REPO / "README.md").read_text()
    start = text.index("## Python: runs, stepping and Gymnasium environments")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_the_readme_has_its_python_examples():
    assert len(blocks()) == 3


@pytest.mark.parametrize("index", range(3))
def test_each_readme_python_example_runs(index, tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    code = blocks()[index].replace('"examples/', f'"{REPO}/examples/')
    # The last example's random rollout: shorter here.
    code = code.replace("range(1000)", "range(50)")
    import matplotlib

    matplotlib.use("Agg")
    exec(compile(code, f"README python block {index}", "exec"), {})
