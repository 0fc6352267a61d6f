"""No process a job or command starts outlives it, even one in a session of its own (as UP starts Fast Downward)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from up_gnnplan.executors import Job, make_executor
from up_gnnplan.processes import descendants, kill_descendants

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and the child subreaper are Linux's")

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def spawn_detached(pid_file: str, orphan: bool = False, phase=None) -> str:
    """A job: start a sleeper in a new session, as UP starts Fast Downward; with ``orphan``, through a middle
    process that exits at once (the sleeper's parent dies, as when UP kills only the driver), then wait."""
    if orphan:
        middle = subprocess.Popen([sys.executable, "-c", f"import subprocess; p = subprocess.Popen({SLEEPER!r}, "
                                   f"start_new_session=True); open({pid_file!r}, 'w').write(str(p.pid))"])
        middle.wait()
    else:
        process = subprocess.Popen(SLEEPER, start_new_session=True)
        Path(pid_file).write_text(str(process.pid))
    return "started"


def spawn_and_hang(pid_file: str, phase=None) -> None:
    spawn_detached(pid_file)
    time.sleep(60)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"  # a zombie is dead
    except OSError:
        return False


def _gone_soon(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("orphan", [False, True], ids=["child", "orphaned grandchild"])
def test_a_finished_job_leaves_no_process_behind(tmp_path, orphan):
    pid_file = str(tmp_path / "pid")
    with make_executor("local", 1) as executor:
        (outcome,) = list(executor.run([Job("ok", f"{__name__}:spawn_detached", (pid_file, orphan), timeout=30)],
                                       preload=[__name__]))
    assert outcome.status == "ok", outcome
    assert _gone_soon(int(Path(pid_file).read_text())), "the job's search outlived it"


def test_a_job_killed_at_its_limit_takes_its_searches_with_it(tmp_path):
    pid_file = str(tmp_path / "pid")
    with make_executor("local", 1) as executor:
        (outcome,) = list(executor.run([Job("hang", f"{__name__}:spawn_and_hang", (pid_file,), timeout=5)],
                                       preload=[__name__]))
    assert outcome.status == "timeout", outcome
    assert _gone_soon(int(Path(pid_file).read_text())), "the killed job's search outlived it"


def test_descendants_are_found_below_a_new_session_and_killed(tmp_path):
    pid_file = tmp_path / "pid"
    middle = subprocess.Popen([sys.executable, "-c", f"import subprocess, time; p = subprocess.Popen({SLEEPER!r}, "
                               f"start_new_session=True); open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)"])
    try:
        end = time.monotonic() + 20
        while not (pid_file.is_file() and pid_file.read_text()) and time.monotonic() < end:
            time.sleep(0.05)
        sleeper = int(pid_file.read_text())
        assert descendants(middle.pid) == [sleeper]
        assert kill_descendants(middle.pid) == 1
        assert _gone_soon(sleeper)
    finally:
        middle.kill()


def nap(seconds: float, phase=None) -> str:
    time.sleep(seconds)
    return "rested"


def test_jobs_still_running_are_reported_while_none_finishes(monkeypatch):
    """``run(beat=...)``: a long job is seen every BEAT_SECONDS with its key and time (learn's labelling says so)."""
    import up_gnnplan.executors as executors

    monkeypatch.setattr(executors, "BEAT_SECONDS", 0.3)
    beats = []
    with make_executor("local", 2) as executor:
        outcomes = list(executor.run([Job("long", f"{__name__}:nap", (3.0,), timeout=30),
                                      Job("short", f"{__name__}:nap", (0.05,), timeout=30)],
                                     preload=[__name__], beat=beats.append))
    assert [o.key for o in outcomes] == ["short", "long"] and {o.value for o in outcomes} == {"rested"}
    assert [key for key, _ in beats[-1]] == ["long"], beats  # the short one, done, is no longer reported
    seconds = [dict(beat)["long"] for beat in beats]
    assert len(seconds) >= 5 and seconds == sorted(seconds), beats
