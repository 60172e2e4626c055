"""Saving and loading, PyTorch's ``torch.save`` / ``torch.load``.

This module will hold ``save`` and ``load`` in PyTorch's zip format (one pickle of the
object graph plus one record per storage, views sharing their storage's record), loaded by
an allow-listed unpickler as ``weights_only=True`` does. Nothing is defined yet.
"""
