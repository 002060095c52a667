"""Does transformers still expose its TensorFlow classes?

Code written for transformers 4.x (and many tutorials) does
``from transformers import TFAutoModel``. transformers 5.0 removed TensorFlow and
Flax support, so that import fails. Between a lock of mid-2025 and one of today
dozens of packages moved; ``nox -s culprit`` finds which one did this, and the
release where it happened.

Exit 0: the class imports (good). Exit 1: it does not (bad). Exit 125: transformers
itself does not import, which is another problem than the one looked for
(untestable).
"""

import sys

try:
    import transformers
except Exception as err:  # a mix that does not even import says nothing about TF
    print(f"transformers does not import: {err!r}")
    sys.exit(125)

try:
    from transformers import TFAutoModel  # noqa: F401
except ImportError as err:
    print(f"transformers {transformers.__version__}: {err}")
    sys.exit(1)
print(f"transformers {transformers.__version__}: TFAutoModel imports")
