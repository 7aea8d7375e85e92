/* emu.h -- internal declarations shared by the emulator's translation units. */
#ifndef MDLRI_EMU_H
#define MDLRI_EMU_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mdlri_acl_rt.h"

#define EMU_VERSION "mdlri-acl-emu 0.1.0 (ACL ABI 1.17.0 subset, host emulator)"

/* type magics of every user-visible handle (abi.md §6.4); zeroed on destroy */
#define MAGIC_STRM 0x5354524Du
#define MAGIC_EVNT 0x45564E54u
#define MAGIC_MODL 0x4D4F444Cu
#define MAGIC_FUNC 0x46554E43u
#define MAGIC_BINH 0x42494E48u
#define MAGIC_TASK 0x5441534Bu

/* internal operation kinds (a superset of aclmdlRITaskType) */
enum {
    OP_NOP = 0,
    OP_KERNEL,
    OP_EV_RECORD,
    OP_EV_WAIT,
    OP_EV_RESET,
    OP_VAL_WRITE,
    OP_VAL_WAIT,
    OP_MEMCPY,
    OP_MEMSET,
    OP_MODEL, /* a whole model execution, on a user stream only */
    OP_COND,  /* a conditional task (cond.c): runs sub-models */
    OP_TG_SET, /* a task-group update item (taskgroups.c): replaces one grouped task */
    /* external-event placeholders (aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag
     * with EXTERNAL): GetType DEFAULT, GetParams EVENT_RECORD / EVENT_WAIT (TYPE-03/04); they
     * act on the user's event itself at each replay */
    OP_EV_RECORD_EXT,
    OP_EV_WAIT_EXT,
    /* control flow of a built model's execution (switch.c), stepped by emu_model_step */
    OP_END,          /* aclmdlRIEndTask: the execution ends */
    OP_ACTIVE,       /* aclrtActiveStream: start stream2 */
    OP_SWITCH,       /* aclrtSwitchStream: *addr <flag> *addr2 -> start stream2, stop here */
    OP_LABEL,        /* aclrtSetLabel marker (does nothing) */
    OP_LABEL_SWITCH, /* aclrtSwitchLabelByIndex: *(uint32*)addr selects a label of llist */
};

/* model status (semantics.md §0.3) */
enum { M_CAPTURING = 1, M_READY, M_UPDATING, M_FAULT, M_DEAD };

/* per-task pending update flag */
enum { UPD_NONE = 0, UPD_SET, UPD_DISABLE };

/* allocation kinds */
enum { A_NONE = 0, A_DEV, A_HOST, A_INTERNAL };

typedef struct emu_func emu_func;
typedef struct emu_bin emu_bin;
typedef struct emu_event emu_event;
typedef struct emu_stream emu_stream;
typedef struct emu_model emu_model;
typedef struct emu_task emu_task;

struct emu_cond;
struct emu_taskgrp;

/* launch attributes of a kernel (attributes.c); has_* = set by the launch cfg */
typedef struct {
    uint8_t has_schem, schem_mode, has_dump, data_dump, prefetch, profiling;
    uint32_t dyn_ubuf, engine_type, blockdim_offset;
    int timeout_kind; /* 0 default, 1 TIMEOUT (s), 2 TIMEOUT_US */
    uint64_t timeout_us;
} emu_attrs;

typedef void (*emu_kernel_fn)(void *args, size_t args_size, uint32_t block_idx,
                              uint32_t num_blocks);

/* One operation: what a stream work item or a model task does. */
typedef struct {
    int op;
    /* OP_KERNEL */
    emu_func *func;
    void *args; /* device address of the argument block */
    size_t args_size;
    uint32_t num_blocks;
    void *opinfo; /* emulator-owned copy of the shape-info blob */
    size_t opinfo_size;
    /* OP_MEMCPY / OP_MEMSET */
    void *dst;
    const void *src;
    size_t count;
    int byte;
    /* OP_EV_* */
    emu_event *event;
    /* OP_VAL_* */
    void *addr;
    uint64_t value;
    uint32_t flag;
    /* the rest of the Model RI API (task groups, build, cond, names, ...) */
    emu_attrs attrs;        /* OP_KERNEL launch attributes */
    struct emu_cond *cond;  /* OP_COND */
    emu_task *target;       /* OP_TG_SET: the grouped task this kernel replaces */
    /* switch.c: OP_ACTIVE / OP_SWITCH target stream; OP_SWITCH right value, condition
     * (flag) and width (count: 4 or 8); OP_LABEL_SWITCH list (value = maxValue) */
    emu_stream *stream2;
    void *addr2;
    struct emu_labellist *llist;
} emu_op;

struct emu_bin {
    uint32_t magic;
    void *dl;
    emu_func **funcs;
    size_t nfuncs, capfuncs;
};

/* optional readiness predicate of a waiting kernel: `int NAME__ready(const void *args,
 * size_t args_size)` (kernel/host/mdlri_host_kernel.h); 0 = the kernel is still waiting */
typedef int (*emu_ready_fn)(const void *args, size_t args_size);
/* optional fault predicate: `int NAME__fault(const void *args, size_t args_size)`; non-zero =
 * the launch raises an AI Core exception instead of running */
typedef int (*emu_fault_fn)(const void *args, size_t args_size);

/* A kernel's parameter layout: one {offset, size} per parameter, in parameter order; the
 * library's `const NAME__params` table has the same layout (kernel/host/mdlri_host_kernel.h). */
#define EMU_MAX_PARAMS 8
/* the largest argument struct a host kernel may have (its own layout) */
#define EMU_KERNEL_ARGS_MAX 256
typedef struct {
    uint32_t offset, size;
} emu_param;
typedef struct {
    uint32_t count;
    emu_param params[EMU_MAX_PARAMS];
} emu_param_table;

struct emu_func {
    uint32_t magic;
    emu_bin *bin;
    emu_kernel_fn fn;
    emu_ready_fn ready; /* NULL: always ready */
    emu_fault_fn fault; /* NULL: never faults */
    char name[128];
    /* parameters (binary.c): `own` is the kernel's argument struct (NAME__params), `reported`
     * what aclrtFunctionGetParamCount/Info answer and the layout the launched argument bytes
     * are read in (MDLRI_EMU_PARAM_LAYOUT); has_params 0: the library has no table (107000) */
    int has_params;
    emu_param_table own, reported;
    size_t own_size;      /* sizeof the kernel's struct (the end of its last member, to 8) */
    size_t reported_size; /* the end of the last reported parameter */
    int relaid;           /* reported != own: each parameter is moved before the kernel runs */
};

/* binary.c: the argument bytes of kernel op `o` in the kernel's own layout: `o->args` itself,
 * or a copy in `buf` (EMU_KERNEL_ARGS_MAX bytes) when the launch layout differs; *size is
 * the size to pass (0 when the launched bytes are too short for the reported layout). */
const void *emu_kernel_args(const emu_op *o, void *buf, size_t *size);

/* a waiting kernel's start on the device (for its launch timeout), per work item */
typedef struct {
    const emu_op *op;
    struct timespec t0;
} emu_wait;

/* Stream flags that cannot be captured (CAP-18): DEVICE_USE_ONLY is the runtime's
 * CP_PROCESS_USE, CPU_SCHEDULE its CPU_SCHEDULE (the AICPU bit). */
#define CAPTURE_FORBIDDEN_FLAGS (ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_CPU_SCHEDULE)

struct emu_event {
    uint32_t magic;
    uint32_t flags;
    uint32_t id;     /* event id (DebugJsonPrint task names) */
    int new_mode;    /* created by aclrtCreateEventExWithFlag (or EXTERNAL): capturable */
    int ex;          /* created by aclrtCreateEventExWithFlag: the runtime's IsNewMode */
    int rt_default;  /* the runtime flag is RT_EVENT_DEFAULT (0xE): aclrtCreateEvent */
    int internal;    /* a model's internal capture event */
    int set;         /* flag semantics: record sets, reset clears, wait blocks until set */
    /* user event bound to an open capture */
    emu_model *cap_model;
    emu_event *cap_internal;
    /* internal event */
    emu_model *owner;
    int recorded; /* recorded inside the capture */
    /* aclrtSynchronizeEvent: the stream and ticket of the last record issued outside capture */
    emu_stream *rec_stream;
    uint64_t rec_ticket;
    int in_model; /* recorded on a stream bound to a built model (EVT sync: 107000) */
};

/* Whether an event has a wait task: a SYNC, DDSYNC (0x4), EXTERNAL or IPC bit (XS-09,
 * core/inc/event/event.hpp:133-136). Flag 0, which the runtime refuses at creation
 * (api_error.cc:1653-1672), counts as SYNC here, as it always has. */
static inline int emu_event_has_wait_task(const emu_event *e) {
    return !e->flags || (e->flags & (ACL_EVENT_SYNC | 0x4u | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC));
}

typedef struct emu_item {
    struct emu_item *next;
    emu_op o;
    void *owned;     /* buffer released when the item completes (launch args copy) */
    emu_model *model; /* OP_MODEL */
    size_t *pcs;     /* OP_MODEL: per internal stream program counter */
    int started;
    void **frames;   /* OP_MODEL: per internal stream conditional-task frame (cond.c) */
    aclError err;    /* the first device-side error of this item (a kernel's timeout: 107020) */
    emu_wait *waits; /* waiting kernels of this item and when the device started them */
    size_t nwaits, capwaits;
} emu_item;

struct emu_stream {
    uint32_t magic;
    uint32_t flags;
    uint32_t id;     /* stream id (DebugJsonPrint "Stream Id") */
    int is_default;
    /* user stream: work queue */
    emu_item *head, *tail;
    uint64_t enq, done;
    /* user stream taking part in a capture */
    emu_model *cap_model;
    emu_stream *cap_is; /* the model's internal stream that records this stream's work */
    /* model internal stream */
    emu_model *owner;
    emu_stream *user;
    emu_task **tasks;
    size_t ntasks, captasks;
    aclError dev_err; /* a device-side error the next synchronization reports (107020) */
    /* open task group (capture), group being updated, BindStream flag */
    struct emu_taskgrp *grp, *upd;
    uint32_t bind_flag;
};

struct emu_task {
    uint32_t magic;
    emu_model *m;
    emu_stream *is;
    uint32_t seq;
    emu_op host; /* host-side record: what GetType/GetParams report (changed by SetParams) */
    emu_op dev;  /* device-side record: what executes (changed only by Update) */
    int pending;
    struct emu_taskgrp *grp; /* the task group holding this kernel task, if any */
};

struct emu_model {
    uint32_t magic;
    int status;
    int invalidated; /* model-level invalidation (XS-07): CaptureEnd fails with 507903 */
    int mode;
    uint64_t begin_tid;
    emu_stream *origin;
    emu_stream **streams; /* internal streams in attachment order (listed newest first) */
    size_t nstreams, capstreams;
    emu_event **bound; /* user events bound to the open capture, in binding order */
    emu_event **ievents; /* their internal events (same index) */
    size_t nbound, capbound, capievents;
    emu_event **allievents; /* every internal event ever created (freed with the model) */
    size_t nalli, capalli;
    uint32_t next_seq;
    int running; /* executions enqueued and not yet finished */
    void **owned; /* internal device buffers (args copies, opinfo) released at destroy */
    size_t nowned, capowned;
    /* the rest of the Model RI API (task groups, build, cond, names, ...) */
    int built, end_task, build_ended, aborting; /* explicit build path (build.c) */
    emu_model *parent; /* sub-model of a conditional task (cond.c) */
    int sub_captured;
    emu_model **subs;
    size_t nsubs, capsubs;
    struct emu_cond **conds;
    size_t nconds, capconds;
    struct emu_taskgrp **grps;
    size_t ngrps, capgrps;
    char *name;  /* names.c */
    uint32_t id;
    struct emu_cb *cbs; /* callbacks.c, sorted by function pointer */
    size_t ncbs, capcbs;
};

/* globals (core.c) */
extern pthread_mutex_t g_lock;
extern pthread_cond_t g_engine_cv; /* wakes the device thread */
extern pthread_cond_t g_done_cv;   /* broadcast whenever the device made progress */
extern emu_stream *g_default_stream;
extern uint64_t g_live_models, g_live_streams, g_live_events, g_live_allocs;
/* FLD resource limits (MDLRI_EMU_STREAM_LIMIT, MDLRI_EMU_MODEL_STREAM_LIMIT; 0 = off) and the
 * live capture-internal streams they count */
extern uint32_t g_stream_limit, g_model_stream_limit;
extern uint64_t g_live_internal_streams;
extern emu_model **g_models; /* models whose capture is open (for the capture-mode rules) */
extern size_t g_nmodels, g_capmodels;

extern _Thread_local int tl_device;
extern _Thread_local int tl_xmode;

/* core.c */
aclError emu_err(aclError code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void emu_ensure_started(void);
uint64_t emu_tid(void);
int emu_valid(const void *h, uint32_t magic);
void *emu_grow(void *arr, size_t *cap, size_t need, size_t elem);
#define EMU_PUSH(arr, n, cap, v)                                                            \
    do {                                                                                    \
        (arr) = emu_grow((arr), &(cap), (n) + 1, sizeof(*(arr)));                           \
        (arr)[(n)++] = (v);                                                                 \
    } while (0)
void emu_abs_deadline(struct timespec *ts, int64_t ms);
uint32_t emu_new_stream_id(void);
uint32_t emu_new_event_id(void);
void emu_model_unregister_capture(emu_model *m);
/* FLD-06/07 (R1-R3): 1 when one more stream would exceed the stream limit */
int emu_stream_pool_full(void);

#define LOCK() pthread_mutex_lock(&g_lock)
#define UNLOCK() pthread_mutex_unlock(&g_lock)
#define NEED_CTX()                                                                          \
    do {                                                                                    \
        if (tl_device < 0)                                                                  \
            return emu_err(ACL_ERROR_RT_CONTEXT_NULL,                                       \
                           "%s: the calling thread has no current context "                 \
                           "(call aclrtSetDevice first)", __func__);                        \
    } while (0)

/* memory.c */
int emu_mem_class(const void *p, size_t n); /* A_DEV (incl. internal), A_HOST, A_NONE */
void *emu_internal_alloc(size_t n);
void emu_internal_free(void *p);
int emu_unsafe_blocked(void); /* capture-mode rules (MODE-02..11) for the calling thread */

/* engine.c */
aclError emu_stream_get(aclrtStream h, emu_stream **out, int allow_null, const char *what);
void emu_enqueue(emu_stream *s, emu_item *it);
void emu_op_run_immediate(const emu_op *o); /* memcpy/memset/kernel/value write */
aclError emu_wait_ticket(emu_stream *s, uint64_t ticket, int64_t timeout_ms);
/* like emu_wait_ticket, but a device-side error of the stream ends the wait and is returned
 * (once: it is cleared) */
aclError emu_wait_sync(emu_stream *s, uint64_t ticket, int64_t timeout_ms);
int emu_device_failed(void); /* the item the device is running has failed (engine.c) */
void emu_item_free(emu_item *it);

/* capture.c */
emu_task *emu_capture_append(emu_stream *user, const emu_op *o);
int emu_is_capturing(const emu_stream *s);
emu_stream *emu_internal_stream_new(emu_model *m, emu_stream *user);
void emu_model_invalidate(emu_model *m);
aclError emu_capture_event_op(emu_stream *s, emu_event *e, int op);
int emu_leaked_thread_mode(uint64_t tid); /* fault wrong-thread-end-leaks-mode; 3 = none */

/* model.c */
void emu_model_kill(emu_model *m);
int emu_op_task_type(int op);

/* faults.c: injected bugs for the kill matrix, from MDLRI_EMU_FAULTS at load */
enum {
    F_CRASH_QUERY = 0,
    F_HANG_QUERY_SYNC,
    F_TIMEOUT_IGNORED,
    F_EXECUTE_NULL_MODEL_107000,
    F_EXECUTE_WHILE_UPDATING,
    F_GETSTREAMS_ORIGIN_FIRST,
    F_NO_107039,
    F_FAULT_NOT_STICKY,
    F_SETPARAMS_WITHOUT_UPDATE,
    F_WRONG_THREAD_END_LEAKS_MODE,
    F_WHOLE_KERNEL_PER_BLOCK,
    F_COUNT
};
int emu_fault(int f);


/* ---- the rest of the Model RI API -------------------------------------------------------- */
#define MAGIC_TGRP 0x54475250u
#define MAGIC_COND 0x434F4E44u

struct emu_taskgrp {
    uint32_t magic;
    emu_model *m;
    emu_task **tasks; /* the grouped kernel tasks, in issue order */
    size_t n, cap;
    aclError err;        /* recorded error (TG-04/TG-05): GrpEnd returns it */
    emu_stream *updating; /* stream in update mode on this group (TG-12) */
    size_t upd_pos;       /* next task an update launch replaces */
};

struct emu_cond {
    uint32_t magic;
    emu_model *m;
    uint32_t defval, flag;
    uint64_t *ptr; /* 8 bytes of internal device memory, owned by the model */
    int used;      /* AddCondTask consumed it */
    uint32_t type, size;
    emu_model **subs;
};

struct emu_cb {
    aclrtCallback fn;
    void *ud;
};

/* taskgroups.c */
aclError emu_admit(emu_stream *s, int op); /* group / update-mode rules for an issued task */
void emu_tg_on_append(emu_stream *user, emu_task *t);
int emu_tg_enqueue(emu_stream *s, emu_item *it); /* update mode: item -> OP_TG_SET */
void emu_tg_apply(const emu_op *o);                /* device thread: run an OP_TG_SET */
/* build.c: bound streams record, update-mode streams re-issue; 1 = the item was consumed */
int emu_enqueue_hook(emu_stream *s, emu_item *it);
/* cond.c */
int emu_model_step(emu_model *m, size_t **pcs, void ***frames, int *progress, int *polling);
void emu_cond_on_execute(emu_model *m);
aclError emu_capture_end_check(emu_model *m); /* 107045 / 107033 before the other checks */
/* build.c */
void emu_ext_kill(emu_model *m); /* called first by emu_model_kill */
/* switch.c: one control-flow task of a built model's execution (cond.c calls it); acts on
 * the execution's program counters and activation flags; 1 = done (pc already moved) */
int emu_flow_step(emu_model *m, size_t *pcs, size_t i, const emu_op *o, int *again);

/* callbacks.c */
void emu_callbacks_take(emu_model *m); /* moved to this thread's pending list */
void emu_callbacks_flush(void);        /* run them (caller does NOT hold g_lock) */
/* attributes.c */
aclError emu_cfg_parse(const aclrtLaunchKernelCfg *cfg, emu_attrs *out, const char *fn);
aclError emu_launch_cfg_check(const aclrtLaunchKernelCfg *cfg, const emu_attrs *a,
                              const char *fn);
/* engine.c */
int emu_run_op(const emu_op *o, int *polling);

#endif
