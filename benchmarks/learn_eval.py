"""`gnnplan learn` measured as the IPC 2023 Learning Track does: each domain learnt from its training problems alone.

For each domain: ``gnnplan learn DOMAIN training/easy -o OUT/DOMAIN/learn.onnx --timeout T`` (the
same budget for every domain), then two ``gnnplan compare`` runs on the same tasks, one after
the other on this machine, 60 s per task, every plan validated:

- the learnt model beside LAMA-first (``--engine gnnplan --engine fast-downward --model DOMAIN=learn.onnx``);
- the shipped hand-made model (``--engine gnnplan``, the model the engine picks by the domain's predicates).

The test sets are IPC 2023 ``testing/easy`` (30 tasks) and ``DOMAIN-scaled`` (five problems at
3-10x the size of the largest training problem, pinned in ``results/standing/scaled_sets.json``).

    OMP_NUM_THREADS=1 python -m benchmarks.learn_eval run blocksworld satellite --timeout 900 -o /tmp/gnnplan-learn-eval
    OMP_NUM_THREADS=1 python -m benchmarks.learn_eval run transport --labels satisficing --runs learn -o /tmp/le-sat
    python -m benchmarks.learn_eval report -o /tmp/gnnplan-learn-eval      # the markdown table

The :data:`UNSEEN` domains of ``generated/`` (delivery, grid, logistics) are learnt from their 100 ``-train`` problems
and tested on the ten largest ``-valid`` ones (Delivery also on :data:`DELIVERY_SCALED`). The four ``learning-practice`` domains (hiking, elevators, barman, goldminer: no shipped model, no
tuning here) are learnt from their ``train/`` problems and tested on their ``test/`` problems (2-4x
larger), the learnt model beside LAMA-first; so are :data:`ADL`'s Briefcase (conditional effects), written here, and
Switchboard and Reach (:data:`GENERATED_ADL`: disjunctive and universal preconditions, derived predicates), and
:data:`PDDLGYM`'s Depots and Newspapers (pddlgym's files; Newspapers also on larger ones written here), and
:data:`WRITTEN`'s DriverLog, Zenotravel and Nomystery (``benchmarks/written_domains.py``). On
every domain the WL-GOOSE peer
(``benchmarks/goose``, extra ``peer``) is trained on the same labels as ``learn`` (the run folder's
``labels/*.npz``, joined) and compared on the same tasks (``SET-goose``).

``run`` skips a step whose output exists, so a stopped run continues.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from up_gnnplan.learn.recipe import HEADS

from .common import DOMAINS as ZOO_SPECS
from .common import SHARED, generate_splits, manifest, table
from .standing import scaled_tests

IPC = ("blocksworld", "childsnack", "ferry", "floortile", "miconic", "rovers", "satellite", "sokoban", "spanner",
       "transport")
PRACTICE = ("hiking", "elevators", "barman", "goldminer")  # learning-practice: no shipped model covers them
# generated/ domains no session tuned `learn` for: learnt from their 100 `-train` problems, tested on the
# ten largest `-valid` ones (Delivery: up to 30 objects, then 72; Grid, keys and locks: up to 14, then 42-43;
# Logistics: up to 17, then 39-40).
UNSEEN = {"delivery": [f"valid-{n}.pddl" for n in (9, 18, 27, 36, 45, 54, 63, 72, 81, 90)],
          "grid": [f"valid-{n}.pddl" for n in range(55, 65)],
          "logistics": [f"valid-{n}.pddl" for n in (45, 46, 47, 48, 91, 92, 93, 94, 95, 96)]}
# Domains whose shipped model was made by hand with `gnnplan train` before `learn` existed, learnt here from
# small problems and tested on larger ones beside it: Visitall from GOOSE's 24 training problems (3x3 to 10x10
# grids), tested on IPC 2014's largest (11x11 to 18x18) and GOOSE's three 11x11 ones; Blocks (IPC 2000, one
# tower) from its 18 problems of 4-9 blocks, tested on its 17 of 10-17 blocks; Gripper from generated problems
# of 2-10 balls (seed = balls), tested on `gripper-large` (15-150 balls, the standing set); the x/y domains of
# Stahlberg, Bonet & Geffner (2024) and Vacuum from build_zoo's generated `train` and `larger` splits, tested on
# its `test` split (benchmarks.common.DOMAINS: what their hand-made models were trained and measured on).
CLASSIC = ("visitall", "blocks", "gripper", "navig-xy", "visitall-xy", "vacuum")
GRIPPER_TRAIN = range(2, 11)
# Domains with a shipped model to run beside the learnt one (Grid's was made by hand before its `learn` one).
WITH_SHIPPED = IPC + ("grid", "logistics") + CLASSIC
# ...and on five problems of its layout at 3.6-11x the largest training problem's 30 objects, written
# here (no generator of it ships): a WIDTH x WIDTH grid, one truck, PACKAGES packages in random cells,
# all bound for one random cell, as the `generated/` files are.
DELIVERY_SCALED = ((10, 8), (12, 10), (14, 12), (16, 14), (18, 16))
# Briefcase (Pednault's ADL domain: moving the case moves what it holds, a conditional effect under a forall), which
# no model or session here had seen: written here, 20 training problems of 1-9 objects and 2-5 locations, tested on
# 10 of 15-80 objects and 8-30 locations (random starts and goals, the case's goal location too; seeds fixed).
ADL = ("briefcase", "switchboard", "reach")
# Switchboard (disjunctive and universal preconditions) and Reach (a recursive derived predicate), the package's
# generators of PDDL beyond STRIPS (no model, no tuning): (size parameters, count) for training, and for testing
# at 3-10x the largest training problem's objects.
GENERATED_ADL = {
    "switchboard": ([(dict(lamps=l, switches=s), 2) for l, s in ((1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 2), (4, 3),
                                                                 (5, 3), (5, 4), (6, 4))],
                    [(dict(lamps=l, switches=s), 2) for l, s in ((20, 8), (30, 12), (45, 15), (60, 20), (70, 25))]),
    "reach": ([(dict(nodes=n), 3) for n in (2, 3, 4, 5, 6, 7, 8)],
              [(dict(nodes=n), 2) for n in (25, 40, 55, 70, 80)]),
}
BRIEFCASE_TRAIN = ((1, 2), (2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (4, 3), (4, 4), (4, 4), (5, 3), (5, 4), (5, 5),
                   (6, 3), (6, 4), (6, 5), (7, 4), (7, 5), (8, 4), (8, 5), (9, 5))
BRIEFCASE_TEST = ((15, 8), (20, 10), (25, 10), (30, 12), (35, 15), (40, 15), (50, 20), (60, 20), (70, 25), (80, 30))
BRIEFCASE_DOMAIN = """\
(define (domain briefcase)
  (:requirements :strips :typing :conditional-effects :negative-preconditions)
  (:types location portable)
  (:predicates (at ?o - portable ?l - location) (is-at ?l - location) (in ?o - portable))
  (:action move
    :parameters (?from ?to - location)
    :precondition (is-at ?from)
    :effect (and (is-at ?to) (not (is-at ?from))
                 (forall (?o - portable) (when (in ?o) (and (at ?o ?to) (not (at ?o ?from)))))))
  (:action put-in
    :parameters (?o - portable ?l - location)
    :precondition (and (at ?o ?l) (is-at ?l) (not (in ?o)))
    :effect (in ?o))
  (:action take-out
    :parameters (?o - portable)
    :precondition (in ?o)
    :effect (not (in ?o))))
"""
# Domains of pddlgym 0.0.5's PDDL files (its wheel, fetched by ``pip download``), standard PDDL, no session tuned them:
# IPC 2002 Depots (10 training problems, its 12 larger ones the test) and Newspapers (40 training problems of 10-90
# objects, 10 test ones; also NEWSPAPERS_SCALED, generated here: 100-400 locations, 80% of them wanting a paper);
# pddlgym's own Search and Rescue (level 2), Rearrangement, Minecraft, Trap Newspapers, Glib Doors, Maze, and its
# Elevator and Travel (a :goal before the :init). Test sets of more than PDDLGYM_TESTS problems: that many, spread
# over them by file size (the largest among them).
PDDLGYM = ("depot", "newspapers", "searchandrescue_level2", "rearrangement", "minecraft", "trapnewspapers", "glibdoors",
           "maze", "elevator", "travel")
PDDLGYM_TESTS = 10
PDDLGYM_WHEEL = "pddlgym==0.0.5"
NEWSPAPERS_SCALED = (100, 150, 200, 300, 400)
# benchmarks.written_domains: DriverLog and Zenotravel (IPC 2002, STRIPS), written here on 2026-12-01 and first
# seen by `learn` then: 20 training problems of 9-32 objects, 10 test ones of 54-147; Nomystery (IPC 2011, dead ends
# where fuel is wasted), 2026-12-01: 11-35 and 63-156; Parking (IPC 2008, action costs), 2026-12-02: 7-28 and 31-58;
# Storage (IPC 2006, a type under two supertypes, `either` parameters), 2026-12-02: 8-31 and 38-106.
WRITTEN = ("driverlog", "zenotravel", "nomystery", "parking", "storage", "tyreworld", "tpp")
DOMAINS = IPC + PRACTICE + tuple(UNSEEN) + CLASSIC + ADL + PDDLGYM + WRITTEN
GOOSE_ENGINE = "benchmarks.goose.engine"


def _layout(domain: str) -> tuple[Path, Path | list[Path], dict[str, list]]:
    """Return (domain file, training folder(s), {test set name: compare task arguments}) of ``domain``."""
    if domain in PRACTICE:
        folder = SHARED / "learning-practice" / domain
        return folder / "domain.pddl", folder / "train", {"test": ["--suite", folder / "test"]}
    if domain in UNSEEN:
        train, valid = SHARED / "generated" / f"{domain}-train", SHARED / "generated" / f"{domain}-valid"
        sets = {"test": [valid / "domain.pddl", *(valid / name for name in UNSEEN[domain])]}
        if domain == "delivery":
            sets["scaled"] = _delivery_scaled(train / "domain.pddl")
        return train / "domain.pddl", train, sets
    if domain in CLASSIC:
        return _classic_layout(domain)
    if domain in GENERATED_ADL:
        return _generated_adl_layout(domain)
    if domain in ADL:
        return _briefcase_layout()
    if domain in PDDLGYM:
        return _pddlgym_layout(domain)
    if domain in WRITTEN:
        return _written_layout(domain)
    folder = SHARED / "ipc2023-learning" / domain
    scaled_domain, scaled = scaled_tests(f"{domain}-scaled")
    return folder / "domain.pddl", folder / "training" / "easy", {
        "testing-easy": ["--suite", folder / "testing" / "easy"], "scaled": [scaled_domain, *scaled]}


def _set_names(domain: str) -> tuple[str, ...]:
    """The names of ``domain``'s test sets, as :func:`_layout` gives them (without writing any)."""
    from .written_domains import SIZES

    return ("testing-easy", "scaled") if domain in IPC else \
        ("test", "scaled") if domain in ("delivery", "newspapers") or "scaled" in SIZES.get(domain, {}) else ("test",)


def _pddlgym_layout(domain: str, work: Path = Path("/tmp/gnnplan-pddlgym")) -> tuple[Path, Path, dict[str, list]]:
    """:func:`_layout` of a :data:`PDDLGYM` domain: pddlgym's wheel fetched and its files copied (once) under ``work``
    (``DOMAIN/domain.pddl``, ``train/``, ``test/``); Newspapers' scaled problems written beside them (seed 7)."""
    import random
    import shutil
    import subprocess
    import sys
    import zipfile

    folder = work / domain
    if not (folder / "domain.pddl").is_file():
        wheels = work / "wheel"
        if not list(wheels.glob("pddlgym-*.whl")):
            subprocess.run([sys.executable, "-m", "pip", "download", PDDLGYM_WHEEL, "--no-deps", "-q", "-d", wheels],
                           check=True)
        with zipfile.ZipFile(next(wheels.glob("pddlgym-*.whl"))) as wheel:
            for name in wheel.namelist():
                parts = name.split("/")
                if parts[:2] != ["pddlgym", "pddl"] or not name.endswith(".pddl"):
                    continue
                target = {f"{domain}.pddl": folder / "domain.pddl"}.get(parts[2]) if len(parts) == 3 else \
                    {domain: folder / "train", f"{domain}_test": folder / "test"}.get(parts[2])
                if target is not None and len(parts) == 4:
                    target = target / parts[3]
                if target is not None and len(parts) in (3, 4):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with wheel.open(name) as source, open(target, "wb") as out:
                        shutil.copyfileobj(source, out)
    tests = sorted((folder / "test").glob("*.pddl"), key=lambda f: (f.stat().st_size, f.name))
    if len(tests) > PDDLGYM_TESTS:
        spread = [tests[round(i * (len(tests) - 1) / (PDDLGYM_TESTS - 1))] for i in range(PDDLGYM_TESTS)]
        sets = {"test": [folder / "domain.pddl", *spread]}
    else:
        sets = {"test": ["--suite", folder / "test"]}
    if domain == "newspapers":
        scaled = work / "newspapers-scaled"
        scaled.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "domain.pddl", scaled / "domain.pddl")
        rng = random.Random(7)
        for n in NEWSPAPERS_SCALED:
            locations, papers = [f"loc-{i}" for i in range(n)], [f"paper-{i}" for i in range(n + 5)]
            wanting = rng.sample(locations[1:], int(0.8 * (n - 1)))
            (scaled / f"p{n}.pddl").write_text(
                f"(define (problem newspaper-{n}) (:domain newspapers)\n"
                f"  (:objects {' '.join(locations)} - loc {' '.join(papers)} - paper)\n"
                f"  (:init (at loc-0) (ishomebase loc-0) {' '.join(f'(unpacked {p})' for p in papers)}\n"
                f"         {' '.join(f'(wantspaper {w})' for w in wanting)})\n"
                f"  (:goal (and {' '.join(f'(satisfied {w})' for w in wanting)})))\n")
        sets["scaled"] = ["--suite", scaled]
    return folder / "domain.pddl", folder / "train", sets


def _classic_layout(domain: str, work: Path = Path("/tmp/gnnplan-learn-classic")) -> tuple[Path, Path | list[Path], dict[str, list]]:
    """:func:`_layout` of a :data:`CLASSIC` domain; its training folder written (once) under ``work``."""
    if domain == "visitall":
        goose, ipc = SHARED / "goose-aaai24" / "visitall", SHARED / "ipc-classic" / "visitall-opt14-strips"
        tests = [ipc / f"p-1-{n}.pddl" for n in range(11, 19)] + sorted((goose / "val").glob("*.pddl"))
        return goose / "domain.pddl", goose / "train", {"test": [goose / "domain.pddl", *tests]}
    train = work / f"{domain}-train"
    if domain == "blocks":
        folder = SHARED / "ipc-classic" / "blocks"
        rows = manifest("ipc-classic/blocks")
        if not (train / "domain.pddl").is_file():
            train.mkdir(parents=True, exist_ok=True)
            for objects, name, _ in rows:
                if objects < 10:
                    (train / name).write_text((folder / name).read_text())
            (train / "domain.pddl").write_text((folder / "domain.pddl").read_text())
        tests = [folder / name for objects, name, _ in rows if objects >= 10]
        return train / "domain.pddl", train, {"test": [folder / "domain.pddl", *tests]}
    if domain in ("navig-xy", "visitall-xy", "vacuum"):
        splits = generate_splits(domain, ZOO_SPECS[domain])
        folder = splits["train"][0].parent
        return folder / "domain.pddl", [folder, splits["larger"][0].parent], {
            "test": [folder / "domain.pddl", *splits["test"]]}
    from up_gnnplan.datasets.generators import generate  # gripper

    if not (train / "domain.pddl").is_file():
        for balls in GRIPPER_TRAIN:
            generate("gripper", train, count=3, seed=balls, balls=balls)
    large = generate_splits("gripper-large", ZOO_SPECS["gripper-large"])["test"]
    return train / "domain.pddl", train, {"test": [large[0].parent / "domain.pddl", *large]}


def _briefcase_layout(work: Path = Path("/tmp/gnnplan-learn-briefcase")) -> tuple[Path, Path, dict[str, list]]:
    """:func:`_layout` of Briefcase: :data:`BRIEFCASE_TRAIN` and :data:`BRIEFCASE_TEST` written (once) under ``work``
    (problem k of a set seeded by k, plus 1 for training and 100 for testing)."""
    import random

    def write(folder: Path, sizes, seed: int) -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "domain.pddl").write_text(BRIEFCASE_DOMAIN)
        paths = []
        for k, (objects, locations) in enumerate(sizes):
            rng = random.Random(seed + k)
            places, things = [f"l{i}" for i in range(locations)], [f"o{i}" for i in range(objects)]
            init = [f"(is-at {rng.choice(places)})"] + [f"(at {o} {rng.choice(places)})" for o in things]
            goal = [f"(at {o} {rng.choice(places)})" for o in things] + [f"(is-at {rng.choice(places)})"]
            path = folder / f"p-o{objects}l{locations}-{k}.pddl"
            path.write_text(f"(define (problem p{k}) (:domain briefcase)\n"
                            f"  (:objects {' '.join(places)} - location {' '.join(things)} - portable)\n"
                            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")
            paths.append(path)
        return paths

    write(work / "train", BRIEFCASE_TRAIN, 1)
    tests = write(work / "test", BRIEFCASE_TEST, 100)
    return work / "train" / "domain.pddl", work / "train", {"test": [work / "test" / "domain.pddl", *tests]}


def _written_layout(domain: str, work: Path = Path("/tmp/gnnplan-learn-written")) -> tuple[Path, Path, dict[str, list]]:
    """:func:`_layout` of a :data:`WRITTEN` domain: its ``train``, ``test`` (and ``scaled``, where it has one) splits
    written (again) under ``work``."""
    from .written_domains import SIZES, write

    train = work / f"{domain}-train"
    write(domain, "train", train)
    sets = {}
    for split in ("test", "scaled"):
        if split in SIZES[domain]:
            folder = work / f"{domain}-{split}"
            sets[split] = [folder / "domain.pddl", *write(domain, split, folder)]
    return train / "domain.pddl", train, sets


def _generated_adl_layout(domain: str, work: Path = Path("/tmp/gnnplan-learn-adl")) -> tuple[Path, Path, dict[str, list]]:
    """:func:`_layout` of a :data:`GENERATED_ADL` domain: its training and test problems written (once) under
    ``work`` by the package's generator (seed 1 for training, 100 for testing, one seed a size)."""
    from up_gnnplan.datasets.generators import generate

    train_sizes, test_sizes = GENERATED_ADL[domain]
    folders = {"train": (work / f"{domain}-train", train_sizes, 1), "test": (work / f"{domain}-test", test_sizes, 100)}
    paths = {}
    for split, (folder, sizes, seed) in folders.items():
        if not (folder / "domain.pddl").is_file():
            for k, (params, count) in enumerate(sizes):
                generate(domain, folder, count=count, seed=seed + k, **params)
        paths[split] = sorted(folder.glob("p-*.pddl"))
    test = folders["test"][0]
    return folders["train"][0] / "domain.pddl", folders["train"][0], {"test": [test / "domain.pddl", *paths["test"]]}


def _delivery_scaled(domain: Path, folder: Path = Path("/tmp/gnnplan-delivery-scaled")) -> list[Path]:
    """Write (once) and return the compare arguments of the :data:`DELIVERY_SCALED` problems (seed = width)."""
    import random
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(domain, folder / "domain.pddl")
    problems = []
    for width, packages in DELIVERY_SCALED:
        path = folder / f"delivery-{width}x{width}-{packages}.pddl"
        problems.append(path)
        if path.is_file():
            continue
        rng = random.Random(width)
        cells = [f"c_{x}_{y}" for x in range(width) for y in range(width)]
        links = [f"(adjacent c_{x}_{y} c_{x + dx}_{y + dy})" for x in range(width) for y in range(width)
                 for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)) if 0 <= x + dx < width and 0 <= y + dy < width]
        names = [f"p{i + 1}" for i in range(packages)]
        goal = rng.choice(cells)
        init = links + [f"(at t1 {rng.choice(cells)})", "(empty t1)"] + [
            f"(at {p} {rng.choice([c for c in cells if c != goal])})" for p in names]
        path.write_text(f"(define (problem delivery-{width}x{width}-{packages})\n  (:domain delivery)\n"
                        f"  (:objects {' '.join(cells)} - cell {' '.join(names)} - package t1 - truck)\n"
                        f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(f'(at {p} {goal})' for p in names)})))\n")
    return [folder / "domain.pddl", *problems]


def _train_goose(work: Path, log: Path) -> Path | None:
    """Train the WL-GOOSE peer on the learn run's labels (joined into one file); None without the peer extra."""
    model = work / "goose.json"
    if model.is_file():
        return model
    try:
        from .goose.train import train_file
    except ImportError as error:
        print(f"WL-GOOSE not trained ({error}): pip install -e '.[peer]'", flush=True)
        return None
    from up_gnnplan.datasets.store import Dataset

    labels = sorted((work / "learn.onnx.learn" / "labels").glob("*.npz"))
    if not labels:
        return None
    data = Dataset.load_all(labels)
    joined = data.save(work / "labels.npz")
    with open(log, "w") as handle:
        train_file(joined, model, log=lambda line: print(line, file=handle, flush=True))
    return model


def _sh(command: list, log: Path) -> int:
    import subprocess

    with open(log, "w") as handle:
        return subprocess.run([str(c) for c in command], stdout=handle, stderr=subprocess.STDOUT).returncode


RUNS = ("learn", "lama", "shipped", "goose")


def run_domain(domain: str, out: Path, timeout: float, task_timeout: float, labels: str = "auto",
               only: tuple = RUNS, head: str | None = None, seed: int | None = None,
               labels_from: Path | None = None) -> None:
    domain_file, training, sets = _layout(domain)
    work = out / domain
    work.mkdir(parents=True, exist_ok=True)
    model = work / "learn.onnx"
    if not model.is_file():
        print(f"{domain}: gnnplan learn --timeout {timeout:g}", flush=True)
        folders = training if isinstance(training, list) else [training]
        _sh(["gnnplan", "learn", domain_file, *folders, "-o", model, "--timeout", timeout, "--labels", labels,
             *(["--head", head] if head else []), *(["--seed", seed] if seed is not None else []),
             *(["--labels-from", labels_from / domain / "learn.onnx.learn"] if labels_from else [])], work / "learn.log")
    if not model.is_file():
        print(f"{domain}: no model (see {work / 'learn.log'})", flush=True)
        return
    goose = _train_goose(work, work / "goose-train.log") if "goose" in only else None
    runs = [("learn", ["--engine", "gnnplan", "--engine", "fast-downward", "--model", model]),
            ("lama", ["--engine", "fast-downward"])]  # on the files: rows before 2026-11-27 13:40 ran through UP
    if domain in WITH_SHIPPED:
        runs.append(("shipped", ["--engine", "gnnplan"]))
    if goose is not None:
        runs.append(("goose", ["--register", GOOSE_ENGINE, "--engine", "wl-goose",
                               "--engine-param", f"wl-goose:model={goose}"]))
    runs = [(label, engines) for label, engines in runs if label in only]
    for name, tasks in sets.items():
        for label, engines in runs:
            target = work / f"{name}-{label}"
            if (target / "results.jsonl").is_file() and (target / "summary.md").is_file():
                continue
            print(f"{domain}: {name} with {label}", flush=True)
            _sh(["gnnplan", "compare", *engines, *tasks, "-o", target, "--timeout", task_timeout],
                work / f"{name}-{label}.log")


def _solved(path: Path) -> dict[str, int]:
    """Tasks solved per engine label in a compare run's results.jsonl; ``ENGINE by the model``: those of
    gnnplan's solves that its learned part found (the rest LAMA-first found after the hand-off; rows
    of runs before the hand-off have no ``found_by`` and were all the model's)."""
    solved: dict[str, int] = {}
    if not path.is_file():
        return solved
    for line in path.read_text().splitlines():
        row = json.loads(line)
        solved.setdefault(row["engine"], 0)
        solved[row["engine"]] += bool(row.get("solved"))
        if row["engine"].startswith("gnnplan"):
            key = f"{row['engine']} by the model"
            solved[key] = solved.get(key, 0) + bool(row.get("solved") and (row.get("found_by") or "learned") == "learned")
    return solved


def _gnnplan(solved: dict[str, int], tasks: int) -> str:
    """gnnplan's figure: solved, and how many of them its learned part found where LAMA-first found some."""
    total, model = solved.get("gnnplan:auto", 0), solved.get("gnnplan:auto by the model", 0)
    return f"{total}/{tasks}" + (f" ({model} by the model)" if model != total else "")


def _tasks(path: Path) -> int:
    if not path.is_file():
        return 0
    return len({json.loads(line)["problem"] for line in path.read_text().splitlines()})


def _learn_record(model: Path) -> dict:
    from up_gnnplan.runtime.value_function import read_metadata

    try:
        return read_metadata(model).get("training_record", {})
    except Exception:  # noqa: BLE001  (a report row, not a check)
        return {}


def report(out: Path) -> str:
    rows = []
    for domain in DOMAINS:
        work = out / domain
        if not (work / "learn.onnx").is_file():
            continue
        record = _learn_record(work / "learn.onnx").get("learn", {})
        labelled = record.get("data", {}).get("labelled", {})
        for name in _set_names(domain):
            learn = _solved(work / f"{name}-learn" / "results.jsonl")
            shipped = _solved(work / f"{name}-shipped" / "results.jsonl")
            goose = _solved(work / f"{name}-goose" / "results.jsonl")
            lama = _solved(work / f"{name}-lama" / "results.jsonl") or learn  # on the files where it ran so
            tasks = _tasks(work / f"{name}-learn" / "results.jsonl")
            rows.append([domain, name, _gnnplan(learn, tasks),
                         _gnnplan(shipped, tasks) if shipped else "not run" if domain in WITH_SHIPPED else "none",
                         f"{lama.get('fast-downward', 0)}/{tasks}",
                         f"{goose['wl-goose']}/{tasks}" if goose else "not run",
                         f"{len(labelled)}/{record.get('problems', '?')}"])
    header = ["domain", "test set", "gnnplan learn", "shipped model", "LAMA-first", "WL-GOOSE (same labels)",
              "problems labelled"]
    return table(header, rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="learn and compare the named domains")
    run.add_argument("domains", nargs="+", choices=DOMAINS)
    run.add_argument("--timeout", type=float, default=1800.0, help="seconds of each gnnplan learn")
    run.add_argument("--task-timeout", type=float, default=60.0, help="seconds per task of each compare")
    run.add_argument("--labels", choices=("auto", "optimal", "satisficing"), default="auto",
                     help="gnnplan learn --labels")
    run.add_argument("--runs", default=",".join(RUNS), help=f"the compare runs, of {','.join(RUNS)}")
    run.add_argument("--head", choices=HEADS, help="gnnplan learn --head (default: learn's)")
    run.add_argument("--seed", type=int, help="gnnplan learn --seed (default: learn's)")
    run.add_argument("--labels-from", type=Path,
                     help="gnnplan learn --labels-from FOLDER/DOMAIN/learn.onnx.learn: another learn_eval run's labels")
    run.add_argument("-o", "--output", type=Path, required=True)
    rep = sub.add_parser("report", help="print the markdown table of a run's folder")
    rep.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "run":
        for domain in args.domains:
            run_domain(domain, args.output, args.timeout, args.task_timeout, args.labels, tuple(args.runs.split(",")),
                       args.head, args.seed, args.labels_from)
    print(report(args.output))


if __name__ == "__main__":
    main()
