"""``Closing``: what every object holding an fd does with ``with`` and at
collection (``close()``, which the class provides and makes idempotent)."""

from __future__ import annotations

from typing import Self

__all__ = ["Closing"]


class Closing:
    """Mixin: ``with`` closes on exit; a dropped object closes when
    collected (never raising from the finalizer)."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # a finalizer must not raise; close() released what it could
            pass
