"""The benchmarks of up-gnnplan: one script per measurement, each run from the repository root as
``python -m benchmarks.NAME ...`` (``--help`` says what it measures and how).

:mod:`benchmarks.common` holds what the scripts share (paths, the commands log, tables, the
benchmark sets, the shipped models' index); :mod:`benchmarks.goose` is the WL-GOOSE peer. Results
go to ``benchmarks/results/`` (summaries and per-task records; per-task logs and training states
stay out of git). Not part of the installed package.
"""
