"""tabletop: the command line and the glue between engine, vision, device and panel."""

__version__ = "0.1.0"
