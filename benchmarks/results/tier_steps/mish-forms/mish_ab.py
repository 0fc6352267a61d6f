import time, numpy as np, onnxruntime as ort
from onnx import helper as h, TensorProto as T
def model(kind, rows, cols):
    X = h.make_tensor_value_info("x", T.FLOAT, [None, cols]); Y = h.make_tensor_value_info("y", T.FLOAT, [None, cols])
    c = lambda n, v: h.make_node("Constant", [], [n], value=h.make_tensor(n, T.FLOAT, [], [v]))
    if kind == "exp":
        nodes = [c("c20", 20.0), c("two", 2.0), h.make_node("Clip", ["x", "", "c20"], ["cl"]), h.make_node("Exp", ["cl"], ["e"]),
                 h.make_node("Add", ["e", "two"], ["e2"]), h.make_node("Mul", ["e", "e2"], ["n"]), h.make_node("Mul", ["x", "n"], ["xn"]),
                 h.make_node("Add", ["n", "two"], ["n2"]), h.make_node("Div", ["xn", "n2"], ["y"])]
    elif kind == "mish":
        nodes = [h.make_node("Mish", ["x"], ["y"])]
    elif kind == "softplus":
        nodes = [h.make_node("Softplus", ["x"], ["s"]), h.make_node("Tanh", ["s"], ["t"]), h.make_node("Mul", ["x", "t"], ["y"])]
    elif kind == "sig":  # x*tanh(softplus(x)) = x*(1 - 2/( (1+e)^2 + 1 ))
        nodes = [c("c20", 20.0), c("one", 1.0), c("two", 2.0), h.make_node("Clip", ["x", "", "c20"], ["cl"]), h.make_node("Exp", ["cl"], ["e"]),
                 h.make_node("Add", ["e", "one"], ["e1"]), h.make_node("Mul", ["e1", "e1"], ["q"]), h.make_node("Add", ["q", "one"], ["q1"]),
                 h.make_node("Div", ["two", "q1"], ["r"]), h.make_node("Mul", ["x", "r"], ["xr"]), h.make_node("Sub", ["x", "xr"], ["y"])]
    g = h.make_graph(nodes, "g", [X], [Y])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1
for rows in (300, 1000, 3000):
    x = np.random.randn(rows, 64).astype(np.float32) * 3
    res = {}
    for kind in ("exp", "mish", "softplus"):
        s = ort.InferenceSession(model(kind, rows, 64).SerializeToString(), o, providers=["CPUExecutionProvider"])
        y = s.run(None, {"x": x})[0]; res[kind] = y
        best = 1e9
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(200): s.run(None, {"x": x})
            best = min(best, (time.perf_counter() - t) / 200)
        print(rows, kind, f"{best*1e6:.1f} us", float(np.abs(y - res['exp']).max()))
