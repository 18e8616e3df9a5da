# Sourced by scripts/run and scripts/test: make sure .venv exists and holds the
# project (editable) with the extras named in $ROUTELAB_EXTRAS. Re-installs only
# when pyproject.toml or the extras change.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "routelab: creating $VENV" >&2
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
extras="${ROUTELAB_EXTRAS:-}"
stamp="$VENV/.routelab-installed"
hash="$("$VENV/bin/python" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$ROOT/pyproject.toml")"
want="$hash [$extras]"
# Any install of this pyproject serves a run without extras; extras need their own.
if [ -n "$extras" ]; then pattern="^$hash \\[$extras\\]\$"; else pattern="^$hash "; fi
if [ ! -f "$stamp" ] || ! grep -q "$pattern" "$stamp"; then
    echo "routelab: installing the project into $VENV${extras:+ with [$extras]}" >&2
    "$VENV/bin/python" -m pip install --quiet -e "$ROOT${extras:+[$extras]}"
    echo "$want" >> "$stamp"
fi
# Qt needs system libraries a bare Debian lacks (QtGui's, and the xcb plugin's, which
# Qt loads only when the window opens): app/window.py finds the missing ones with ldd
# and names their packages; installed once as root, else named.
missing="$("$VENV/bin/python" -m app.window --missing 2>/dev/null || true)"
if [ -n "$missing" ]; then
    tried="$VENV/.routelab-apt-tried"
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && ! grep -qxF "$missing" "$tried" 2>/dev/null; then
        echo "$missing" >> "$tried"
        echo "routelab: installing the system libraries Qt needs: $missing" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing; } >/dev/null 2>&1 \
            || echo "routelab: could not install $missing; the window may not open (the commands work)" >&2
    else
        echo "routelab: the window needs these system packages: $missing (apt-get install $missing)" >&2
    fi
fi
