"""Rewrites that remove graph breaks: computed with the diagnostics, applied by `fix` and code actions."""

from .base import FixContext, Refusal
from .edits import apply_fixes

__all__ = ["FixContext", "Refusal", "apply_fixes"]
