import numpy as np, onnxruntime as ort, time
from onnx import helper, TensorProto as T
def model(op, opset, axes_input, shape=(976,3,32)):
    X = helper.make_tensor_value_info("x", T.FLOAT, [None, None, 32])
    Y = helper.make_tensor_value_info("y", T.FLOAT, None)
    nodes, inits = [], []
    if axes_input:
        inits.append(helper.make_tensor("ax", T.INT64, [1], [1]))
        nodes.append(helper.make_node(op, ["x", "ax"], ["y"], keepdims=0))
    else:
        nodes.append(helper.make_node(op, ["x"], ["y"], axes=[1], keepdims=0))
    g = helper.make_graph(nodes, "g", [X], [Y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]); m.ir_version = 8
    return m.SerializeToString()
def custom(nodes, inits=()):
    X = helper.make_tensor_value_info("x", T.FLOAT, [None, None, 32])
    Y = helper.make_tensor_value_info("y", T.FLOAT, None)
    g = helper.make_graph(nodes, "g", [X], [Y], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 8
    return m.SerializeToString()
o = ort.SessionOptions(); o.intra_op_num_threads = 1
for K in (3, 8, 23):
    x = np.random.rand(976, K, 32).astype(np.float32)
    def t(b, name):
        s = ort.InferenceSession(b, o, providers=["CPUExecutionProvider"])
        r = s.run(None, {"x": x})[0]
        n=300; a=time.perf_counter()
        for _ in range(n): s.run(None, {"x": x})
        print(f"K={K} {name:30s} {1e6*(time.perf_counter()-a)/n:8.1f} us", np.abs(r - x.sum(1)).max() if "Max" not in name else "")
    t(model("ReduceSum", 13, True), "ReduceSum ax-input op13")
    t(model("ReduceSum", 11, False), "ReduceSum attr op11")
    t(model("ReduceMax", 13, False), "ReduceMax attr op13")
    t(model("ReduceMax", 18, True), "ReduceMax op18")
    # transpose to [K, R, d] then ReduceSum axis 0
    t(custom([helper.make_node("Transpose", ["x"], ["t"], perm=[1,0,2]), helper.make_node("ReduceSum", ["t","ax"], ["y"], keepdims=0)], [helper.make_tensor("ax", T.INT64, [1], [0])]), "Transpose+ReduceSum ax0")
    # ReduceSum keepdims=1 then reshape?
    t(custom([helper.make_node("ReduceSum", ["x","ax"], ["y"], keepdims=1)], [helper.make_tensor("ax", T.INT64, [1], [1])]), "ReduceSum keepdims1")
    # Einsum
    t(custom([helper.make_node("Einsum", ["x"], ["y"], equation="rkd->rd")]), "Einsum")
    # MatMul with ones: transpose x to [R, d, K] @ ones[K,1]
    t(custom([helper.make_node("Transpose", ["x"], ["t"], perm=[0,2,1]), helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Slice", ["s","one","two"], ["k"]),
              helper.make_node("ConstantOfShape", ["k"], ["o1"], value=helper.make_tensor("v", T.FLOAT, [1], [1.0])),
              helper.make_node("MatMul", ["t","o1"], ["y"])], [helper.make_tensor("one", T.INT64, [1], [1]), helper.make_tensor("two", T.INT64, [1], [2])]), "Transpose+MatMul(ones)")
