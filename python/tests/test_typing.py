"""What users see of the launch API without running it: mypy types ``kernel[g, l](...)`` as
an ``Event`` (so a typo such as ``event.wiat()`` is an error), and ``help()`` and
``inspect.signature`` show each kernel's own parameters."""

from __future__ import annotations

import importlib.util
import inspect
import pydoc
import subprocess
import sys

import pytest
from conftest import example

USER_CODE = """
import kdsl

module = kdsl.compile(path="saxpy.krn")
launch = module.saxpy[1024, 256]
event = launch(None, None, 2.0, 1000)
event.wait()
nanoseconds: int = event.elapsed_ns
reveal_type(launch)
reveal_type(event)
event.wiat()
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed here")
def test_mypy_types_a_launch_as_an_event(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(USER_CODE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), str(user)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    lines = result.stdout.splitlines()
    assert any('Revealed type is "kdsl._runtime.Configured"' in line for line in lines), result.stdout
    assert any('Revealed type is "kdsl._runtime.Event"' in line for line in lines), result.stdout
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1 and '"Event" has no attribute "wiat"' in errors[0], result.stdout


def test_help_shows_each_kernels_own_parameters():
    module = example("kmeans")
    update = pydoc.render_doc(module.kmeans_update, renderer=pydoc.plaintext)
    assign = pydoc.render_doc(module.kmeans_assign, renderer=pydoc.plaintext)
    assert "kmeans_update(centroids_t: global mut [[f32]], half_norms: global mut [f32]" in update
    assert "x_t" not in update
    assert "x_t: an array of f32 (read only)" in assign
    assert "Requires the work-group size (256, 1, 1)" in assign
    signature = inspect.signature(module.kmeans_update)
    assert list(signature.parameters)[:4] == ["centroids_t", "half_norms", "sums", "counts"]
    assert signature.parameters["global_size"].kind is inspect.Parameter.KEYWORD_ONLY
    assert signature.return_annotation == "Event"


def test_a_configured_launch_documents_itself():
    launch = example("saxpy").saxpy[1024, 256]
    assert "returns a `kdsl.Event`" in type(launch).__doc__
    import kdsl

    assert type(launch) is kdsl.Launch
    for name in ("compile", "Module", "Kernel"):
        assert "Example::" in inspect.getdoc(getattr(kdsl, name)), name
