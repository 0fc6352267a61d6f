"""onnxruntime kernels against the exported forms: Mish (opset 18) and Softplus-Tanh against the exponential
form the exporter writes, and ReduceLogSumExp against the smooth maximum's five operators (one thread).

    OMP_NUM_THREADS=1 python benchmarks/results/tier_steps/ort_kernels.py
"""

import numpy as np, onnx, onnxruntime as ort, time
from onnx import helper as h, TensorProto as T
def sess(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), o, providers=["CPUExecutionProvider"])
def bench(s, feed, n=300):
    for _ in range(20): s.run(None, feed)
    t = time.perf_counter()
    for _ in range(n): s.run(None, feed)
    return 1e6 * (time.perf_counter() - t) / n
X = h.make_tensor_value_info("x", T.FLOAT, None); Y = h.make_tensor_value_info("y", T.FLOAT, None)
c = lambda name, v: onnx.numpy_helper.from_array(np.array(v, dtype=np.float32), name)
x = np.random.randn(1000, 64).astype(np.float32)
# 7-op mish
nodes = [h.make_node("Clip", ["x", "", "c20"], ["cl"]), h.make_node("Exp", ["cl"], ["e"]), h.make_node("Add", ["e", "c2"], ["e2"]),
         h.make_node("Mul", ["e", "e2"], ["n"]), h.make_node("Add", ["n", "c2"], ["n2"]), h.make_node("Mul", ["x", "n"], ["xn"]), h.make_node("Div", ["xn", "n2"], ["y"])]
s1 = sess(nodes, [X], [Y], [c("c20", 20.0), c("c2", 2.0)])
s2 = sess([h.make_node("Mish", ["x"], ["y"])], [X], [Y])
s3 = sess([h.make_node("Softplus", ["x"], ["sp"]), h.make_node("Tanh", ["sp"], ["t"]), h.make_node("Mul", ["x", "t"], ["y"])], [X], [Y])
a, b, cc = s1.run(None, {"x": x})[0], s2.run(None, {"x": x})[0], s3.run(None, {"x": x})[0]
print("diff mish", abs(a - b).max(), abs(a - cc).max())
for xs in [x, np.random.randn(200, 64).astype(np.float32), np.random.randn(5000, 64).astype(np.float32)]:
    print(xs.shape, "7-op %.1f us  Mish %.1f us  softplus-tanh %.1f us" % (bench(s1, {"x": xs}), bench(s2, {"x": xs}), bench(s3, {"x": xs})))
# smoothmax on gathered [R,K,d]
g = np.random.randn(600, 3, 32).astype(np.float32)
beta = 8.0
n_cur = [h.make_node("ReduceMax", ["x", "ax"], ["m"], keepdims=1), h.make_node("Sub", ["x", "m"], ["d"]), h.make_node("Mul", ["d", "b"], ["bd"]),
         h.make_node("Exp", ["bd"], ["e"]), h.make_node("ReduceSum", ["e", "ax"], ["y"], keepdims=0)]
s4 = sess(n_cur, [X], [Y], [c("b", beta), onnx.numpy_helper.from_array(np.array([1], dtype=np.int64), "ax")])
s5 = sess([h.make_node("Mul", ["x", "b"], ["bx"]), h.make_node("ReduceLogSumExp", ["bx", "ax"], ["y"], keepdims=0)], [X], [Y],
          [c("b", beta), onnx.numpy_helper.from_array(np.array([1], dtype=np.int64), "ax")])
print("rowsum (5 ops) %.1f us, mul+RLSE %.1f us" % (bench(s4, {"x": g}), bench(s5, {"x": g})))
gg = g.copy(); gg[:, 2, :] = -1e30
ref = np.log(np.exp(beta * (g[:, :2] - g[:, :2].max(1, keepdims=True))).sum(1)) + beta * g[:, :2].max(1)
print("RLSE with -1e30 fill, err", abs(s5.run(None, {"x": gg})[0] - ref).max())
