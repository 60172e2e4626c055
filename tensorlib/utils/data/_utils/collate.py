"""``torch.utils.data._utils.collate``'s names (see ``tensorlib.utils.data.collate``)."""
from tensorlib.utils.data.collate import (  # noqa: F401
    collate, collate_tensor_fn, default_collate, default_collate_err_msg_format,
    default_collate_fn_map, default_convert)
