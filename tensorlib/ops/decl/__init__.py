"""THE declarations: every tensorlib op, declared once, in one module per op family.

Each entry gives the op's name, its signature (see codegen.py for the little language), its
variants (``function``: ``tensorlib.name(...)``; ``method``: ``Tensor.name(...)``), aliases,
the implementation it dispatches to (a cdef function in tensorlib/_core/*.pxi; default
``_<name>(args in order)``), and its documentation with a short example.

The autograd slots are part of every declaration: ``node`` (the grad_fn's type name, as in
PyTorch), ``view_of`` (the input whose storage a view op's output shares) and ``backward``
(the formula per input, in tensorlib ops); what a node saves is derived from the formulas and
depends on which inputs need grad (mm saves its input only if the weight requires grad).
Nothing else declares an op. ``OPS`` gathers the families in a fixed order (the order of the
generated wrappers).
"""

from . import (copies, creation, elementwise, indexing, linalg, nn, random, reductions, sorting,
               views)

FAMILIES = (views, copies, creation, random, linalg, elementwise, sorting, indexing, reductions,
            nn)
OPS = [decl for family in FAMILIES for decl in family.OPS]
