# Shared setup for bin/test and bin/demo (sourced, not executed).
# Creates .venv on a clean clone and reinstalls requirements only when
# requirements.txt changed since the last install (sha256 stamp in .venv).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"

ensure_venv() {
    if [ ! -x "$PY" ]; then
        echo "==> creating .venv" >&2
        python3 -m venv .venv
    fi
    local want have
    want="$(sha256sum requirements.txt | cut -d' ' -f1)"
    have="$(cat .venv/.requirements.sha256 2>/dev/null || true)"
    if [ "$want" != "$have" ]; then
        echo "==> installing requirements.txt" >&2
        "$PY" -m pip install --disable-pip-version-check -q -r requirements.txt
        echo "$want" > .venv/.requirements.sha256
    fi
    # The `kionga` command (pyproject's [project.scripts]); no dependencies, quick.
    if [ ! -x .venv/bin/kionga ] || [ "$(cat .venv/.kionga-root 2>/dev/null)" != "$ROOT" ]; then
        "$PY" -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
        echo "$ROOT" > .venv/.kionga-root
    fi
}

# wait_until SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.2 s.
wait_until() {
    local seconds="$1" what="$2"
    shift 2
    local tries=$((seconds * 5))
    until "$@" >/dev/null 2>&1; do
        tries=$((tries - 1))
        if [ "$tries" -le 0 ]; then
            echo "error: $what did not come up within ${seconds}s" >&2
            return 1
        fi
        sleep 0.2
    done
}
