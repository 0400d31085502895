from .rotary import apply_rotary

__all__ = ["apply_rotary"]
