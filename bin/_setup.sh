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

# The designer canvas (designer/frontend): `npm ci` when package-lock.json changed since
# the last install, `npm run build` when its sources changed since the last build (sha256
# stamps, like ensure_venv's). Without node/npm nothing is built: the designer page says
# "canvas not built" and everything else works.
CANVAS="$ROOT/designer/frontend"
canvas_sources_sha() {
    (cd "$CANVAS" && find src package.json package-lock.json vite.config.ts tsconfig.json -type f \
        ! -name '*.test.ts' ! -name '*.test.tsx' ! -path 'src/test/*' | LC_ALL=C sort \
        | xargs sha256sum) | sha256sum | cut -d' ' -f1
}
ensure_canvas() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "==> no node/npm: the designer canvas is not built (its page says so)" >&2
        return 0
    fi
    local want have
    want="$(sha256sum "$CANVAS/package-lock.json" | cut -d' ' -f1)"
    have="$(cat "$CANVAS/node_modules/.lock.sha256" 2>/dev/null || true)"
    if [ "$want" != "$have" ]; then
        echo "==> npm ci (designer canvas)" >&2
        (cd "$CANVAS" && npm ci --no-audit --no-fund --loglevel=error)
        echo "$want" > "$CANVAS/node_modules/.lock.sha256"
    fi
    want="$(canvas_sources_sha)"
    have="$(cat "$CANVAS/.build-stamp" 2>/dev/null || true)"
    if [ "$want" != "$have" ] || [ ! -f "$ROOT/designer/static/designer/canvas/.vite/manifest.json" ]; then
        echo "==> building the designer canvas" >&2
        local out
        out="$(cd "$CANVAS" && npm run --silent build 2>&1)" || { echo "$out" >&2; return 1; }
        echo "$want" > "$CANVAS/.build-stamp"
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
