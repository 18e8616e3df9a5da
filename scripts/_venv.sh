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
# PySide6 needs a few system libraries that a bare Debian lacks; install them as root.
if ! "$VENV/bin/python" -c "from PySide6 import QtGui" 2>/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "routelab: installing the system libraries Qt needs" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            libgl1 libxkbcommon0 libegl1 libglib2.0-0 libfreetype6 libfontconfig1 libdbus-1-3 >/dev/null
    else
        echo "routelab: Qt cannot load; install libgl1 libxkbcommon0 libegl1 libglib2.0-0 libfreetype6 libfontconfig1 libdbus-1-3" >&2
    fi
fi
