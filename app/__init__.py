"""NestScope: IBM Z CPU MF analyzer for SMF 113 and z/VM MONWRITE data."""

__version__ = "0.1.0"
