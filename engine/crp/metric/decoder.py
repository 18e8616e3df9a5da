"""Metric decoders: TOML files (resources/decoders/*.toml) that say how arc and turn
properties become integral costs for CRP customization. A decoder is pure data: this
module reads and checks it; engine.crp.metric.program compiles it for one graph and
engine.crp.metric.costs runs it.

Schema (every key but ``name`` and ``kind`` is optional)::

    name = "car-fastest"          # shown in the window
    description = "..."
    kind = "time"                 # time: deciseconds from length and speed
                                  # distance: metres; metric: a metric column x scale
    metric = "travel_time"        # kind = "metric" only: the column to read
    scale = 1.0                   # kind = "metric" only: > 0
    use_maxspeed = false          # time: the arc's own speed_kmh where it has one
    max_speed = 130               # km/h cap on every speed
    forbid = ["ferry", "toll"]    # road classes, or tags: toll, unpaved
    expression = "cost * where(lanes >= 3, 0.9, 1)"   # replaces the cost; see expression.py

    [speeds]                      # km/h per road class; kind = "time" needs every class
    motorway = 120
    [multipliers]                 # per road class, > 0, default 1
    residential = 1.3
    [turns]                       # seconds (time), metres (distance), the column's units
                                  # (metric; scaled like the column)
    straight = 0
    slight = 1                    # shorthand for slight_left and slight_right
    right = 2
    sharp = 4                     # shorthand for sharp_left and sharp_right
    left = 5
    u_turn = "forbidden"          # any turn type may be "forbidden"

An explicit ``slight_left`` (etc.) overrides the shorthand. Errors read
``file:line: field: reason``. Before tomllib reads a text (it recurses into arrays and
inline tables, and a long dotted key costs it quadratic time), the text is bounded:
MAX_TOML_BYTES, arrays and inline tables nested at most MAX_TOML_DEPTH deep, dotted
keys of at most MAX_TOML_DEPTH parts.
"""
from __future__ import annotations

import json
import math
import re
import importlib.resources
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from engine.crp.metric.expression import ExpressionError, parse
from engine.core.turns import TURN_TYPES
from engine.core.graph import ROAD_CLASSES

# the shipped decoders: package data of ``resources`` (a real folder, in the wheel too)
DECODER_DIR = Path(str(importlib.resources.files("resources").joinpath("decoders")))
KINDS = ("time", "distance", "metric")
FORBID_TAGS = ("toll", "unpaved")
FORBIDDEN_TURN = "forbidden"
SHORTHANDS = {"slight": ("slight_left", "slight_right"), "sharp": ("sharp_left", "sharp_right")}
TURN_KEYS = tuple(SHORTHANDS) + TURN_TYPES
_TOP_KEYS = ("name", "description", "kind", "metric", "scale", "use_maxspeed",
             "max_speed", "forbid", "expression", "speeds", "multipliers", "turns")
_TABLES = ("speeds", "multipliers", "turns")
MAX_SPEED_KMH, MAX_VALUE = 500.0, 1e6
MAX_TOML_BYTES = 2**18       # a decoder is a few hundred bytes
MAX_TOML_DEPTH = 16          # a decoder nests 2 deep: [turns], then key = value


class DecoderError(ValueError):
    """A decoder that cannot be used; the message says file:line: field: reason."""


@dataclass(frozen=True)
class Decoder:
    name: str
    kind: str
    description: str = ""
    metric: str | None = None
    scale: float = 1.0
    use_maxspeed: bool = False
    max_speed: float | None = None
    forbid: tuple[str, ...] = ()
    expression: str | None = None
    speeds: tuple[tuple[str, float], ...] = ()         # (class, km/h) as written
    multipliers: tuple[tuple[str, float], ...] = ()    # (class, factor) as written
    turns: tuple[tuple[str, float | str], ...] = ()    # (turn key, cost or "forbidden")
    source: str = field(default="<text>", compare=False)

    def turn_costs(self) -> dict[str, float | str]:
        """Cost (in the TOML's units) or "forbidden" for each of TURN_TYPES."""
        costs: dict[str, float | str] = dict.fromkeys(TURN_TYPES, 0.0)
        for key, value in self.turns:                  # shorthands first, explicit wins
            for t in SHORTHANDS.get(key, ()):
                costs[t] = value
        costs.update((k, v) for k, v in self.turns if k not in SHORTHANDS)
        return costs

    def to_toml(self) -> str:
        """The decoder as TOML text that parse_decoder reads back to an equal decoder."""
        out = [f"name = {_str(self.name)}", f"description = {_str(self.description)}",
               f"kind = {_str(self.kind)}"]
        if self.metric is not None:
            out += [f"metric = {_str(self.metric)}", f"scale = {_num(self.scale)}"]
        if self.use_maxspeed:
            out.append("use_maxspeed = true")
        if self.max_speed is not None:
            out.append(f"max_speed = {_num(self.max_speed)}")
        if self.forbid:
            out.append(f"forbid = [{', '.join(_str(f) for f in self.forbid)}]")
        if self.expression is not None:
            out.append(f"expression = {_str(self.expression)}")
        for table in _TABLES:
            rows = getattr(self, table)
            if rows:
                out += ["", f"[{table}]"] + [f"{k} = {_num(v)}" for k, v in rows]
        return "\n".join(out) + "\n"


def _str(s: str) -> str:
    return json.dumps(s)              # a JSON string is a TOML basic string


def _num(v) -> str:
    if isinstance(v, str):
        return _str(v)
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def shipped_decoders() -> list[str]:
    """Names of the decoders in resources/decoders, sorted."""
    return sorted(p.stem for p in DECODER_DIR.glob("*.toml"))


def load_decoder(name_or_path) -> Decoder:
    """A shipped decoder by name ("car-fastest") or a decoder file by path."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or "\\" in text or text.endswith(".toml"):
        path = Path(name_or_path)
    else:
        path = DECODER_DIR / f"{text}.toml"
        if not path.exists():
            raise DecoderError(f"{text}: no such decoder (shipped: "
                               f"{', '.join(shipped_decoders())})")
    return parse_decoder(_read(path), source=str(path))


def _read(path: Path) -> str:
    """A decoder file's text: a regular file of at most MAX_TOML_BYTES."""
    import stat
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise DecoderError(f"{path}: not a regular file (a decoder is a .toml file)")
        if info.st_size > MAX_TOML_BYTES:
            raise DecoderError(f"{path}: file too large ({info.st_size:,} bytes; a decoder "
                               f"is at most {MAX_TOML_BYTES:,})")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror.lower() if isinstance(e, OSError) and e.strerror else e
        raise DecoderError(f"{path}: cannot read: {reason}") from None


def parse_decoder(text: str, source: str = "<text>") -> Decoder:
    """The decoder in TOML ``text``; ``source`` names it in error messages."""
    _check_bounds(text, source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        match = re.search(r"line (\d+)", str(e))
        raise DecoderError(f"{source}:{match.group(1) if match else 1}: syntax: {e}") from None
    except RecursionError:           # _check_bounds keeps tomllib far from it
        raise DecoderError(f"{source}:1: syntax: nested too deeply") from None
    check = _Checker(text, source)
    for key in data:
        if key not in _TOP_KEYS:
            check.fail(None, key, f"unknown key (allowed: {', '.join(_TOP_KEYS)})")
    kind = check.choice(data, "kind", KINDS, required=True)
    decoder = Decoder(
        name=check.string(data, "name", required=True),
        kind=kind,
        description=check.string(data, "description") or "",
        metric=_metric(check, data, kind),
        scale=check.number(data, None, "scale", 1.0, low=0.0) if kind == "metric" else 1.0,
        use_maxspeed=check.boolean(data, "use_maxspeed"),
        max_speed=check.number(data, None, "max_speed", None, low=0.0, high=MAX_SPEED_KMH),
        forbid=_forbid(check, data),
        expression=_expression(check, data),
        speeds=_class_table(check, data, "speeds", MAX_SPEED_KMH, need_all=kind == "time"),
        multipliers=_class_table(check, data, "multipliers", MAX_VALUE, need_all=False),
        turns=_turns(check, data),
        source=source)
    if kind != "metric" and "scale" in data:
        check.fail(None, "scale", 'only a kind = "metric" decoder has a scale')
    return decoder


_TOML_SCAN = re.compile(r'''      # a string left open runs to its line's end (the text's):
    (?P<string>"""(?:\\.|[^\\])*?(?:"{3,5}|\\?\Z)  # one pass, never a rescan per quote;
      | '{3}.*?(?:'{3,5}|\Z)                        # up to 2 quotes may end the content
      | "(?:\\[^\n]|[^"\\\n])*(?:"|\\?(?=\n)|\\?\Z)
      | '[^'\n]*(?:'|(?=\n)|\Z))
  | (?P<comment>\#[^\n]*)
  | (?P<open>[\[{]) | (?P<close>[\]}]) | (?P<dot>\.) | (?P<newline>\n)
''', re.VERBOSE | re.DOTALL)
_KEY_GAP = re.compile(r"[A-Za-z0-9_\- \t]*")     # between the parts of a dotted key
_ENDS_KEY = ("open", "close", "newline", "comment")


def _check_bounds(text: str, source: str) -> None:
    """DecoderError for a text tomllib should not be given: too long, arrays or inline
    tables nested more than MAX_TOML_DEPTH deep, a dotted key of more parts."""
    if len(text) > MAX_TOML_BYTES:
        raise DecoderError(f"{source}:1: the decoder is longer than {MAX_TOML_BYTES:,} "
                           "characters")
    line, depth, parts, end = 1, 0, 1, 0
    for match in _TOML_SCAN.finditer(text):
        kind = match.lastgroup
        if kind in _ENDS_KEY or not _KEY_GAP.fullmatch(text, end, match.start()):
            parts = 1                                  # no dotted key goes on here
        end = match.end()
        depth = depth + 1 if kind == "open" else max(depth - 1, 0) if kind == "close" else depth
        parts += kind == "dot"
        if depth > MAX_TOML_DEPTH:
            raise DecoderError(f"{source}:{line}: syntax: arrays and inline tables nested "
                               f"more than {MAX_TOML_DEPTH} deep")
        if parts > MAX_TOML_DEPTH:
            raise DecoderError(f"{source}:{line}: syntax: a dotted key of more than "
                               f"{MAX_TOML_DEPTH} parts")
        line += match.group().count("\n")


def _metric(check: "_Checker", data: dict, kind: str) -> str | None:
    metric = check.string(data, "metric", required=kind == "metric")
    if metric is not None and kind != "metric":
        check.fail(None, "metric", f'only a kind = "metric" decoder reads a metric column '
                                   f'(this one is kind = "{kind}")')
    return metric


def _forbid(check: "_Checker", data: dict) -> tuple[str, ...]:
    items = data.get("forbid", [])
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        check.fail(None, "forbid", "must be a list of strings, e.g. [\"ferry\", \"toll\"]")
    for item in items:
        if item not in ROAD_CLASSES and item not in FORBID_TAGS:
            check.fail(None, "forbid", f"unknown class or tag '{item}' (classes: "
                                       f"{', '.join(ROAD_CLASSES)}; tags: {', '.join(FORBID_TAGS)})")
    return tuple(items)


def _expression(check: "_Checker", data: dict) -> str | None:
    text = check.string(data, "expression")
    if text is not None:
        try:
            parse(text)
        except ExpressionError as e:
            check.fail(None, "expression", str(e))
    return text


def _class_table(check: "_Checker", data: dict, table: str, high: float,
                 need_all: bool) -> tuple[tuple[str, float], ...]:
    rows = check.table(data, table)
    for key in rows:
        if key not in ROAD_CLASSES:
            check.fail(table, key, f"unknown road class (classes: {', '.join(ROAD_CLASSES)})")
    missing = [c for c in ROAD_CLASSES if c not in rows]
    if need_all and missing:
        check.fail(table, None, f'a kind = "time" decoder needs a speed for every road '
                                f'class; missing: {", ".join(missing)}')
    return tuple((k, check.number(rows, table, k, None, low=0.0, high=high)) for k in rows)


def _turns(check: "_Checker", data: dict) -> tuple[tuple[str, float | str], ...]:
    rows = check.table(data, "turns")
    out = []
    for key, value in rows.items():
        if key not in TURN_KEYS:
            check.fail("turns", key, f"unknown turn type (types: {', '.join(TURN_KEYS)})")
        if value == FORBIDDEN_TURN:
            out.append((key, FORBIDDEN_TURN))
        else:
            out.append((key, check.number(rows, "turns", key, None, low=0.0, high=MAX_VALUE,
                                          zero_ok=True, alt=f'or "{FORBIDDEN_TURN}"')))
    return tuple(out)


class _Checker:
    """Typed reads of TOML values; failures name the line of the offending key."""

    def __init__(self, text: str, source: str) -> None:
        self.lines, self.source = text.splitlines(), source

    def line(self, table: str | None, key: str | None) -> int:
        current, header_line = None, 1
        for i, raw in enumerate(self.lines, 1):
            header = re.match(r"\s*\[\s*([^\]\s]+)\s*\]", raw)
            if header:
                current = header.group(1).strip('"')
                if current == table:
                    header_line = i
                continue
            if current == table and key is not None and \
                    re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=", raw):
                return i
        return header_line

    def fail(self, table: str | None, key: str | None, reason: str):
        name = ".".join(p for p in (table, key) if p)
        raise DecoderError(f"{self.source}:{self.line(table, key)}: {name}: {reason}")

    def table(self, data: dict, table: str) -> dict:
        rows = data.get(table, {})
        if not isinstance(rows, dict):
            self.fail(None, table, f"must be a table: [{table}] followed by key = value lines")
        return rows

    def string(self, data: dict, key: str, required: bool = False) -> str | None:
        value = data.get(key)
        if value is None and required:
            self.fail(None, key, "missing (it is required)")
        if value is not None and not isinstance(value, str):
            self.fail(None, key, f"must be a string, got {_type(value)}")
        return value

    def choice(self, data: dict, key: str, choices, required: bool = False) -> str:
        value = self.string(data, key, required)
        if value not in choices:
            self.fail(None, key, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def boolean(self, data: dict, key: str) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.fail(None, key, f"must be true or false, got {_type(value)}")
        return value

    def number(self, rows: dict, table: str | None, key: str, default, low: float,
               high: float = MAX_VALUE, zero_ok: bool = False, alt: str = ""):
        """rows[key] as a float in (low, high] ([low, high] with zero_ok)."""
        if key not in rows:
            return default
        value = rows[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(table, key, f"must be a number{' ' + alt if alt else ''}, got {_type(value)}")
        value = float(value)
        too_low = value < low if zero_ok else value <= low
        if not math.isfinite(value) or too_low or value > high:
            bound = ">=" if zero_ok else ">"
            self.fail(table, key, f"must be {bound} {low:g} and <= {high:g}, got {value:g}")
        return value


def _type(value) -> str:
    return {bool: "a boolean", str: "a string", list: "a list", dict: "a table",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)
