"""The op declarations (decl/, one module per op family) and the generator that turns them into
C wrappers and elementwise kernels (codegen.py)."""
