import numpy as np, onnxruntime as ort, time
from onnx import helper, TensorProto as T
def one(nodes, inits=(), opset=13):
    X = helper.make_tensor_value_info("x", T.FLOAT, None); Y = helper.make_tensor_value_info("y", T.FLOAT, None)
    m = helper.make_model(helper.make_graph(nodes, "g", [X], [Y], list(inits)), opset_imports=[helper.make_opsetid("", opset)]); m.ir_version = 8
    return m.SerializeToString()
o = ort.SessionOptions(); o.intra_op_num_threads = 1
ax = lambda n, v: helper.make_tensor(n, T.INT64, [1], [v])
def bench(b, x, ref):
    s = ort.InferenceSession(b, o, providers=["CPUExecutionProvider"]); r = s.run(None, {"x": x})[0]
    n = max(20, int(3e7 / x.size)); a = time.perf_counter()
    for _ in range(n): s.run(None, {"x": x})
    return 1e6 * (time.perf_counter() - a) / n, float(np.abs(r - ref).max())
for R, K in ((976, 3), (976, 8), (2500, 23), (2500, 49)):
    xr = np.random.rand(R, K, 32).astype(np.float32); ref = xr.sum(1)
    xl = np.ascontiguousarray(xr.transpose(2, 0, 1))  # [d, R, K]
    print(R, K,
      "RS mid %.0f" % bench(one([helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [ax("a", 1)]), xr, ref)[0],
      "CumSum %.0f" % bench(one([helper.make_node("CumSum", ["x", "c"], ["t"]), helper.make_node("Gather", ["t", "m"], ["y"], axis=1)],
                                [helper.make_tensor("c", T.INT64, [], [1]), helper.make_tensor("m", T.INT64, [], [-1])]), xr, ref)[0],
      "RS last %.0f" % bench(one([helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [ax("a", 2)]), xl, ref.T)[0],
      "RMax mid %.0f" % bench(one([helper.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0)]), xr, xr.max(1))[0],
      "RMax last %.0f" % bench(one([helper.make_node("ReduceMax", ["x"], ["y"], axes=[2], keepdims=0)]), xl, xr.max(1).T)[0])
