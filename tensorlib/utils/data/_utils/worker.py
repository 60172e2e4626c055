"""``torch.utils.data._utils.worker``'s public names (see ``tensorlib.utils.data._worker``)."""
from tensorlib.utils.data._worker import WorkerInfo, get_worker_info  # noqa: F401
