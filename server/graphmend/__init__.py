"""graphmend: find TorchDynamo graph breaks in PyTorch source before it runs."""

__version__ = "0.1.0"
