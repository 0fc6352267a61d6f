"""onnxruntime time of three ONNX forms of Mish on 20,000 x 64 floats (one intra-op thread):
the ONNX Mish operator, torch's export (Softplus, Tanh, Mul), and the exponential form the
package exports, x n / (n + 2) with n = e^x (e^x + 2). Prints ms per run and the max error.

    OMP_NUM_THREADS=1 python -m benchmarks.mish_forms
"""

from __future__ import annotations

import argparse
import time

import numpy as np

FORMS = ("mish", "three", "exp")


def session(form: str):
    """Return an onnxruntime session of Mish in ``form``, on inputs of shape [n, 64]."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 64])
    if form == "mish":
        nodes = [helper.make_node("Mish", ["x"], ["y"])]
    elif form == "three":
        nodes = [helper.make_node("Softplus", ["x"], ["s"]), helper.make_node("Tanh", ["s"], ["t"]),
                 helper.make_node("Mul", ["x", "t"], ["y"])]
    else:  # n = e^x (e^x + 2); y = x n / (n + 2), x capped at 20 (e^x overflows further on)
        two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
        cap = helper.make_tensor("cap", TensorProto.FLOAT, [], [20.0])
        nodes = [helper.make_node("Constant", [], ["c2"], value=two),
                 helper.make_node("Constant", [], ["c20"], value=cap), helper.make_node("Min", ["x", "c20"], ["xc"]), helper.make_node("Exp", ["xc"], ["e"]),
                 helper.make_node("Add", ["e", "c2"], ["e2"]), helper.make_node("Mul", ["e", "e2"], ["nn"]),
                 helper.make_node("Add", ["nn", "c2"], ["d"]), helper.make_node("Div", ["nn", "d"], ["r"]),
                 helper.make_node("Mul", ["x", "r"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="timed runs of each form")
    args = parser.parse_args(argv)
    x = np.random.randn(20000, 64).astype(np.float32) * 3
    reference = x * np.tanh(np.log1p(np.exp(x)))
    for form in FORMS:
        try:
            mish = session(form)
            y = mish.run(None, {"x": x})[0]
            start = time.perf_counter()
            for _ in range(args.runs):
                mish.run(None, {"x": x})
            print(form, (time.perf_counter() - start) / args.runs * 1e3, "ms", np.abs(y - reference).max())
        except Exception as error:  # an operator this onnxruntime lacks: say so, time the others
            print(form, "ERR", str(error)[:200])


if __name__ == "__main__":
    main()
