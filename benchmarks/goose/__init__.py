"""The WL-GOOSE peer (Chen, Trevizan & Thiébaux 2024) for the benchmarks: see README.md here.

Benchmark-only: it needs the ``peer`` extra (wlplan, scikit-learn); ``import up_gnnplan``
never imports it. :mod:`.features` (wlplan states and the model file), :mod:`.train` (the
rank-SVM and the GP regression), :mod:`.engine` (the ``wl-goose`` UP engine).
"""
