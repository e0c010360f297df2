"""cupyx.scipy.sparse for the NumPy stand-in: SciPy's CSR."""

import numpy as np
import scipy.sparse as _sp


def csr_matrix(arg, shape=None):
    data, indices, indptr = (np.asarray(a).view(np.ndarray) for a in arg)
    return _sp.csr_matrix((data, indices, indptr), shape=shape)
