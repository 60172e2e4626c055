"""The op declarations (decl.py) and the generator that turns them into C wrappers (codegen.py)."""
