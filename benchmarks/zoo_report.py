"""Combine the per-domain evaluations of the shipped models into one report with one cactus plot.

``benchmarks/build_zoo.py`` evaluates each shipped model against LAMA-first with
``gnnplan compare`` into ``benchmarks/zoo/eval/NAME/``. This script reads every
``results.jsonl`` there (or the folders given) and writes, with the package's own reporting,
``benchmarks/zoo/eval/all/`` (summary.md with coverage per domain, plan-length and time
ratios on commonly solved tasks, results.csv, and the coverage, cactus and plan-length plots):

    python benchmarks/zoo_report.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from up_gnnplan.compare.report import write_reports

EVAL = Path(__file__).resolve().parent / "zoo" / "eval"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="evaluation folders (default: all under benchmarks/zoo/eval)")
    parser.add_argument("-o", "--output", type=Path, default=EVAL / "all")
    parser.add_argument("--baseline", default="fast-downward")
    args = parser.parse_args()
    folders = args.folders or sorted(p.parent for p in EVAL.glob("*/results.jsonl") if p.parent != args.output)
    records = [json.loads(line) for folder in folders
               for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]
    if not records:
        raise SystemExit(f"no results.jsonl under {', '.join(map(str, folders)) or EVAL}")
    engines = sorted({r["engine"] for r in records}, key=lambda e: (e == args.baseline, e))
    summary, files = write_reports(records, args.output, engines, args.baseline)
    print(summary)
    print("wrote " + ", ".join(str(f) for f in files))


if __name__ == "__main__":
    main()
