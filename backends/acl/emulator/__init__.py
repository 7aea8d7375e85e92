"""The host ABI emulator: a C shared library exporting the CANN runtime's Model RI ABI.

See README.md in this folder; :mod:`backends.acl.emulator.build` compiles it (and the host
kernels of ``kernel/host/``) on demand into a cache directory.
"""
