"""Shared fixtures: the repository, the command line built from it, and the
broken autopilot libraries the C examples build."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _cargo_artifacts(*args: str):
    out = subprocess.run(
        ["cargo", *args, "--message-format=json", "-q"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `lockstep` command line of this tree, built as CI's release
    build builds it (nothing to do after it; current whatever was built
    before)."""
    for m in _cargo_artifacts("build", "--release", "--workspace", "--locked"):
        if (
            m.get("reason") == "compiler-artifact"
            and m.get("executable")
            and m["target"]["name"] == "lockstep"
            and m["target"]["kind"] == ["bin"]
        ):
            return Path(m["executable"])
    raise RuntimeError("cargo built no lockstep executable")


@pytest.fixture(scope="session")
def broken_dir() -> Path:
    """The folder of the broken autopilot libraries (c_examples/broken)."""
    for m in _cargo_artifacts("build", "-p", "lockstep-c-examples", "--locked"):
        if m.get("reason") == "build-script-executed" and "lockstep-c-examples" in m.get("package_id", ""):
            d = Path(m["out_dir"]) / "broken"
            if d.is_dir():
                return d
    raise RuntimeError("cargo reported no build of lockstep-c-examples")


@pytest.fixture
def abi3_autopilot(broken_dir) -> str:
    """The reference autopilot built against the ABI-3 header (next to the
    broken libraries' folder)."""
    p = broken_dir.parent / "liblockstep_autopilot_abi3.so"
    assert p.exists(), p
    return str(p)


@pytest.fixture
def broken(broken_dir):
    def lib(name: str) -> str:
        p = broken_dir / f"liblockstep_broken_{name}.so"
        assert p.exists(), p
        return str(p)

    return lib


IDLE = """schema_version = 1
description = "idle, no mission"

[simulation]
seed = 7
duration_s = {duration}
integrator = "rk4"

[cadences]
physics = {{ rate_hz = 1000 }}
autopilot = {{ rate_hz = 250 }}
log = {{ rate_hz = 10 }}

[vehicle]
spec = "iris"
"""


@pytest.fixture
def idle(tmp_path) -> Path:
    """A scenario without a mission: the Iris on the ground for 8 s."""
    p = tmp_path / "idle.toml"
    p.write_text(IDLE.format(duration=8.0))
    return p


def run_cli(cli: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, cwd=REPO)


@pytest.fixture
def lockstep_cli(cli):
    def run(*args: str) -> subprocess.CompletedProcess:
        return run_cli(cli, *args)

    return run


def default_scenario() -> str:
    return str(REPO / "examples" / "scenarios" / "square.toml")


@pytest.fixture
def square() -> str:
    return default_scenario()


os.environ.setdefault("PYTHONHASHSEED", "0")
