"""Metric decoders: the shipped files load and decode, values match direct NumPy
formulas, malformed decoders are refused with file:line: field: reason, and the
expression language parses, evaluates and reports error columns."""
from __future__ import annotations

import numpy as np
import pytest

from engine.crp.metric import FORBIDDEN
from engine.crp.metric.costs import DecodeError, DecodeInputs, decode
from engine.crp.metric.interpreter import evaluate_expression
from engine.crp.metric.decoder import DecoderError, load_decoder, parse_decoder, shipped_decoders
from engine.crp.metric.expression import ExpressionError, parse
from engine.core.turns import TURN_TYPE_INDEX, turn_graph
from engine.generate.network import generate_road_network
from engine.core.graph import ROAD_CLASS_INDEX, ROAD_CLASSES
from tests.strategies import dimacs_like_graph

SPEEDS = "\n".join(f"{c} = 50" for c in ROAD_CLASSES)


@pytest.fixture(scope="module")
def generated():
    g = generate_road_network(10_000, seed=5)
    return g, turn_graph(g), DecodeInputs(g, turn_graph(g))


@pytest.fixture(scope="module")
def dimacs():
    """A DIMACS-like graph: metric columns only, no attributes, no coordinates."""
    g = dimacs_like_graph(seed=7, n=400, m=3000, max_distance=5000)
    t = turn_graph(g)
    return g, t, DecodeInputs(g, t)


def _host(costs):
    return np.asarray(costs.arc_cost), np.asarray(costs.turn_weight)


def _check_turn_weights(costs, turns):
    arc, turn = _host(costs)
    tc = costs.program.turn_cost.astype(np.int64)[turns.turn_type]
    ac = arc.astype(np.int64)[turns.to_arc]
    expected = np.where((tc == FORBIDDEN) | (ac == FORBIDDEN), FORBIDDEN, tc + ac)
    assert np.array_equal(turn, expected)


# ------------------------------------------------------------------ shipped
def test_shipped_list():
    assert {"car-fastest", "car-shortest", "avoid-motorways", "delivery", "eco",
            "dimacs-time", "dimacs-distance"} <= set(shipped_decoders())


@pytest.mark.parametrize("name", shipped_decoders())
def test_shipped_decodes_on_generated(name, generated):
    g, turns, inputs = generated
    d = load_decoder(name)
    assert d.name and d.description and parse_decoder(d.to_toml()) == d
    costs = inputs.decode(d)
    arc, turn = _host(costs)
    assert arc.dtype == np.int32 and arc.shape == (g.num_arcs,)
    assert turn.dtype == np.int32 and turn.shape == (turns.num_turns,)
    assert arc.min() >= 1 and turn.min() >= 0
    _check_turn_weights(costs, turns)
    assert costs.program.nbytes < 1024


@pytest.mark.parametrize("name", shipped_decoders())
def test_shipped_on_dimacs_graph(name, dimacs):
    g, turns, inputs = dimacs
    d = load_decoder(name)
    if d.kind != "metric":
        with pytest.raises(DecodeError, match="length_m"):
            inputs.decode(d)
        return
    costs = inputs.decode(d)
    arc, _ = _host(costs)
    assert np.array_equal(arc, np.maximum(1, g.metrics[d.metric]))
    _check_turn_weights(costs, turns)
    u = turns.turn_type == TURN_TYPE_INDEX["u_turn"]
    expected = dict(d.turns)["u_turn"]
    assert np.array_equal(_host(costs)[1][u], arc[turns.to_arc[u]] + expected)


def _time_formula(g, speeds, cap=np.inf, mult=None, use_maxspeed=True):
    a = g.arc_attrs
    cls = a["road_class"].astype(np.int64)
    s = np.array([speeds[c] for c in ROAD_CLASSES], dtype=np.float64)[cls]
    own = a["speed_kmh"].astype(np.float64)
    if use_maxspeed:
        s = np.where(own > 0, own, s)
    s = np.minimum(s, cap)
    m = np.ones(len(ROAD_CLASSES)) if mult is None else mult
    cost = a["length_m"].astype(np.float64) / (s / 3.6) * 10.0 * m[cls]
    return np.maximum(1, np.rint(cost)).astype(np.int64)


def test_car_fastest_formula(generated):
    g, turns, inputs = generated
    d = load_decoder("car-fastest")
    arc, _ = _host(inputs.decode(d))
    assert np.array_equal(arc, _time_formula(g, dict(d.speeds), cap=d.max_speed))
    tc = inputs.decode(d).program.turn_cost
    assert tc[TURN_TYPE_INDEX["u_turn"]] == 1000 and tc[TURN_TYPE_INDEX["left"]] == 50
    assert tc[TURN_TYPE_INDEX["slight_left"]] == tc[TURN_TYPE_INDEX["slight_right"]] == 10


def test_car_shortest_formula(generated):
    g, _, inputs = generated
    arc, _ = _host(inputs.decode(load_decoder("car-shortest")))
    assert np.array_equal(arc, np.maximum(1, np.rint(g.arc_attrs["length_m"].astype(np.float64))))


def test_avoid_motorways_forbids_and_multiplies(generated):
    g, turns, inputs = generated
    d = load_decoder("avoid-motorways")
    arc, turn = _host(inputs.decode(d))
    cls = g.arc_attrs["road_class"]
    motorway = cls == ROAD_CLASS_INDEX["motorway"]
    assert motorway.any() and (arc[motorway] == FORBIDDEN).all() and (arc[~motorway] < FORBIDDEN).all()
    assert (turn[motorway[turns.to_arc]] == FORBIDDEN).all()
    mult = np.ones(len(ROAD_CLASSES))
    mult[ROAD_CLASS_INDEX["trunk"]] = 3.0
    expected = _time_formula(g, dict(d.speeds), mult=mult)
    assert np.array_equal(arc[~motorway], expected[~motorway])


def test_delivery_forbids_tolls_and_u_turns(generated):
    g, turns, inputs = generated
    arc, turn = _host(inputs.decode(load_decoder("delivery")))
    toll = g.arc_attrs["toll"]
    assert toll.any() and (arc[toll] == FORBIDDEN).all()
    assert (turn[turns.turn_type == TURN_TYPE_INDEX["u_turn"]] == FORBIDDEN).all()


def test_notes_for_data_the_graph_lacks(generated, dimacs):
    text = 'name = "x"\nkind = "distance"\nforbid = ["unpaved", "toll"]\n'
    costs = generated[2].decode(parse_decoder(text))
    assert any("unpaved" in n for n in costs.notes) and not any("toll" in n for n in costs.notes)
    metric = 'name = "x"\nkind = "metric"\nmetric = "distance"\nforbid = ["toll"]\n'
    assert any("toll" in n for n in dimacs[2].decode(parse_decoder(metric)).notes)


def test_decode_without_inputs_and_expression_formula(generated):
    g, turns, _ = generated
    text = ('name = "x"\nkind = "distance"\n'
            'expression = "clamp(cost / lanes, 5, 500) + where(toll, 100, 0)"\n')
    arc, _ = _host(decode(g, turns, parse_decoder(text)))
    a = g.arc_attrs
    cost = np.clip(a["length_m"].astype(np.float64) / a["lanes"], 5, 500) + np.where(a["toll"], 100, 0)
    assert np.array_equal(arc, np.maximum(1, np.rint(cost)))


# ------------------------------------------------------------------ malformed
def _time(extra_top="", extra=""):
    return f'name = "bad"\nkind = "time"\n{extra_top}\n[speeds]\n{SPEEDS}\n{extra}'


MALFORMED = [   # (text, line, field, reason fragment)
    (_time(extra="highway = 50"), 15, "speeds.highway", "unknown road class"),
    (_time().replace("motorway = 50", "motorway = -5"), 5, "speeds.motorway", "> 0"),
    (_time().replace("ferry = 50", "ferry = 0"), 14, "speeds.ferry", "> 0"),
    (_time().replace("ferry = 50", "ferry = inf"), 14, "speeds.ferry", "> 0"),
    (_time().replace("trunk = 50", "trunk = true"), 6, "speeds.trunk", "must be a number"),
    (_time().replace("trunk = 50", "trunk = 50 50"), 6, "syntax", "line 6"),
    ('name = "bad"\nkind = "time"\ncolour = "red"\n', 3, "colour", "unknown key"),
    ('name = "bad"\nkind = 3\n', 2, "kind", "must be a string"),
    ('name = "bad"\nkind = "fastest"\n', 2, "kind", "must be one of"),
    ('kind = "distance"\n', 1, "name", "missing"),
    ('name = "bad"\nkind = "metric"\n', 1, "metric", "missing"),
    ('name = "bad"\nkind = "distance"\nmetric = "distance"\n', 3, "metric", "only a kind"),
    ('name = "bad"\nkind = "distance"\nscale = 2\n', 3, "scale", "only a kind"),
    ('name = "bad"\nkind = "time"\n[speeds]\nmotorway = 100\n', 3, "speeds", "missing: trunk"),
    ('name = "bad"\nkind = "distance"\nspeeds = 5\n', 3, "speeds", "must be a table"),
    ('name = "bad"\nkind = "distance"\nuse_maxspeed = "yes"\n', 3, "use_maxspeed", "true or false"),
    ('name = "bad"\nkind = "distance"\nmax_speed = "fast"\n', 3, "max_speed", "must be a number"),
    ('name = "bad"\nkind = "distance"\nforbid = "ferry"\n', 3, "forbid", "list of strings"),
    ('name = "bad"\nkind = "distance"\nforbid = ["highways"]\n', 3, "forbid", "unknown class or tag"),
    ('name = "bad"\nkind = "distance"\n[multipliers]\nprimary = 0\n', 4, "multipliers.primary", "> 0"),
    ('name = "bad"\nkind = "distance"\n[multipliers]\nroad = 2\n', 4, "multipliers.road", "unknown"),
    ('name = "bad"\nkind = "distance"\n[turns]\nleft = 1\nhairpin = 3\n', 5, "turns.hairpin", "unknown turn"),
    ('name = "bad"\nkind = "distance"\n[turns]\nleft = "never"\n', 4, "turns.left", '"forbidden"'),
    ('name = "bad"\nkind = "distance"\n[turns]\nu_turn = -1\n', 4, "turns.u_turn", ">= 0"),
    ('name = "bad"\nkind = "distance"\n[turns\n', 3, "syntax", "line 3"),
    ('name = "bad"\nkind = "distance"\nexpression = "cost * foo"\n', 3, "expression", "column 7: unknown name 'foo'"),
    ('name = "bad"\nkind = "distance"\nexpression = "__import__(\'os\')"\n', 3, "expression", "column 0"),
    ('name = "bad"\nkind = "distance"\nexpression = "open(\'x\')"\n', 3, "expression", "not a function"),
    ('name = "bad"\nkind = "distance"\nexpression = "cost.real"\n', 3, "expression", "attribute access"),
    ('name = "bad"\nkind = "distance"\nexpression = "lambda: 1"\n', 3, "expression", "not allowed"),
    ('name = "bad"\nkind = "distance"\nexpression = "(cost + 1"\n', 3, "expression", "expected ')'"),
    ('name = "bad"\nkind = "distance"\nexpression = "cost[0]"\n', 3, "expression", "indexing"),
    ('name = "bad"\nkind = "distance"\n\n\nexpression = 5\n', 5, "expression", "must be a string"),
]


@pytest.mark.parametrize("text,line,field,reason", MALFORMED)
def test_malformed_refused(text, line, field, reason):
    with pytest.raises(DecoderError) as e:
        parse_decoder(text, source="bad.toml")
    message = str(e.value)
    assert message.startswith(f"bad.toml:{line}: {field}"), message
    assert reason in message, message


def test_load_by_path_and_unknown_name(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nkind = "distance"\n\nforbid = [1]\n')
    with pytest.raises(DecoderError, match=rf"{path}:4: forbid"):
        load_decoder(path)
    with pytest.raises(DecoderError, match="no such decoder.*car-fastest"):
        load_decoder("no-such-decoder")
    path.write_text(load_decoder("eco").to_toml())
    assert load_decoder(str(path)) == load_decoder("eco")


@pytest.mark.parametrize("expression,error", [
    ("cost / (lanes - 1)", "infinite"),            # lanes == 1 on many arcs
    ("(lanes - 1) / (lanes - 1)", "not a number"),
    ("cost - 100000", "negative"),
    ("cost * 1e12", "too large"),
])
def test_bad_values_on_some_arcs(generated, expression, error):
    d = parse_decoder(f'name = "x"\nkind = "distance"\nexpression = "{expression}"\n', "x.toml")
    with pytest.raises(DecodeError, match=rf"x.toml: the cost of arc \d+ .*{error}"):
        generated[2].decode(d)


def test_turn_overflow_is_an_error(dimacs):
    text = 'name = "x"\nkind = "metric"\nmetric = "distance"\nexpression = "2147480000"\n' \
           '[turns]\nu_turn = 100000\n'
    with pytest.raises(DecodeError, match="overflows int32"):
        dimacs[2].decode(parse_decoder(text))


def test_missing_property_at_graph_time(dimacs):
    g, turns, inputs = dimacs
    for expression, name in [("cost * lanes", "lanes"), ("cost + weight", "weight"),
                             ("time_s", "time_s")]:
        text = f'name = "x"\nkind = "metric"\nmetric = "distance"\nexpression = "{expression}"\n'
        with pytest.raises(DecodeError, match=f"expression: column \\d+: '{name}'"):
            inputs.decode(parse_decoder(text))
    with pytest.raises(DecodeError, match="no metric column 'weight'"):
        inputs.decode(parse_decoder('name = "x"\nkind = "metric"\nmetric = "weight"\n'))
    ok = 'name = "x"\nkind = "metric"\nmetric = "distance"\nexpression = "travel_time + distance"\n'
    arc, _ = _host(inputs.decode(parse_decoder(ok)))
    assert np.array_equal(arc, g.metrics["travel_time"] + g.metrics["distance"])


# ------------------------------------------------------------------ expression
@pytest.mark.parametrize("text,values,expected", [
    ("1 + 2 * 3", {}, 7), ("(1 + 2) * 3", {}, 9), ("2 - 3 - 4", {}, -5), ("8 / 4 / 2", {}, 1),
    ("-2 * 3", {}, -6), ("- -2", {}, 2), ("2 * -3", {}, -6), ("-(1 + 2)", {}, -3),
    ("1e3 + .5", {}, 1000.5), ("+4", {}, 4),
    ("1 < 2", {}, 1), ("2 <= 1", {}, 0), ("3 > 3", {}, 0), ("3 >= 3", {}, 1),
    ("1 + 1 == 2", {}, 1), ("1 != 1", {}, 0), ("not 0", {}, 1), ("not 1 and 0", {}, 0),
    ("1 or 0 and 0", {}, 1), ("not 2 > 3", {}, 1),
    ("min(3, 2)", {}, 2), ("max(3, 2)", {}, 3), ("clamp(5, 1, 3)", {}, 3),
    ("clamp(-5, 1, 3)", {}, 1), ("clamp(2, 1, 3)", {}, 2),
    ("where(length_m > 10, 1, 2)", {"length_m": 11}, 1),
    ("where(length_m > 10, 1, 2)", {"length_m": 9}, 2),
    ("road_class == motorway", {"road_class": 0}, 1),
    ("road_class == residential", {"road_class": 6}, 1),
    ("cost * where(toll, 2, 1) + travel_time", {"cost": 5, "toll": 1, "travel_time": 3}, 13),
    ("length_m / (speed_kmh / 3.6)", {"length_m": 100, "speed_kmh": 36}, 10),
])
def test_expression_values(text, values, expected):
    assert evaluate_expression(text, **values) == expected


@pytest.mark.parametrize("text,column,reason", [
    ("cost + foo", 7, "unknown name"),
    ("cost * (1 + 2", 13, "expected ')'"),
    ("__import__('os')", 0, "not a function"),
    ("cost.real", 4, "attribute access"),
    ("cost + open('x')", 7, "not a function"),
    ("1 +", 3, "expected a number"),
    ("cost[0]", 4, "indexing"),
    ("1 < 2 < 3", 6, "cannot be chained"),
    ("cost @ 2", 5, "unexpected character"),
    ("'a'", 0, "strings"),
    ("min(1)", 0, "takes 2 arguments"),
    ("cost 2", 5, "after a complete expression"),
    ("cost = 1", 5, "assignment"),
    ("x if 1 else 2", 0, "unknown name"),
    ("cost ** 2", 6, "expected a number"),
    ("", 0, "expected a number"),
])
def test_expression_error_columns(text, column, reason):
    with pytest.raises(ExpressionError) as e:
        parse(text)
    assert e.value.column == column and reason in e.value.reason, str(e.value)


def test_to_toml_round_trip():
    text = ('name = "rt"\ndescription = "quotes \\" and \\\\ back"\nkind = "metric"\n'
            'metric = "travel_time"\nscale = 0.25\nforbid = ["ferry", "unpaved"]\n'
            'expression = "cost * 2"\n[multipliers]\nferry = 1.5\n'
            '[turns]\nslight = 1.5\nslight_left = 3\nu_turn = "forbidden"\n')
    d = parse_decoder(text)
    again = parse_decoder(d.to_toml())
    assert again == d and again.turn_costs()["slight_left"] == 3
    assert again.turn_costs()["slight_right"] == 1.5 and again.turn_costs()["u_turn"] == "forbidden"
