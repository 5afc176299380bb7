#!/usr/bin/env bash
# Installs the kdsl-gpu wheel (scripts/build-wheel.sh, rebuilt only when its sources changed) the
# way a user would: `pip install "<wheel>[sycl,test]"` into a fresh virtual environment made with
# `python -m venv` ($KDSL_VENV, default .kdsl/venv), its dependencies from PyPI (through pip's
# cache). The venv is made again only when the wheel changed. Prints the venv's python.
# Called by scripts/setup.sh; scripts/test.sh runs python/tests with that python, without
# scripts/env.sh's variables.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/env.sh
venv=${KDSL_VENV:-$root/.kdsl/venv}
wheel=$(bash scripts/build-wheel.sh)
stamp=$venv/.kdsl-wheel.sha256
hash=$(sha256sum "$wheel" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && "$venv/bin/python" -c "import kdsl" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi
# The interpreter the prefix was made from: a plain Python, not the prefix's environment.
base_python=${KDSL_VENV_PYTHON:-$("$KDSL_PREFIX/bin/python" -c 'import sys; print(sys._base_executable)')}
echo "python-install: a fresh venv at $venv with $(basename "$wheel")[sycl,test]" >&2
rm -rf "$venv"
"$base_python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel[sycl,test]" >&2
echo "$hash" > "$stamp"
echo "$venv/bin/python"
