"""No silent ignoring (issue #35): flags a CRP route cannot use are refused, naming
them; the DIMACS decoders work on one-metric DIMACS files (whose column is 'weight');
a decoder whose costs overflow is a clear error naming it, never "internal error"."""
from __future__ import annotations

import json

import pytest

from app.main import main


@pytest.fixture()
def one_metric_gr(tmp_path):
    """A one-metric DIMACS file: a ring of 40 nodes, both ways."""
    n = 40
    lines = [f"p sp {n} {2 * n}"]
    for v in range(1, n + 1):
        w = 1 + v % 7
        lines += [f"a {v} {v % n + 1} {w}", f"a {v % n + 1} {v} {w}"]
    path = tmp_path / "ring.gr"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def failure(capsys, *argv) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err
    return err


@pytest.mark.parametrize("flags, named", [
    (["--metric", "weight"], "--metric"),
    (["--node-based"], "--node-based"),
    (["--metric", "weight", "--node-based"], "--metric and --node-based"),
])
def test_flags_a_crp_route_would_ignore_are_refused(capsys, one_metric_gr, flags, named):
    err = failure(capsys, "route", one_metric_gr, "--from", "1", "--to", "20",
                  "--decoder", "dimacs-distance", *flags)
    assert named in err and "CRP" in err


def test_a_hierarchy_with_a_decoder_is_refused_before_it_is_read(capsys, one_metric_gr,
                                                                 tmp_path):
    err = failure(capsys, "route", one_metric_gr, "--from", "1", "--to", "20", "--decoder",
                  "dimacs-time", "--hierarchy", str(tmp_path / "none.rlh"))
    assert "--hierarchy" in err


@pytest.mark.parametrize("decoder", ["dimacs-distance", "dimacs-time"])
def test_dimacs_decoders_read_a_one_metric_file(capsys, one_metric_gr, decoder):
    capsys.readouterr()
    assert main(["route", one_metric_gr, "--from", "1", "--to", "20", "--decoder", decoder,
                 "--json"]) == 0
    crp = json.loads(capsys.readouterr().out)
    assert main(["route", one_metric_gr, "--from", "1", "--to", "20", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert crp["distance"] == plain["distance"] and crp["method"] == "crp"


def test_a_decoder_naming_a_missing_column_says_which_one_reads_it(capsys, tmp_path):
    from tests.strategies import dimacs_like_graph
    from engine.io.cache import save_cache
    g = dimacs_like_graph(3, 60, 300, 100)
    path = tmp_path / "two.rlg"
    save_cache(g, path)
    toml = tmp_path / "odd.toml"
    toml.write_text('name = "odd"\ndescription = "x"\nkind = "metric"\nmetric = "weight"\n')
    err = failure(capsys, "route", str(path), "--from", "1", "--to", "2", "--decoder", str(toml))
    assert "no metric column 'weight'" in err and 'metric = "distance"' in err


def test_an_overflowing_decoder_is_named_not_internal(capsys, tmp_path):
    """Arcs of 1,000 scaled by 10^6: 10^9 each, so paths of three arcs pass 2^31."""
    gr = tmp_path / "line.gr"
    gr.write_text("p sp 30 58\n" + "".join(f"a {v} {v + 1} 1000\na {v + 1} {v} 1000\n"
                                           for v in range(1, 30)))
    toml = tmp_path / "huge.toml"
    toml.write_text('name = "huge"\ndescription = "x"\nkind = "metric"\nmetric = "weight"\n'
                    'scale = 1000000\n')
    err = failure(capsys, "route", str(gr), "--from", "1", "--to", "30", "--decoder", str(toml))
    assert "'huge'" in err and "2^31" in err and "scale" in err
