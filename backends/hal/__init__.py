"""The virtual Ascend device: ``libmdlri_hal.so`` (also named ``libascend_hal.so``), the driver
library the CANN runtime loads, over a software task scheduler that runs the STARS SQEs.

See README.md in this folder; :mod:`backends.hal.build` compiles it on demand into a cache
directory. It is written independently of the simulator and of the host ABI emulator.
"""
