#!/usr/bin/env bash
# On the CUDA machine, from the repository root: the Python tests of tile copies and matrix
# groups (CuPy and PyTorch arrays there) with the wheel of target/python-carry, made here by
# `KDSL_CARRY_WITHOUT_COMPILER=1 bash scripts/python-gpu-package.sh` (its bundle cache holds
# the kernels, so no compiler is needed there). Results in $OUT/pytest.txt.
here=target/python-carry
site=$here/site
rm -rf "$site" && mkdir -p "$site"
for wheel in "$here"/wheels/*.whl; do
  python3 -m pip install -q --disable-pip-version-check --no-deps --no-index --target "$site" "$wheel" 2>/dev/null \
    || python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$site"
done
PYTHONPATH=$site KDSL_CACHE_DIR=$here/cache timeout "${PYLIMIT:-150}" python3 -m pytest -q -p no:cacheprovider -rs \
  python/tests/test_tile_copies.py python/tests/test_examples.py -k "tile or matrix_groups" > "$OUT/pytest.txt" 2>&1
echo "pytest rc=$?"
tail -5 "$OUT/pytest.txt"
