"""Recompiles a program will meet, read from its source (the GM6xx rules): what is compiled, the
calls that run it, and what changes between them."""

from .kinds import Change
from .program import CallSite, Compiled, Program
from .values import Values

__all__ = ["CallSite", "Change", "Compiled", "Program", "Values"]
