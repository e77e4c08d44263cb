#!/usr/bin/env bash
# Run here, where PyPI is reachable, before a GPU check on a machine that has no network.
#
#   bash benchmarks/gpu_prepare.sh [PYTHON_VERSION]      # default 3.12, the lent GPU image's
#
# The lent GPU machines run an image with PyTorch (CUDA), NumPy, pandas, PyArrow, scikit-learn,
# matplotlib, PyYAML, setuptools and pytest, but not jsonschema, which whcore needs to read a
# job's spec. This fetches jsonschema and its dependencies as wheels for that machine's Python
# into .whcore/device/wheels (about 0.6 MB; git ignores it), and checks that the binarized
# datasets the cost table's real-data rows need exist. Then send both along with the check:
#
#   command: bash benchmarks/gpu_check.sh
#   carry:   .whcore/device, resources/data
#
# gpu_check.sh installs whcore (editable, no dependencies) and these wheels with --no-index
# before its first step.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-3.12}"
wheels=.whcore/device/wheels
rm -rf "$wheels"
mkdir -p "$wheels"
python3 -m pip download --isolated --index-url https://pypi.org/simple --only-binary=:all: \
  --python-version "$version" --implementation cp --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --dest "$wheels" --quiet jsonschema
echo "wheels for Python $version in $wheels: $(ls "$wheels" | tr '\n' ' ')"
missing=0
# The paper's datasets: the registry's, as the generated config schema lists them.
datasets=$(awk '/^  paper_dataset:/ {getline; gsub(/.*\[|\].*/, ""); gsub(/,/, ""); print}' \
  workflow/schemas/config.schema.yaml)
for dataset in $datasets; do
  if [ ! -f "resources/data/$dataset.parquet" ]; then
    echo "resources/data/$dataset.parquet is missing (the cost table will skip its rows):" \
      "build it with snakemake resources/data/$dataset.parquet --cores 2 --configfile config/quick.yaml"
    missing=1
  fi
done
[ "$missing" = 0 ] && echo "resources/data: every binarized dataset is there"
exit 0
