"""onnxruntime time of three ONNX forms of Mish on 20,000 x 64 floats (one intra-op thread):
the ONNX Mish operator, torch's export (Softplus, Tanh, Mul), and the exponential form the
package exports, x n / (n + 2) with n = e^x (e^x + 2). Prints ms per run and the max error.

    OMP_NUM_THREADS=1 python benchmarks/mish_forms.py
"""
import numpy as np, onnxruntime as ort, time
from onnx import helper, TensorProto
def model(kind):
    X = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n', 64])
    Y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['n', 64])
    if kind=='mish':
        nodes=[helper.make_node('Mish',['x'],['y'])]
    elif kind=='three':
        nodes=[helper.make_node('Softplus',['x'],['s']),helper.make_node('Tanh',['s'],['t']),helper.make_node('Mul',['x','t'],['y'])]
    else: # exp form: n = e^x (e^x+2); y = x * n/(n+2); clamp x at 20
        two=helper.make_tensor('two',TensorProto.FLOAT,[],[2.0]); cap=helper.make_tensor('cap',TensorProto.FLOAT,[],[20.0])
        nodes=[helper.make_node('Constant',[],['c2'],value=two),helper.make_node('Constant',[],['c20'],value=cap),
        helper.make_node('Min',['x','c20'],['xc']),helper.make_node('Exp',['xc'],['e']),helper.make_node('Add',['e','c2'],['e2']),
        helper.make_node('Mul',['e','e2'],['nn']),helper.make_node('Add',['nn','c2'],['d']),helper.make_node('Div',['nn','d'],['r']),helper.make_node('Mul',['x','r'],['y'])]
    g=helper.make_graph(nodes,'g',[X],[Y]); m=helper.make_model(g,opset_imports=[helper.make_opsetid('',18)]); m.ir_version=9
    so=ort.SessionOptions(); so.intra_op_num_threads=1
    return ort.InferenceSession(m.SerializeToString(),so,providers=['CPUExecutionProvider'])
x=np.random.randn(20000,64).astype(np.float32)*3
ref=x*np.tanh(np.log1p(np.exp(x)))
for k in ['mish','three','exp']:
    try:
        s=model(k); y=s.run(None,{'x':x})[0]; t=time.perf_counter()
        for _ in range(50): s.run(None,{'x':x})
        print(k, (time.perf_counter()-t)/50*1e3,'ms', np.abs(y-ref).max())
    except Exception as e: print(k,'ERR',str(e)[:200])
