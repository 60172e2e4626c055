"""Type stubs of tensorlib.return_types: the named tuples of the ops that give several
tensors."""
from tensorlib import Tensor

__all__ = ['kthvalue', 'max', 'median', 'min', 'mode', 'nanmedian', 'sort', 'topk']


class kthvalue(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> kthvalue: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class max(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> max: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class median(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> median: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class min(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> min: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class mode(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> mode: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class nanmedian(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> nanmedian: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class sort(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> sort: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...

class topk(tuple[Tensor, Tensor]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    def __new__(
        cls, sequence: tuple[Tensor, Tensor] | list[Tensor], dict: object = None,
    ) -> topk: ...
    @property
    def values(self) -> Tensor: ...
    @property
    def indices(self) -> Tensor: ...
