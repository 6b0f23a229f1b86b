"""Root pytest configuration, loaded for tests/ and notebooks/ alike.

BLAS threads only add contention for this suite's small matrices on a 2-core machine
(a TopTwo2 fit at n = 200 ran 4x slower with threads, a notebook 5x). Set before numpy
loads its BLAS, in this process and in the notebook kernels nbval starts from it; an
explicit OMP_NUM_THREADS / OPENBLAS_NUM_THREADS from the caller wins.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
