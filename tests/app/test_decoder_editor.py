"""The decoder editor widget (app/features/crp/decoder_editor.py): real widget interactions, headless."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from app.features.crp.decoder_editor import DecoderEditor
from app.features.crp.decoder_form import History, State
from engine.crp.metric.decoder import DecoderError, load_decoder, shipped_decoders
from engine.core.turns import TURN_TYPES
from engine.core.graph import ROAD_CLASSES


class Recorder:
    """Every emission of the editor's two signals."""

    def __init__(self, editor: DecoderEditor) -> None:
        self.edited, self.invalid = [], []
        editor.edited.connect(self.edited.append)
        editor.invalid.connect(self.invalid.append)


@pytest.fixture
def editor(qtbot):
    w = DecoderEditor()
    qtbot.addWidget(w)
    w.set_presets(shipped_decoders(), "car-fastest")
    w.resize(350, 560)
    w.show()
    qtbot.waitExposed(w)
    return w


def click(qtbot, box) -> None:
    """A click on the check box's indicator, as a person would do."""
    qtbot.mouseClick(box, Qt.LeftButton, pos=QPoint(8, box.height() // 2))


def _speed(decoder, cls: str) -> float:
    return dict(decoder.speeds)[cls]


def test_presets_load_exactly_and_only_the_combo_emits(qtbot, editor):
    rec = Recorder(editor)
    editor.set_presets(shipped_decoders(), "delivery")
    assert editor.decoder() == load_decoder("delivery")
    assert editor.preset_combo.currentText() == "delivery"
    assert rec.edited == []                                   # set_presets is silent
    for name in shipped_decoders():
        if name == editor.preset_combo.currentText():
            continue
        with qtbot.waitSignal(editor.edited) as blocker:
            editor.preset_combo.setCurrentIndex(editor.preset_combo.findText(name))
        assert blocker.args[0] == load_decoder(name)
        assert editor.decoder() == load_decoder(name)
        assert editor.status_label.text() == name
    assert rec.invalid == []


def test_controls_show_the_preset(editor):
    fastest = load_decoder("car-fastest")
    for cls, kmh in fastest.speeds:
        assert editor.speed_spins[cls].value() == kmh == editor.speed_sliders[cls].value()
    for t, cost in fastest.turn_costs().items():
        assert editor.turn_spins[t].value() == cost
        assert not editor.turn_forbidden[t].isChecked()
    editor.set_presets(shipped_decoders(), "delivery")
    assert editor.turn_forbidden["u_turn"].isChecked()
    assert not editor.turn_spins["u_turn"].isEnabled()
    assert editor.avoid_boxes["toll"].isChecked() and editor.avoid_boxes["ferry"].isChecked()
    assert not editor.avoid_boxes["motorway"].isChecked()


def test_avoid_motorway_toggles_forbid(qtbot, editor):
    editor.tabs.setCurrentIndex(1)
    box = editor.avoid_boxes["motorway"]
    with qtbot.waitSignal(editor.edited) as blocker:
        click(qtbot, box)
    assert "motorway" in blocker.args[0].forbid
    assert editor.decoder() == blocker.args[0]
    assert editor.status_label.text() == "car-fastest (edited)"
    with qtbot.waitSignal(editor.edited) as blocker:
        click(qtbot, box)
    assert "motorway" not in blocker.args[0].forbid
    assert editor.decoder() == load_decoder("car-fastest")
    assert editor.status_label.text() == "car-fastest"


def test_left_turn_cost_is_written_explicitly(qtbot, editor):
    with qtbot.waitSignal(editor.edited) as blocker:
        editor.turn_spins["left"].setValue(42.5)
    costs = blocker.args[0].turn_costs()
    assert costs["left"] == 42.5
    before = load_decoder("car-fastest").turn_costs()
    assert {t: c for t, c in costs.items() if t != "left"} == \
        {t: c for t, c in before.items() if t != "left"}      # "slight" shorthand kept
    assert [k for k, _ in editor.decoder().turns] == list(TURN_TYPES)


def test_forbidden_turn_box(qtbot, editor):
    editor.tabs.setCurrentIndex(1)
    box = editor.turn_forbidden["u_turn"]
    with qtbot.waitSignal(editor.edited):
        click(qtbot, box)
    assert editor.decoder().turn_costs()["u_turn"] == "forbidden"
    assert not editor.turn_spins["u_turn"].isEnabled()
    with qtbot.waitSignal(editor.edited):
        click(qtbot, box)
    assert editor.decoder().turn_costs()["u_turn"] == 100


def test_slider_burst_is_one_undo_step(editor):
    rec = Recorder(editor)
    slider, spin = editor.speed_sliders["primary"], editor.speed_spins["primary"]
    assert slider.value() == 70
    for v in range(71, 121):                                  # 50 changes
        slider.setValue(v)
    assert len(rec.edited) == 50
    assert _speed(rec.edited[-1], "primary") == 120 == spin.value()
    assert _speed(editor.decoder(), "primary") == 120
    editor.undo()
    assert _speed(editor.decoder(), "primary") == 70
    assert slider.value() == 70 == spin.value()
    assert not editor.can_undo() and editor.can_redo()
    editor.redo()
    assert _speed(editor.decoder(), "primary") == 120 == slider.value()


def test_spin_and_slider_stay_in_sync(editor):
    editor.speed_spins["trunk"].setValue(33)
    assert editor.speed_sliders["trunk"].value() == 33
    assert _speed(editor.decoder(), "trunk") == 33


@pytest.mark.parametrize("bad, column", [("cost * foo(", 7), ("__import__('os')", 0)])
def test_invalid_expression_is_shown_inline_and_refused(qtbot, editor, bad, column):
    editor.tabs.setCurrentIndex(2)
    good = editor.decoder()
    rec = Recorder(editor)
    edit = editor.expression_edit
    qtbot.keyClicks(edit, bad)
    qtbot.keyClick(edit, Qt.Key_Return)
    assert len(rec.invalid) == 1 and rec.edited == []
    assert editor.decoder() == good
    lines = editor.error_label.text().splitlines()
    assert lines[0] == bad and lines[1] == " " * column + "^"
    assert "is not a function" in " ".join(lines[2:])
    assert editor.error_label.isVisible()
    assert "border" in edit.styleSheet()
    assert edit.selectionStart() == column and edit.text() == bad      # text kept to fix
    edit.clear()
    qtbot.keyClicks(edit, "cost * where(lanes >= 3, 0.9, 1)")
    with qtbot.waitSignal(editor.edited) as blocker:
        qtbot.keyClick(edit, Qt.Key_Enter)
    assert blocker.args[0].expression == "cost * where(lanes >= 3, 0.9, 1)"
    assert not editor.error_label.isVisible() and edit.styleSheet() == ""
    assert editor.decoder().speeds == good.speeds


def test_other_edits_work_while_the_expression_is_wrong(qtbot, editor):
    qtbot.keyClicks(editor.expression_edit, "cost +")
    qtbot.keyClick(editor.expression_edit, Qt.Key_Return)
    editor.speed_spins["service"].setValue(25)
    assert _speed(editor.decoder(), "service") == 25
    assert editor.decoder().expression is None
    assert "^" in editor.error_label.text()                  # the error stays until fixed


def test_empty_expression_removes_it(qtbot, editor):
    editor.set_presets(shipped_decoders(), "eco")
    editor.expression_edit.clear()
    with qtbot.waitSignal(editor.edited) as blocker:
        qtbot.keyClick(editor.expression_edit, Qt.Key_Return)
    assert blocker.args[0].expression is None


def test_save_and_load_round_trip(qtbot, editor, tmp_path):
    editor.turn_spins["right"].setValue(9)
    editor.speed_spins["ferry"].setValue(7)
    saved = editor.decoder()
    path = tmp_path / "mine.toml"
    editor.save_file(path)
    assert load_decoder(path) == saved
    editor.preset_combo.setCurrentIndex(editor.preset_combo.findText("car-shortest"))
    assert editor.decoder() != saved
    with qtbot.waitSignal(editor.edited):
        editor.load_file(path)
    assert editor.decoder() == saved
    assert editor.status_label.text() == "mine.toml"
    editor.undo()
    assert editor.decoder() == load_decoder("car-shortest")


def test_malformed_file_is_shown_and_keeps_the_decoder(editor, tmp_path):
    good = editor.decoder()
    rec = Recorder(editor)
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\nkind = "time"\nforbid = "motorway"\n')
    with pytest.raises(DecoderError):
        editor.load_file(path)
    assert editor.decoder() == good and rec.edited == [] and len(rec.invalid) == 1
    text = editor.error_label.text().replace("\n", "")
    assert editor.error_label.isVisible() and "bad.toml:3" in text and "forbid" in text
    with pytest.raises(DecoderError):
        editor.load_file(tmp_path / "missing.toml")
    with pytest.raises(OSError):
        editor.save_file(tmp_path / "no" / "such" / "dir.toml")
    assert "cannot save dir.toml" in editor.error_label.text().replace("\n", " ")


def test_undo_redo_across_edits(qtbot, editor):
    editor.tabs.setCurrentIndex(1)
    start = editor.decoder()
    click(qtbot, editor.avoid_boxes["motorway"])
    editor.turn_spins["left"].setValue(20)
    editor.speed_spins["trunk"].setValue(55)
    after = editor.decoder()
    editor.undo()
    assert editor.speed_spins["trunk"].value() == 90
    assert editor.decoder().turn_costs()["left"] == 20
    editor.undo()
    assert editor.turn_spins["left"].value() == 5
    assert "motorway" in editor.decoder().forbid
    with qtbot.waitSignal(editor.edited) as blocker:
        editor.undo()
    assert blocker.args[0] == start and not editor.avoid_boxes["motorway"].isChecked()
    assert not editor.can_undo()
    editor.undo()                                             # nothing left: no-op
    assert editor.decoder() == start
    for _ in range(3):
        editor.redo()
    assert editor.decoder() == after and not editor.can_redo()
    editor.undo()
    editor.speed_spins["service"].setValue(11)                # a new edit drops redo
    assert not editor.can_redo() and not editor.redo_action.isEnabled()


def test_undo_shortcut_inside_the_widget(qtbot, editor):
    editor.activateWindow()
    qtbot.waitActive(editor)
    editor.tabs.setCurrentIndex(1)
    box = editor.avoid_boxes["ferry"]
    click(qtbot, box)
    assert "ferry" in editor.decoder().forbid
    box.setFocus()
    qtbot.keyClick(box, Qt.Key_Z, Qt.ControlModifier)
    assert "ferry" not in editor.decoder().forbid
    qtbot.keyClick(box, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert "ferry" in editor.decoder().forbid


def test_history_merges_only_the_same_control_within_the_window():
    now = [0.0]
    d = load_decoder("car-fastest")
    history = History(State(d, "a", d), merge_seconds=0.5, clock=lambda: now[0])
    states = [State(d, str(i), d) for i in range(5)]
    history.push(states[0], "speed:primary")
    now[0] = 0.4
    history.push(states[1], "speed:primary")                 # merged
    history.push(states[2], "speed:trunk")                   # another control
    now[0] = 1.0
    history.push(states[3], "speed:trunk")                   # too late to merge
    assert [s.origin for s in history.undo_stack] == ["a", "1", "2"]
    assert history.undo().origin == "2"
    history.push(states[4], "speed:trunk")                   # after undo: a new step
    assert [s.origin for s in history.undo_stack] == ["a", "1", "2"]


def test_features_enable_avoid_toggles_and_rows(editor):
    editor.set_features({"primary", "residential", "motorway"}, set())
    assert not editor.avoid_boxes["toll"].isEnabled()
    assert "no toll" in editor.avoid_boxes["toll"].toolTip()
    assert not editor.avoid_boxes["unpaved"].isEnabled()
    assert not editor.avoid_boxes["ferry"].isEnabled()
    assert editor.avoid_boxes["motorway"].isEnabled()
    assert editor.speed_sliders["ferry"].isHidden()
    assert not editor.speed_sliders["primary"].isHidden()
    editor.set_features(set(ROAD_CLASSES), {"toll"})
    assert editor.avoid_boxes["toll"].isEnabled() and editor.avoid_boxes["ferry"].isEnabled()
    assert not editor.speed_sliders["ferry"].isHidden()


def test_metric_decoder_hides_classes_and_keeps_turns(qtbot, editor):
    editor.set_presets(shipped_decoders(), "dimacs-time")
    assert not editor.tabs.isTabVisible(0) and editor.tabs.isTabVisible(1)
    assert editor.avoid_box.isHidden() and not editor.turns_box.isHidden()
    spin = editor.turn_spins["u_turn"]
    assert spin.value() == 1000 and spin.suffix() == " u" and "units" in spin.toolTip()
    with qtbot.waitSignal(editor.edited) as blocker:
        spin.setValue(500)
    assert blocker.args[0].turn_costs()["u_turn"] == 500 and blocker.args[0].kind == "metric"
    editor.preset_combo.setCurrentIndex(editor.preset_combo.findText("car-fastest"))
    assert editor.tabs.isTabVisible(0) and not editor.avoid_box.isHidden()
    assert editor.turn_spins["left"].suffix() == " s"


def test_set_decoder_shows_without_emitting(editor):
    rec = Recorder(editor)
    d = load_decoder("avoid-motorways")
    editor.set_decoder(d)
    assert editor.decoder() == d and rec.edited == []
    assert editor.avoid_boxes["motorway"].isChecked() and not editor.can_undo()
