"""The operator flow in the real window (offscreen), driven by its keys: two inputs per take
(Record, the take ends by itself, the review plays by itself, Accept arms the next episode), a
late Space after an auto-stop does nothing, R + a number rejects, Ctrl+Z undoes, short / score-0
takes are flagged and need a second A, Space records even from a text field, and rewind and
continue (in review, and "back 3 s" while recording) makes a take that replays bit-exactly and
validates."""
from __future__ import annotations

import numpy as np
import pytest
from PyQt6.QtCore import QSettings, Qt

from recordings.takefile import H5_PATHS, read_take
from recordings.validate import validate_take
from test_rewind import assert_replays_bit_exactly
from ui.main_window import MainWindow
from ui.record_panel import REJECT_REASONS

TASK = "pick_up_peach"          # the shortest scripted task: ~5 s to success


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    settings.setValue("review/speed", 2.0)                   # "remembered" from an earlier session
    win = MainWindow(tmp_path / "store", settings=settings, operator="tester", confirm=False, autostop_s=0.4)
    qtbot.addWidget(win)
    win.show()
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=30000)
    win.connect_device("synthetic", {})
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    yield win
    win.close()


def key(qtbot, win, k, widget=None, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(widget or win, k, modifier)


def wait_review(qtbot, win, timeout=90000):
    qtbot.waitUntil(lambda: win.flow.mode == "REVIEW", timeout=timeout)
    return win.review.take


def test_two_inputs_per_take_then_reject_and_undo(window, qtbot):
    win, station = window, window.station
    inputs = win.flow.inputs
    assert station.snapshot().armed                           # a clean episode waits for Record
    key(qtbot, win, Qt.Key.Key_Space)                         # input 1
    qtbot.waitUntil(lambda: station.snapshot().recording, timeout=10000)
    take = wait_review(qtbot, win)                            # it ended by itself, once the peach was up
    assert station.stop_reasons[take.meta.take_id] == "success"
    assert take.arrays["progress"][-1] == 100 and win.flow.flags == []
    assert win.review.playing and win.review.speed == 2.0     # plays by itself, at the remembered speed
    started = station.snapshot().takes_started
    key(qtbot, win, Qt.Key.Key_Space)                         # a late Space: nothing happens
    qtbot.wait(300)
    assert station.snapshot().takes_started == started and win.flow.mode == "REVIEW"
    key(qtbot, win, Qt.Key.Key_A)                             # input 2: accept, next episode armed
    qtbot.waitUntil(lambda: station.snapshot().episode_index == 1 and station.snapshot().armed, timeout=5000)
    assert win.flow.mode == "LIVE" and win.flow.inputs - inputs == 3     # Space, (ignored Space), A
    qtbot.waitUntil(lambda: win.store.index.get(take.meta.take_id).status in ("accepted", "validated_pass"),
                    timeout=5000)

    key(qtbot, win, Qt.Key.Key_Space)                         # the second take
    second = wait_review(qtbot, win)
    assert second.meta.episode_index == 1
    key(qtbot, win, Qt.Key.Key_R)
    assert win.flow.rejecting and win.record_panel.prompt.isVisible()
    key(qtbot, win, Qt.Key.Key_3)
    qtbot.waitUntil(lambda: win.store.index.get(second.meta.take_id).status == "rejected", timeout=5000)
    assert win.store.index.get(second.meta.take_id).reason == REJECT_REASONS[2]
    assert win.flow.mode == "LIVE" and station.snapshot().episode_index == 1     # the same episode again
    key(qtbot, win, Qt.Key.Key_Z, modifier=Qt.KeyboardModifier.ControlModifier)   # undo the rejection
    qtbot.waitUntil(lambda: win.store.index.get(second.meta.take_id).status == "recorded", timeout=5000)
    wait_review(qtbot, win, 10000)
    assert win.review.take.meta.take_id == second.meta.take_id
    assert "reviewing" in win.task_panel.source.text()       # the take's checklist, not the live robot's


def test_short_take_is_flagged_and_needs_a_second_accept(window, qtbot):
    win, station = window, window.station
    key(qtbot, win, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: station.snapshot().recording, timeout=10000)
    key(qtbot, win, Qt.Key.Key_Right)                         # end early, at once
    take = wait_review(qtbot, win)
    assert any(f.startswith("short") for f in win.flow.flags) and "score 0" in win.flow.flags
    assert win.record_panel.flags.isVisible()
    key(qtbot, win, Qt.Key.Key_A)                             # not accepted: it asks again
    qtbot.wait(200)
    assert win.store.index.get(take.meta.take_id).status == "recorded" and "again" in win.flow.status
    key(qtbot, win, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: win.store.index.get(take.meta.take_id).status != "recorded", timeout=5000)


def test_space_in_a_text_field_records_instead_of_typing(window, qtbot):
    win, station = window, window.station
    box = win.browser.text_filter
    box.setFocus()
    key(qtbot, win, Qt.Key.Key_Space, widget=box)
    qtbot.waitUntil(lambda: station.snapshot().recording, timeout=10000)
    assert box.text() == ""                                   # no space typed into the filter
    key(qtbot, win, Qt.Key.Key_A, widget=box)                 # letters still type: it is a filter
    assert box.text() == "a"
    key(qtbot, win, Qt.Key.Key_Space, widget=win.task_panel.search)    # stop, from the task search box
    qtbot.waitUntil(lambda: not station.snapshot().recording, timeout=10000)
    assert win.task_panel.search.text() == ""
    win.task_panel.picker.setFocus()                          # a list with focus: shortcuts still work
    wait_review(qtbot, win)
    key(qtbot, win, Qt.Key.Key_Escape, widget=win.task_panel.picker)
    assert win.flow.mode == "LIVE"


def test_task_search_filters_the_list(window):
    picker = window.task_panel.picker
    assert picker.filter("peach bowl") >= 1
    visible = [tid for tid, item in picker._items.items() if not item.isHidden()]
    assert "put_peach_in_fruit_bowl" in visible and TASK not in visible
    assert picker.filter("") == len(picker._items)
    assert picker._items[TASK].text(2) == "◆ proven"          # in the committed proven-task record


def test_rewind_in_review_and_back_3_s_while_recording(window, qtbot):
    win, station = window, window.station
    key(qtbot, win, Qt.Key.Key_Space)
    original = wait_review(qtbot, win)
    win.review.stop()
    win.review.seek(30)                                       # 1.2 s in: before the grasp
    key(qtbot, win, Qt.Key.Key_C)                             # continue from here
    qtbot.waitUntil(lambda: station.snapshot().resumed_from == (original.meta.take_id, 30), timeout=60000)
    spliced = wait_review(qtbot, win)
    assert spliced.meta.continued_from == f"{original.meta.take_id}@30"
    for name in H5_PATHS:
        np.testing.assert_array_equal(spliced.arrays[name][:30], original.arrays[name][:30], err_msg=name)
    assert_replays_bit_exactly(read_take(spliced.path))
    report = validate_take(spliced.path)
    assert report.passed and report.max_joint_error == 0.0, report.reason
    qtbot.waitUntil(lambda: win.store.index.get(original.meta.take_id) is None, timeout=5000)
    assert (win.store.trash_dir / f"{original.meta.take_id}.h5").exists()     # replaced, recoverable

    key(qtbot, win, Qt.Key.Key_A)
    key(qtbot, win, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: station.snapshot().recorded_ticks > 90, timeout=60000)
    key(qtbot, win, Qt.Key.Key_Backspace)                     # back 3 s, and keep recording
    qtbot.waitUntil(lambda: station.snapshot().resumed_from is not None, timeout=60000)
    source, at = station.snapshot().resumed_from
    continued = wait_review(qtbot, win)
    assert continued.meta.continued_from == f"{source}@{at}" and at >= 15
    report = validate_take(continued.path)
    assert report.passed, report.reason
