"""The cost expression of a metric decoder: a tiny whitelisted language, parsed by
our own tokenizer and recursive-descent parser (never Python's eval, exec, compile
or ast), compiled to a postfix program that engine.crp.metric.costs runs per arc on
the GPU (engine/kernels/crp_decode.cu) and on the CPU (engine.crp.metric.interpreter).

Grammar (lowest precedence first)::

    expr    := or
    or      := and ('or' and)*
    and     := not ('and' not)*
    not     := 'not' not | compare
    compare := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?     (no chains)
    sum     := product (('+' | '-') product)*
    product := unary (('*' | '/') unary)*
    unary   := ('-' | '+') unary | atom
    atom    := NUMBER | NAME | FUNCTION '(' expr (',' expr)* ')' | '(' expr ')'

Values are float64; a comparison, ``and``, ``or`` and ``not`` give 1.0 or 0.0 (any
non-zero value is true). Functions: min(a, b), max(a, b), where(cond, a, b),
clamp(x, lo, hi). Names: the arc properties in PROPERTIES, the road classes
(``road_class == motorway``) and the graph's metric columns (KNOWN_METRICS).

Bounds, checked by the parser itself (ExpressionError at the column, never Python's
recursion limit): MAX_LENGTH characters, nesting at most MAX_DEPTH deep (each '(',
function call, sign and 'not' opens a level) and at most MAX_CODE steps (one per
number, name and operator), so every later walk of the tree is shallow.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from engine.core.graph import ROAD_CLASS_INDEX

# Property slots the interpreters read; metric column k is slot METRIC_SLOT0 + k.
PROPERTIES = ("length_m", "speed_kmh", "lanes", "road_class", "toll", "oneway",
              "roundabout", "time_s", "cost")
SLOT = {name: i for i, name in enumerate(PROPERTIES)}
METRIC_SLOT0 = len(PROPERTIES)
KNOWN_METRICS = ("distance", "travel_time", "weight")   # every reader's column names
FUNCTIONS = {"min": 2, "max": 2, "where": 3, "clamp": 3}

# Opcodes: one int32 per instruction, opcode | argument << 8.
OPS = ("const", "prop", "add", "sub", "mul", "div", "neg", "lt", "le", "gt", "ge",
       "eq", "ne", "and", "or", "not", "min", "max", "where", "clamp")
OP = {name: i for i, name in enumerate(OPS)}
_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "<": "lt", "<=": "le",
           ">": "gt", ">=": "ge", "==": "eq", "!=": "ne", "and": "and", "or": "or"}
MAX_CODE, MAX_CONSTS, MAX_STACK = 192, 48, 16   # 192*4 + 48*8 bytes < 1.2 KB
MAX_LENGTH = 2000
MAX_DEPTH = 32       # nesting levels; each costs the parser about a dozen Python frames

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><=|>=|==|!=|[-+*/<>(),])
""", re.VERBOSE)
# Characters with a known meaning elsewhere get a reason, not just "unexpected".
_REFUSED = {".": "attribute access is not allowed", "[": "indexing is not allowed",
            "]": "indexing is not allowed", "'": "strings are not allowed",
            '"': "strings are not allowed", "=": "assignment is not allowed (use == to compare)",
            "%": "'%' is not an operator here (use + - * /)",
            ":": "':' is not allowed",
            "!": "'!' is not an operator here (use not)", "&": "use 'and'", "|": "use 'or'"}


class ExpressionError(ValueError):
    """A malformed expression; ``column`` is the 0-based offset of the problem."""

    def __init__(self, column: int, reason: str) -> None:
        super().__init__(f"column {column}: {reason}")
        self.column, self.reason = column, reason


@dataclass(frozen=True)
class Token:
    kind: str        # number, name, op, end, bad
    text: str
    column: int


@dataclass(frozen=True)
class Program:
    code: np.ndarray     # int32 [k] postfix instructions
    consts: np.ndarray   # float64 [c]
    names: frozenset     # every property and metric name read
    depth: int           # stack slots needed


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``; an unreadable character becomes a 'bad' token so the
    parser reports the leftmost problem in reading order."""
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            tokens.append(Token("bad", text[pos], pos))
            pos += 1
            continue
        if match.lastgroup != "space":
            tokens.append(Token(match.lastgroup, match.group(), pos))
        pos = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def parse(text: str):
    """The syntax tree of ``text``: ("num", value, col) | ("name", name, col) |
    (op, col, *operands). Raises ExpressionError."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(MAX_LENGTH, f"the expression is longer than {MAX_LENGTH} characters")
    parser = _Parser(tokenize(text))
    tree = parser.expr()
    token = parser.peek()
    if token.kind != "end":
        parser.fail(token, "unexpected " + _describe(token) + " after a complete expression")
    return tree


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens, self.i = tokens, 0
        self.depth = self.steps = 0

    def enter(self, token: Token) -> None:
        """One level deeper, opened at ``token``."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(token, f"nested more than {MAX_DEPTH} deep (each '(', function call, "
                             "sign and 'not' opens a level)")

    def step(self, token: Token, tree: tuple) -> tuple:
        """``tree``, one step of the program, made at ``token``."""
        self.steps += 1
        if self.steps > MAX_CODE:
            self.fail(token, f"the expression is too large (more than {MAX_CODE} steps: "
                             "numbers, names and operators)")
        return tree

    def peek(self) -> Token:
        token = self.tokens[self.i]
        if token.kind == "bad":
            self.fail(token, _REFUSED.get(token.text, f"unexpected character {token.text!r}"))
        return token

    def take(self) -> Token:
        token = self.peek()
        self.i += 1
        return token

    def accept(self, *texts: str) -> Token | None:
        token = self.peek()
        return self.take() if token.kind in ("op", "name") and token.text in texts else None

    def fail(self, token: Token, reason: str):
        raise ExpressionError(token.column, reason)

    def binary(self, operand, ops: tuple[str, ...]):
        left = operand()
        while (token := self.accept(*ops)) is not None:
            left = self.step(token, (_BINARY[token.text], token.column, left, operand()))
        return left

    def expr(self):
        return self.binary(self.conjunction, ("or",))

    def conjunction(self):
        return self.binary(self.negation, ("and",))

    def negation(self):
        token = self.accept("not")
        if token is None:
            return self.compare()
        self.enter(token)
        tree = self.step(token, ("not", token.column, self.negation()))
        self.depth -= 1
        return tree

    def compare(self):
        ops = ("<", "<=", ">", ">=", "==", "!=")
        left = self.sum()
        if (token := self.accept(*ops)) is None:
            return left
        tree = self.step(token, (_BINARY[token.text], token.column, left, self.sum()))
        if (again := self.accept(*ops)) is not None:
            self.fail(again, "comparisons cannot be chained (use 'and')")
        return tree

    def sum(self):
        return self.binary(self.product, ("+", "-"))

    def product(self):
        return self.binary(self.unary, ("*", "/"))

    def unary(self):
        if (token := self.accept("-", "+")) is None:
            return self.atom()
        self.enter(token)
        operand = self.unary()
        self.depth -= 1
        return self.step(token, ("neg", token.column, operand)) if token.text == "-" else operand

    def atom(self):
        token = self.take()
        if token.kind == "number":
            return self.step(token, ("num", float(token.text), token.column))
        if token.kind == "op" and token.text == "(":
            self.enter(token)
            tree = self.expr()
            self.close(token)
            self.depth -= 1
            return tree
        if token.kind == "name" and token.text not in ("and", "or", "not"):
            if self.accept("("):
                self.enter(token)
                tree = self.call(token)
                self.depth -= 1
                return tree
            _check_name(token)
            return self.step(token, ("name", token.text, token.column))
        self.fail(token, "expected a number, a name or '(' but found " + _describe(token))

    def call(self, name: Token):
        if name.text not in FUNCTIONS:
            self.fail(name, f"'{name.text}' is not a function of this language "
                            f"(functions: {', '.join(FUNCTIONS)})")
        args = [self.expr()]
        while self.accept(","):
            args.append(self.expr())
        self.close(name)
        if len(args) != FUNCTIONS[name.text]:
            self.fail(name, f"{name.text}() takes {FUNCTIONS[name.text]} arguments, "
                            f"got {len(args)}")
        return self.step(name, (name.text, name.column, *args))

    def close(self, opening: Token) -> None:
        token = self.peek()
        if not (token.kind == "op" and token.text == ")"):
            what = "function call" if opening.kind == "name" else "'('"
            self.fail(token, f"expected ')' to close the {what} at column {opening.column} "
                             f"but found {_describe(token)}")
        self.take()


def _describe(token: Token) -> str:
    return "the end of the expression" if token.kind == "end" else repr(token.text)


_PYTHON = {"lambda", "import", "def", "class", "for", "while", "if", "else", "in", "is",
           "exec", "eval", "open", "os", "sys", "True", "False", "None", "yield", "del"}


def _check_name(token: Token) -> None:
    name = token.text
    if name in SLOT or name in ROAD_CLASS_INDEX or name in KNOWN_METRICS:
        return
    if name in _PYTHON or name.startswith("__"):
        raise ExpressionError(token.column, f"'{name}' is not allowed: a decoder "
                              "expression is data, not Python")
    raise ExpressionError(token.column, f"unknown name '{name}' (properties: "
                          f"{', '.join(PROPERTIES)}; classes such as motorway; metric "
                          f"columns: {', '.join(KNOWN_METRICS)})")


def names_in(tree) -> set[tuple[str, int]]:
    """(name, column) of every property or metric the tree reads."""
    names, todo = set(), [tree]
    while todo:
        node = todo.pop()
        if node[0] == "name" and node[1] not in ROAD_CLASS_INDEX:
            names.add((node[1], node[2]))
        elif node[0] not in ("num", "name"):
            todo.extend(node[2:])
    return names


def compile_program(tree, metric_names: list[str]) -> Program:
    """The postfix program of ``tree`` for a graph whose metric columns, in slot
    order, are ``metric_names``. Raises ExpressionError for a metric the graph
    lacks or a program over the size limits."""
    code: list[int] = []
    consts: list[float] = []
    depth = _emit(tree, metric_names, code, consts, 0)
    if len(code) > MAX_CODE or len(consts) > MAX_CONSTS or depth > MAX_STACK:
        raise ExpressionError(0, f"the expression is too large ({len(code)} steps, "
                              f"{len(consts)} constants, depth {depth}; limits "
                              f"{MAX_CODE}, {MAX_CONSTS}, {MAX_STACK})")
    return Program(np.asarray(code, dtype=np.int32), np.asarray(consts, dtype=np.float64),
                   frozenset(name for name, _ in names_in(tree)), depth)


def _emit(tree, metric_names: list[str], code: list, consts: list, depth: int) -> int:
    """Append ``tree``'s instructions; returns the deepest stack reached."""
    kind = tree[0]
    if kind == "num" or (kind == "name" and tree[1] in ROAD_CLASS_INDEX):
        value = tree[1] if kind == "num" else float(ROAD_CLASS_INDEX[tree[1]])
        if value not in consts:
            consts.append(value)
        code.append(OP["const"] | consts.index(value) << 8)
        return depth + 1
    if kind == "name":
        code.append(OP["prop"] | _slot(tree[1], tree[2], metric_names) << 8)
        return depth + 1
    deepest = depth
    for i, operand in enumerate(tree[2:]):
        deepest = max(deepest, _emit(operand, metric_names, code, consts, depth + i))
    code.append(OP[kind])
    return deepest


def _slot(name: str, column: int, metric_names: list[str]) -> int:
    if name in SLOT:
        return SLOT[name]
    if name not in metric_names:
        raise ExpressionError(column, f"'{name}' is not a metric column of this graph "
                              f"(it has: {', '.join(metric_names) or 'none'})")
    return METRIC_SLOT0 + metric_names.index(name)
