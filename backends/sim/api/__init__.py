"""The simulator's API functions, one module per API area (the emulator's C sources,
``backends/acl/emulator/src/*.c``, have the same map).

Each module holds one mixin of :class:`~backends.sim.backend.SimBackend` whose methods are the
contract methods of its area, each written in one place with its whole behaviour (argument
checks, extended-API refusals, fault hooks). The mixins share the state and the plumbing of
``SimBackend`` (handle lookups ``_stream`` / ``_event`` / ``_model`` / ``_task``, ``_append``,
``_enqueue``, ``_free_model``, ``_wait_until``); the state objects themselves live in the
modules one level up (``sim/streams.py``, ``sim/model.py``, ``sim/capture.py``, ...):

=================  ===========================================  =====================
module             API functions                                emulator source
=================  ===========================================  =====================
``context``        aclrtSetDevice/GetDevice/GetCurrentContext   core.c
``streams``        stream create/destroy/sync/query             engine.c
``memory``         malloc/free, memcpy/memset (+async)          memory.c
``events``         events, record/wait/reset, value write/wait  events.c
``binary``         binary load/unload, functions, launch        binary.c
``capture``        CaptureBegin/GetInfo/ExchangeMode/End        capture.c
``listing``        GetStreams/GetTasksByStream, task getters    model.c
``update``         TaskSetParams/TaskDisable/Update             model.c
``model``          ExecuteAsync/Destroy                         model.c
``taskgroups``     task groups and task update                  taskgroups.c
``build``          build path, Execute, Abort                   build.c
``cond``           cond handles, AddCondTask, sub-model capture cond.c
``names``          names, ids, DebugJsonPrint, DebugPrint       names.c
``callbacks``      destroy callbacks                            callbacks.c
``attributes``     KernelTaskGetAttribute                       attributes.c
``switch``         ActiveStream/SwitchStream/labels             switch.c
=================  ===========================================  =====================

:mod:`.checks` holds the return codes and argument predicates they share.
"""
