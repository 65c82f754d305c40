#!/usr/bin/env bash
# The tests that depend on the interpreter, on every supported CPython this machine has.
#
#   bash scripts/test_pythons.sh [VERSION ...]      (default: 3.10 3.11 3.12 3.13)
#
# For each version it finds (pythonX.Y on PATH, else a pyenv install), it makes .venvs/pyX.Y, installs
# the package there (building the compiled scan for that interpreter) with the oracles, and runs the
# compiled-vs-Python differential tests, the oracle tests against pytrec_eval and BEIR's evaluation
# module, the component tests, and the FAISS store (faiss-cpu's wheel on each interpreter). beir goes in with --no-deps: its evaluation module needs only
# pytrec_eval, and its other dependencies pull torch. Versions not on this machine are reported and
# skipped; SKIP_PYTHON=X.Y leaves one out (make test runs the whole suite on that one).
set -uo pipefail
cd "$(dirname "$0")/.."

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.10 3.11 3.12 3.13)

MODULES=(
  tests/test_native_judged.py tests/test_native_ranked.py tests/test_native_scan.py
  tests/test_differential.py tests/test_ranked.py tests/test_kernels.py tests/test_goldens.py
  tests/test_measures_crosscheck.py tests/test_real_data.py
  tests/test_components.py tests/test_components_fastpath.py tests/test_components_parity.py
  tests/test_beir_faiss.py
)

find_python() {
  local v=$1 exe
  if exe=$(command -v "python$v" 2>/dev/null) && "$exe" -c 'import sys' >/dev/null 2>&1; then
    echo "$exe"; return 0
  fi
  for exe in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v"; do
    # Only CPython builds of exactly this version (no "t" free-threaded or other implementations).
    if [ -x "$exe" ] && "$exe" -c "import sys; assert sys.implementation.name == 'cpython' and '%d.%d' % sys.version_info[:2] == '$v'" 2>/dev/null; then
      echo "$exe"; return 0
    fi
  done
  return 1
}

status=0
summary=()
for v in "${versions[@]}"; do
  if [ "${SKIP_PYTHON:-}" = "$v" ]; then
    summary+=("python$v: skipped here (SKIP_PYTHON: the whole suite runs on it)"); continue
  fi
  if ! py=$(find_python "$v"); then
    summary+=("python$v: not on this machine, not tested"); continue
  fi
  env=".venvs/py$v"
  echo "== python$v ($py) -> $env"
  start=$SECONDS
  if ! { [ -x "$env/bin/python" ] || "$py" -m venv "$env"; } ||
     ! "$env/bin/python" -m pip install -q -e . "pytest>=8" "hypothesis>=6.100" "pytrec-eval-terrier==0.5.11" "faiss-cpu>=1.9" ||
     ! "$env/bin/python" -m pip install -q --no-deps "beir==2.2.0"; then
    summary+=("python$v: install FAILED"); status=1; continue
  fi
  # The compiled scan must have been built for this interpreter: its tests would skip otherwise.
  if ! "$env/bin/python" -c 'import haystack_irmetrics.core._rank'; then
    summary+=("python$v: the compiled scan was not built"); status=1; continue
  fi
  # The default hypothesis profile (100 examples): the main interpreter runs CI's 300 (HYPOTHESIS_PROFILE=thorough: 1,000).
  HYPOTHESIS_PROFILE="${PYTHONS_HYPOTHESIS_PROFILE:-default}" \
    "$env/bin/python" -m pytest -q -p no:cacheprovider "${MODULES[@]}" 2>&1 | tee "$env/pytest.log" | tail -n 25
  rc=${PIPESTATUS[0]}
  last=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$env/pytest.log" | tail -n 1)
  summary+=("python$v: ${last:-no summary} (exit $rc, $((SECONDS - start)) s)")
  [ "$rc" -eq 0 ] || status=1
done

echo "== interpreters"
printf '%s\n' "${summary[@]}"
exit $status
