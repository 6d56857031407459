"""What every corpus program entry carries."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Program:
    fn: Callable[..., Any]
    sample: Callable[[Any], tuple]
    wrt: tuple[int, ...] = (0,)
    loop_free: bool = False  # no for/while in the user's code (second-order candidates)
    autograd: bool = True  # autograd can run it as written (math.* on boxes cannot)
    refused: str = ""  # why the compiler refuses it today (recorded as xfail strict)

    @property
    def name(self) -> str:
        return self.fn.__name__
