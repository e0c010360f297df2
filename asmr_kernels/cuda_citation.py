"""Citation token masks applied to logits on a CUDA device (the masks are
filled on the CPU: :mod:`asmr_kernels.cpu_citation`)."""

from __future__ import annotations

import numpy as np

from .cuda_frameworks import classify, frame
from .cuda_runtime import FLOAT16, FLOAT32, native, require


def apply_token_bitmask(logits, bitmask, indices=None) -> None:
    """``logits[r, t] = -inf`` where token t's bit is clear in ``bitmask[indices[r]]``, in place on the GPU.

    logits: float32 or float16 device array ``(batch, vocab)`` (or 1-D for one
    row), rows may be strided; bitmask: int32 ``(rows, words)`` in the layout of
    ``asmr.decoding`` (bit ``t & 31`` of word ``t >> 5``), on the device or on
    the host (then copied); indices: one bitmask row per logits row (default:
    row r for row r). Tokens past ``32 * words`` are masked.
    """
    require()
    fr = frame(logits, bitmask, indices)
    with fr.scope():
        if classify(logits) is None:
            raise ValueError("logits must be a device array: the mask is applied in place")
        lg = fr.adopt("logits", logits)
        shape = fr.fw.shape(lg)
        if len(shape) == 1:
            lg = fr.fw.reshape(lg, (1, shape[0]))
            shape = (1, shape[0])
        if len(shape) != 2:
            raise ValueError(f"logits must be 1-D or 2-D, got shape {shape}")
        dt = fr.fw.dtype(lg)
        if dt.name not in ("float32", "float16"):
            raise ValueError(f"logits must be float32 or float16 on the GPU, got {dt.name}")
        strides = fr.fw.strides(lg) if fr.fw.byte_strides_ok(lg) else (0, 0)
        if strides[1] != 1 or (shape[0] > 1 and strides[0] < shape[1]):
            raise ValueError("logits rows must be contiguous (the mask is applied in place)")
        ld = int(strides[0]) if shape[0] > 1 else shape[1]
        mask = fr.adopt("bitmask", bitmask)
        mshape = fr.fw.shape(mask)
        if len(mshape) == 1:
            mask = fr.fw.reshape(mask, (1, mshape[0]))
            mshape = (1, mshape[0])
        if len(mshape) != 2 or fr.fw.dtype(mask).name != "int32":
            raise ValueError(f"bitmask must be a 1-D or 2-D int32 array, got {fr.fw.dtype(mask).name} {mshape}")
        mask = fr.fw.contiguous(mask)
        rows_ptr = 0
        if indices is None:
            if mshape[0] != shape[0]:
                raise ValueError(f"bitmask has {mshape[0]} rows for {shape[0]} logits rows; pass indices")
        else:
            idx = np.asarray(indices, dtype=np.int64)
            if idx.shape != (shape[0],) or (idx.size and (idx.min() < 0 or idx.max() >= mshape[0])):
                raise ValueError(f"indices must give one bitmask row in [0, {mshape[0]}) per logits row ({shape[0]})")
            rows = fr.fw.upload(idx.astype(np.int32))
            rows_ptr = fr.ptr(rows)
        rtype = FLOAT16 if dt.name == "float16" else FLOAT32
        native.apply_token_bitmask(fr.device, rtype, shape[0], shape[1], fr.ptr(lg), ld, fr.ptr(mask), mshape[1],
                                   rows_ptr, fr.stream)
