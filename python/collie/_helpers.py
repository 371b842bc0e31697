"""Python helpers the C extension calls: datatypes, new arrays, bfloat16 arrays (which the
buffer protocol refuses), user-defined operations."""
import numpy as np

from ._errors import CollieError

# collie.h's datatype codes.
_CODES = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6,
          "uint32": 7, "uint64": 8, "float16": 9, "bfloat16": 10, "float32": 11, "float64": 12}
_BFLOAT16 = 10
_DTYPES = {}


def numpy_dtype(code):
    """The numpy dtype of a collie datatype code (bfloat16 needs ml_dtypes)."""
    dt = _DTYPES.get(code)
    if dt is None:
        name = next(n for n, c in _CODES.items() if c == code)
        if name == "bfloat16":
            try:
                import ml_dtypes
            except ImportError as e:
                raise CollieError("bfloat16 needs the ml_dtypes package (pip install "
                                  "ml_dtypes)", -5) from e
            dt = np.dtype(ml_dtypes.bfloat16)
        else:
            dt = np.dtype(name)
        _DTYPES[code] = dt
    return dt


def _empty(shape, code, fortran):
    return np.empty(shape, dtype=numpy_dtype(code), order="F" if fortran else "C")


def _adapt(obj):
    """What the buffer protocol refused: (object with a buffer, datatype code), or None.
    numpy cannot export its bfloat16 (ml_dtypes) arrays as buffers: their bits as uint16.
    A bfloat16 numpy scalar is read through a read-only copy, as other numpy scalars'
    read-only buffers are (so it works as x and is refused as out or by bcast)."""
    if isinstance(obj, np.ndarray) and obj.dtype.name == "bfloat16":
        return obj.view(np.uint16), _BFLOAT16
    if isinstance(obj, np.generic) and obj.dtype.name == "bfloat16":
        bits = np.array(obj).view(np.uint16)
        bits.flags.writeable = False
        return bits, _BFLOAT16
    return None


def _apply(fn, a, b, code):
    """inout = fn(in, inout) for a user-defined operation (a, b: memoryviews)."""
    dt = numpy_dtype(code)
    x = np.frombuffer(a, dtype=dt)
    y = np.frombuffer(b, dtype=dt)
    r = fn(x, y)
    if r is not y:
        y[...] = r


class Op:
    """A user-defined reduction: fn(a, b) -> a ∘ b elementwise on numpy arrays, where a
    holds lower ranks' contributions.  commutative=True lets collie use algorithms that
    reorder operands; by default the result is x0 ∘ x1 ∘ ... ∘ x(P-1) exactly."""

    def __init__(self, fn, commutative=False):
        if not callable(fn):
            raise CollieError("Op: fn must be callable", -1)
        self.fn = fn
        self.commutative = bool(commutative)

    def __call__(self, a, b):
        return self.fn(a, b)


def _user_op(op):
    if isinstance(op, Op):
        return op.fn, 1 if op.commutative else 0
    return op, 0


def install(ext):
    ext._set_helpers({"CollieError": CollieError, "adapt": _adapt, "empty": _empty,
                      "apply": _apply,
                      "user_op": _user_op})
