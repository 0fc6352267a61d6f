"""Sweeps on Ray: ``gnnplan compare`` and ``gnnplan dataset`` with ``--executor ray`` give the process pool's results.

The tests that start a local Ray instance are opt-in (``--runslow``: starting it alone takes 10-15 s of the
default run's 10 minutes); the default run checks the error paths and the imports. The module starts one
local Ray instance with 2 CPUs (skipped when Ray is not installed) and
runs the shipped Blocksworld model on four generated 5-block problems, through the CLI, both
ways. Jobs that sleep, allocate or kill their Ray worker check the limits and the retries.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from click.testing import CliRunner

from up_gnnplan.cli import main
from up_gnnplan.datasets.generators import generate
from up_gnnplan.executors import ExecutorError, Job, ProcessPool, RayExecutor

COMPARED = ("status", "solved", "valid", "plan_length", "plan_cost", "validation_note", "killed")


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a running cluster
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blocks")
    generate("blocksworld", folder, count=4, seed=3, blocks=5)
    return folder


def cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def records(folder) -> dict:
    lines = (folder / "results.jsonl").read_text().splitlines()
    return {json.loads(line)["problem"]: json.loads(line) for line in lines}


@pytest.mark.slow  # opt-in (--runslow): keeps the default run under 10 minutes
def test_compare_on_ray_records_what_the_process_pool_records(ray_instance, suite, tmp_path):
    common = ["compare", "--engine", "gnnplan", "--suite", suite, "--timeout", 30, "--no-plots"]
    cli(*common, "-o", tmp_path / "pool", "--jobs", 2)
    cli(*common, "-o", tmp_path / "ray", "--executor", "ray")
    pool, ray = records(tmp_path / "pool"), records(tmp_path / "ray")
    assert sorted(pool) == sorted(ray) and len(ray) == 4
    for problem, record in pool.items():
        assert record["solved"] and record["valid"], record
        assert {k: ray[problem][k] for k in COMPARED} == {k: record[k] for k in COMPARED}, problem
        assert sorted(ray[problem]) == sorted(record)  # the same fields, whichever executor ran the task
    # Resumable the same way: a lost last line is the one task run again, the others are kept.
    text = (tmp_path / "ray" / "results.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "ray" / "results.jsonl").write_text("".join(text[:-1]))
    cli(*common, "-o", tmp_path / "ray", "--executor", "ray", "--resume")
    again = (tmp_path / "ray" / "results.jsonl").read_text().splitlines(keepends=True)
    assert again[:-1] == text[:-1] and json.loads(again[-1])["problem"] == json.loads(text[-1])["problem"]


@pytest.mark.slow  # opt-in (--runslow): keeps the default run under 10 minutes
def test_dataset_on_ray_writes_the_arrays_of_the_local_run(ray_instance, suite, tmp_path):
    files = [suite / "domain.pddl", *sorted(suite.glob("p*.pddl"))[:2]]
    cli("dataset", *files, "-o", tmp_path / "local.npz")
    cli("dataset", *files, "-o", tmp_path / "ray.npz", "--executor", "ray", "--memory-mb", 2000, "--task-timeout", 60)
    with np.load(tmp_path / "local.npz") as local, np.load(tmp_path / "ray.npz") as ray:
        assert local.files == ray.files
        for key in local.files:
            assert np.array_equal(local[key], ray[key]), key  # the metadata (a JSON string) too


# Jobs for the executors (they run in a process of their own and import this module by name).

def sleep_for(seconds, phase):
    time.sleep(seconds)


def allocate(megabytes, phase):
    return len(bytearray(megabytes * 2**20))


def lose_worker_once(marker, phase):
    """Kill the Ray worker that runs this job the first time, return on the next."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        with open(f"/proc/{os.getppid()}/stat") as handle:  # the parent is the worker's forkserver
            worker = int(handle.read().rsplit(")", 1)[1].split()[1])
        os.kill(worker, signal.SIGKILL)
        time.sleep(60)  # ended at once: the forkserver ends with the worker, and this process with it
    return "run again"


@pytest.mark.slow  # opt-in (--runslow): a local Ray instance takes 10-15 s to start
def test_limits_hold_on_ray_as_in_the_process_pool(ray_instance):
    jobs = [Job("slow", f"{__name__}:sleep_for", (30,), timeout=1.0),
            Job("large", f"{__name__}:allocate", (4000,), memory_mb=2000),
            Job("small", f"{__name__}:allocate", (10,), memory_mb=2000)]
    for executor in (ProcessPool(2), RayExecutor()):
        with executor:
            outcomes = {o.key: o for o in executor.run(jobs)}
        assert outcomes["slow"].status == "timeout" and outcomes["slow"].killed, executor.name
        assert 1.0 <= outcomes["slow"].wall < 5 and "while starting" in outcomes["slow"].error
        assert outcomes["large"].status == "memout" and "2000 MB limit" in outcomes["large"].error, outcomes["large"]
        assert outcomes["small"].status == "ok" and outcomes["small"].value == 10 * 2**20


@pytest.mark.slow  # opt-in (--runslow): a local Ray instance takes 10-15 s to start
def test_a_job_whose_worker_is_lost_is_run_again(ray_instance, tmp_path):
    start = time.monotonic()
    with RayExecutor(retries=1) as executor:
        (outcome,) = executor.run([Job(0, f"{__name__}:lose_worker_once", (str(tmp_path / "lost"),), timeout=120)])
    assert outcome.status == "ok" and outcome.value == "run again", outcome
    assert time.monotonic() - start < 50  # the first run's process did not wait out its sleep


def test_an_unreachable_cluster_is_named_without_a_traceback(tmp_path):
    pytest.importorskip("ray")
    done = subprocess.run([sys.executable, "-m", "up_gnnplan.cli", "compare", "--engine", "gnnplan", "--example",
                           "blocksworld", "-o", str(tmp_path / "out"), "--executor", "ray", "--address", "127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_without_ray_the_error_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as when it is not installed
    with pytest.raises(ExecutorError, match=r"pip install 'up-gnnplan\[ray\]'"):
        RayExecutor().__enter__()
    result = CliRunner().invoke(main, ["compare", "--engine", "gnnplan", "--example", "blocksworld",
                                       "-o", str(tmp_path / "out"), "--executor", "ray"])
    assert result.exit_code == 2 and "up-gnnplan[ray]" in result.output


NO_RAY = textwrap.dedent(
    """
    import sys
    import up_gnnplan, up_gnnplan.cli
    from click.testing import CliRunner
    for args in [["--help"]] + [[name, "--help"] for name in sorted(up_gnnplan.cli.main.commands)]:
        assert CliRunner().invoke(up_gnnplan.cli.main, args).exit_code == 0, args
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("ray", "torch")))
    """
)


def test_import_and_help_do_not_import_ray():
    done = subprocess.run([sys.executable, "-c", NO_RAY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
