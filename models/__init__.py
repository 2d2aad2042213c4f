"""The shipped model files (package data of ``tabletop.models``)."""
